package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pdpp-mcp/pdpp-mcp/internal/cmdexit"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

// TestStartLinesFit: the probe's --help and what it says on stderr when it
// starts fit 80 columns (a line that is one long word, a path, may not).
func TestStartLinesFit(t *testing.T) {
	for _, tt := range []struct {
		name string
		args func(t *testing.T) []string
		help bool   // the output is the help on stdout; else stderr
		want string // a line that must be there
	}{
		{"help", func(*testing.T) []string { return []string{"--help"} }, true, "OPTIONS:"},
		{"help word", func(*testing.T) []string { return []string{"help"} }, true, "OPTIONS:"},
		{"demo", func(*testing.T) []string { return []string{"--demo", "--call", "schema"} }, false, ""},
		{"provider", func(t *testing.T) []string {
			srv := pdpptest.New(t, pdpptest.Options{})
			root := t.TempDir()
			c, err := credential.Open(root, srv.URL())
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(c.File), 0o700); err != nil {
				t.Fatal(err)
			}
			body := `{"provider_url":"` + c.ProviderURL + `","credential":{"access_token":"` + srv.Token(pdpptest.TokenClient) + `","token_type":"Bearer"}}`
			if err := os.WriteFile(c.File, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			return []string{"--provider-url", srv.URL(), "--cache-root", root, "--call", "schema"}
		}, false, "connected to"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), append([]string{cmdName}, tt.args(t)...), nil, &stdout, &stderr); code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			out := stderr.String()
			if tt.help {
				out = stdout.String()
			}
			if !strings.Contains(out, tt.want) {
				t.Fatalf("no %q in:\n%s", tt.want, out)
			}
			for _, line := range strings.Split(out, "\n") {
				if n := utf8.RuneCountInString(line); n > cmdexit.HelpWidth && strings.Contains(strings.TrimSpace(line), " ") {
					t.Errorf("%d columns: %q", n, line)
				}
			}
		})
	}
}
