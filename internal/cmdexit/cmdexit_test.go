package cmdexit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
)

// The credential package's codes are the shared ones, so pdpp-mcp, the
// probe and the budget command exit alike on the same credential problem.
func TestCredentialCodesAgree(t *testing.T) {
	if credential.ExitUsage != Usage || credential.ExitNoPerm != NoPerm || credential.ExitConfig != Config {
		t.Errorf("credential exits %d %d %d, cmdexit %d %d %d", credential.ExitUsage, credential.ExitNoPerm, credential.ExitConfig, Usage, NoPerm, Config)
	}
}

func TestRun(t *testing.T) {
	for _, tt := range []struct {
		name           string
		args           []string
		action         error
		code           int
		stdout, stderr string
	}{
		{"ok", nil, nil, OK, "", ""},
		{"plain error is a failure", nil, errors.New("disk\nfull"), Failure, "", "x: disk full\n"},
		{"coded error keeps its code", nil, fmt.Errorf("wrapped: %w", &credential.Error{Code: credential.CodeOwnerRefused, Message: "owner"}), NoPerm, "", "x: wrapped: owner\n"},
		{"silent code", nil, &Error{Code: 3}, 3, "", ""},
		{"usage", nil, Usagef("x", "bad %s", "thing"), Usage, "", "x: bad thing (see x --help)\n"},
		{"flag error", []string{"--nope"}, nil, Usage, "", "x: flag provided but not defined: -nope (see x --help)\n"},
		{"version on stdout", []string{"--version"}, nil, OK, "x version 1.0\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			app := &cli.App{Name: "x", Version: "1.0", Action: func(*cli.Context) error { return tt.action }}
			Configure(app, &stdout, &stderr)
			code := Run(context.Background(), app, append([]string{"x"}, tt.args...), &stderr, nil)
			if code != tt.code || stdout.String() != tt.stdout || stderr.String() != tt.stderr {
				t.Errorf("code %d stdout %q stderr %q; want %d %q %q", code, stdout.String(), stderr.String(), tt.code, tt.stdout, tt.stderr)
			}
		})
	}
}

func TestHelpOnStdout(t *testing.T) {
	var stdout, stderr bytes.Buffer
	app := &cli.App{Name: "x", Usage: "does x", Action: func(*cli.Context) error { return nil }}
	Configure(app, &stdout, &stderr)
	if code := Run(context.Background(), app, []string{"x", "--help"}, &stderr, nil); code != OK || !bytes.Contains(stdout.Bytes(), []byte("does x")) || stderr.Len() > 0 {
		t.Errorf("code %d stdout %q stderr %q", code, stdout.String(), stderr.String())
	}
}

// TestHelpWord: a lone "help" is a request for the help, which is what a
// person typing it wants; any other stray word is still a usage error.
func TestHelpWord(t *testing.T) {
	for _, tt := range []struct {
		arg  string
		code int
	}{{"help", OK}, {"helpme", Usage}} {
		var stdout, stderr bytes.Buffer
		app := &cli.App{Name: "x", Usage: "does x", Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return Usagef("x", "unexpected argument %q", c.Args().First())
			}
			return nil
		}}
		Configure(app, &stdout, &stderr)
		code := Run(context.Background(), app, []string{"x", tt.arg}, &stderr, nil)
		if code != tt.code || (code == OK) != bytes.Contains(stdout.Bytes(), []byte("does x")) {
			t.Errorf("x %s: code %d stdout %q stderr %q", tt.arg, code, stdout.String(), stderr.String())
		}
	}
}

func TestRedact(t *testing.T) {
	var stderr bytes.Buffer
	app := &cli.App{Name: "x", Action: func(*cli.Context) error { return errors.New("token s3cret leaked") }}
	Configure(app, &stderr, &stderr)
	Run(context.Background(), app, []string{"x"}, &stderr, func(s string) string { return strings.ReplaceAll(s, "s3cret", "[redacted]") })
	if stderr.String() != "x: token [redacted] leaked\n" {
		t.Errorf("stderr %q", stderr.String())
	}
}
