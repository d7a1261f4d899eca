package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// watchWriter collects stderr and tells, once, when a pattern appears.
type watchWriter struct {
	mu    sync.Mutex
	buf   strings.Builder
	re    *regexp.Regexp
	match chan []string
	done  bool
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.done {
		if m := w.re.FindStringSubmatch(w.buf.String()); m != nil {
			w.done = true
			w.match <- m
		}
	}
	return len(p), nil
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestHTTPDemo runs `PDPP_MCP_HTTP=127.0.0.1:0 pdpp-mcp --demo`, calls a tool with
// the printed client token, checks the owner token is refused, and stops it
// with a signal (context cancel): exit 0.
func TestHTTPDemo(t *testing.T) {
	t.Setenv("PDPP_OWNER_TOKEN", "")
	t.Setenv("PDPP_OWNER_SESSION_COOKIE", "")
	t.Setenv("PDPP_MCP_HTTP", "127.0.0.1:0") // the env fallback of --http
	stderr := &watchWriter{
		re:    regexp.MustCompile(`(?s)serving hosted MCP at (\S+) .*client \(served\):\s+(\S+)\n\s+owner \(403\):\s+(\S+)\n\s+mcp_package \(fan-out\):\s+(\S+)\n`),
		match: make(chan []string, 1),
	}
	ctx, cancel := context.WithCancel(context.Background())
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{cmdName, "--demo", "--log-level", "warn"}, strings.NewReader(""), io.Discard, stderr)
	}()
	var m []string
	select {
	case m = <-stderr.match:
	case c := <-code:
		t.Fatalf("exited %d before serving:\n%s", c, stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("not serving after 30s:\n%s", stderr)
	}
	url, client, owner, pkg := m[1], m[2], m[3], m[4]
	// Everything printed up to the last command of the banner fits 80
	// columns, the serving line first (TestStartLinesFit checks all of it).
	out := stderr.String()
	end := strings.Index(out, `"method":"tools/list","params":{}}'`)
	if end < 0 {
		t.Fatalf("no banner in:\n%s", out)
	}
	for _, line := range strings.Split(out[:end], "\n") {
		if n := utf8.RuneCountInString(line); n > 80 {
			t.Errorf("banner line %d wide: %q", n, line)
		}
	}
	post := func(tok, body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := post(client, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"schema","arguments":{}}}`)
	if status != 200 || !strings.Contains(body, `"structuredContent"`) || strings.Contains(body, `"isError":true`) {
		t.Errorf("client tools/call: %d %.300s", status, body)
	}
	// The package token reads every demo source through one fan-out.
	status, body = post(pkg, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"q":"invoice"}}}`)
	if status != 200 || !strings.Contains(body, "source_mix=") || strings.Contains(body, `"isError":true`) {
		t.Errorf("package tools/call: %d %.300s", status, body)
	}
	if status, body := post(owner, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`); status != 403 || !strings.Contains(body, "permission_error") {
		t.Errorf("owner: %d %.300s", status, body)
	}
	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit %d after signal:\n%s", c, stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("did not stop after the signal")
	}
	if strings.Contains(stderr.String(), "token="+client) {
		t.Error("a token reached the log")
	}
}

func TestHTTPUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"no provider", []string{"--http", "127.0.0.1:0"}, "--http needs --provider-url"},
		{"public bind without public URL", []string{"--http", "0.0.0.0:0", "--provider-url", "http://127.0.0.1:9"}, "is not a loopback address: pass --public-url"},
		{"bad addr", []string{"--http", "nope", "--provider-url", "http://127.0.0.1:9"}, `--http "nope" is not host:port`},
		{"bad proxy", []string{"--http", "127.0.0.1:0", "--provider-url", "http://127.0.0.1:9", "--trusted-proxies", "x/99"}, "--trusted-proxies"},
		{"public URL with path", []string{"--http", "127.0.0.1:0", "--provider-url", "http://127.0.0.1:9", "--public-url", "https://a.example/mcp"}, "must be an origin"},
		{"introspection without secret", []string{"--http", "127.0.0.1:0", "--provider-url", "http://127.0.0.1:9", "--introspection-url", "http://127.0.0.1:9/introspect", "--introspection-client-id", "x"}, "needs --introspection-client-id and a secret"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stderr strings.Builder
			c := run(context.Background(), append([]string{cmdName}, tt.args...), strings.NewReader(""), io.Discard, &stderr)
			if c != exitUsage || !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("exit %d, stderr %q; want 64 and %q", c, stderr.String(), tt.stderr)
			}
		})
	}
}
