package main

import (
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pdpp-mcp/pdpp-mcp/internal/cmdexit"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

// wideLines returns the lines of out a person reads that are wider than a
// default terminal: log records (time=…) are for machines and are left out,
// and so is a line that is one word (a URL or path too long to break).
func wideLines(out string) []string {
	var wide []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "time=") || !strings.Contains(strings.TrimSpace(line), " ") {
			continue
		}
		if utf8.RuneCountInString(line) > cmdexit.HelpWidth {
			wide = append(wide, line)
		}
	}
	return wide
}

// TestStartLinesFit: whatever pdpp-mcp prints when it starts, in every mode,
// and its --help, fit 80 columns. The hosted case stops the server only
// after the start-up callback has printed everything, so a line added to
// the banner later is held to it too.
func TestStartLinesFit(t *testing.T) {
	rsURL := func(t *testing.T) (string, string) {
		srv := pdpptest.New(t, pdpptest.Options{})
		root := t.TempDir()
		writeCache(t, root, srv.URL(), tokenMember(srv.Token(pdpptest.TokenClient)))
		return srv.URL(), root
	}
	for _, tt := range []struct {
		name string
		run  func(t *testing.T) string // the output a person reads
	}{
		{"help", func(t *testing.T) string {
			var out strings.Builder
			if c := run(context.Background(), []string{cmdName, "--help"}, strings.NewReader(""), &out, io.Discard); c != cmdexit.OK {
				t.Fatalf("--help: exit %d", c)
			}
			return out.String()
		}},
		{"help word", func(t *testing.T) string {
			var out, errOut strings.Builder
			if c := run(context.Background(), []string{cmdName, "help"}, strings.NewReader(""), &out, &errOut); c != cmdexit.OK || !strings.Contains(out.String(), "OPTIONS:") {
				t.Fatalf("help: exit %d, stdout %q, stderr %q", c, out.String(), errOut.String())
			}
			return out.String() + errOut.String()
		}},
		{"stdio demo", func(t *testing.T) string {
			_, _, stderr := session(t, "--demo", "--log-level=warn")
			return stderr
		}},
		{"stdio provider", func(t *testing.T) string {
			u, root := rsURL(t)
			_, _, stderr := session(t, "--provider-url="+u, "--cache-root="+root, "--log-level=warn")
			if !strings.Contains(stderr, "connected to") {
				t.Errorf("no start-up line: %q", stderr)
			}
			return stderr
		}},
		{"stdio, two providers", func(t *testing.T) string {
			u1, root := rsURL(t)
			srv2 := pdpptest.New(t, pdpptest.Options{})
			writeCache(t, root, srv2.URL(), tokenMember(srv2.Token(pdpptest.TokenClient)))
			_, _, stderr := session(t, "--provider-url="+u1, "--provider-url="+srv2.URL(), "--cache-root="+root, "--log-level=warn")
			if strings.Count(stderr, "connected to") != 2 {
				t.Errorf("want two start-up lines: %q", stderr)
			}
			return stderr
		}},
		{"hosted demo", func(t *testing.T) string {
			return hostedStart(t, "--demo", "--http", "127.0.0.1:0", "--log-level=warn")
		}},
		{"hosted provider with metrics", func(t *testing.T) string {
			u, _ := rsURL(t)
			return hostedStart(t, "--http", "127.0.0.1:0", "--provider-url", u, "--metrics-addr", "127.0.0.1:0", "--log-level=warn")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t, nil)
			out := tt.run(t)
			if strings.TrimSpace(out) == "" {
				t.Fatal("printed nothing")
			}
			for _, line := range wideLines(out) {
				t.Errorf("%d columns: %q", utf8.RuneCountInString(line), line)
			}
		})
	}
}

var regexpServing = regexp.MustCompile(`serving hosted MCP at `)

// hostedStart runs pdpp-mcp in hosted mode until it says it serves, stops
// it, and returns its stderr. Serving is announced first, so by the time
// run returns the whole start-up output has been written.
func hostedStart(t *testing.T, args ...string) string {
	t.Helper()
	stderr := &watchWriter{re: regexpServing, match: make(chan []string, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, append([]string{cmdName}, args...), strings.NewReader(""), io.Discard, stderr)
	}()
	select {
	case <-stderr.match:
	case c := <-code:
		t.Fatalf("exited %d before serving:\n%s", c, stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("not serving after 30s:\n%s", stderr)
	}
	cancel()
	if c := <-code; c != 0 {
		t.Errorf("exit %d after stop:\n%s", c, stderr)
	}
	return stderr.String()
}
