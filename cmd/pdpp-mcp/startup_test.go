package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/internal/testlog"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
)

// TestRunRefusesSpecialFiles: a FIFO at the credential path is refused
// with the credential error at once instead of blocking start-up, and a
// provider host too long for a cache file name is a usage error.
func TestRunRefusesSpecialFiles(t *testing.T) {
	isolate(t, nil)
	root := t.TempDir()
	c, err := credential.Open(root, "http://127.0.0.1:9")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(c.File), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(c.File, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"fifo", []string{"--provider-url", "http://127.0.0.1:9", "--cache-root", root}, 78, "not a regular file (a named pipe)"},
		{"long host", []string{"--provider-url", "https://" + strings.Repeat("h", 300) + ".example", "--cache-root", root}, 64, "longer than 250 characters"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr testlog.Buffer
			code := run(context.Background(), append([]string{cmdName}, tt.args...), strings.NewReader(""), &stdout, &stderr)
			if code != tt.code || !strings.Contains(stderr.String(), tt.stderr) || stdout.String() != "" {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr.String(), tt.code, tt.stderr)
			}
		})
	}
}
