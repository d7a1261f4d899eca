package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pdpp-mcp/pdpp-mcp/internal/cmdexit"
)

// TestHelpFits: pdpp-mcp-budget --help, and a lone "help", print help that
// fits 80 columns.
func TestHelpFits(t *testing.T) {
	for _, arg := range []string{"--help", "help"} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{cmdName, arg}, &stdout, &stderr); code != cmdexit.OK || stdout.Len() == 0 {
			t.Fatalf("%s: exit %d, stderr %q", arg, code, stderr.String())
		}
		for _, line := range strings.Split(stdout.String(), "\n") {
			if n := utf8.RuneCountInString(line); n > cmdexit.HelpWidth {
				t.Errorf("%s: %d columns: %q", arg, n, line)
			}
		}
	}
}
