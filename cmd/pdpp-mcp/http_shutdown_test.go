package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestHTTPGracefulShutdown: a signal while a tool call is in flight stops
// new work but lets the call finish, and the command exits 0. The resource
// server is written here and holds the data read until released.
func TestHTTPGracefulShutdown(t *testing.T) {
	t.Setenv("PDPP_OWNER_TOKEN", "")
	t.Setenv("PDPP_OWNER_SESSION_COOKIE", "")
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	rsSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/schema" && r.URL.RawQuery == "view=compact" { // the token-kind check
			_, _ = io.WriteString(w, `{"object":"schema","bearer":{"token_kind":"client","grant_id":"g"},"connectors":[]}`)
			return
		}
		arrived <- struct{}{}
		<-release
		_, _ = io.WriteString(w, `{"object":"aggregation","metric":"count","stream":"messages","value":7}`)
	}))
	t.Cleanup(rsSrv.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})

	stderr := &watchWriter{re: regexp.MustCompile(`serving hosted MCP at (\S+) `), match: make(chan []string, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{cmdName, "--http", "127.0.0.1:0", "--provider-url", rsSrv.URL, "--log-level", "warn", "--shutdown-timeout", "20s"},
			strings.NewReader(""), io.Discard, stderr)
	}()
	var url string
	select {
	case m := <-stderr.match:
		url = m[1]
	case c := <-code:
		t.Fatalf("exited %d:\n%s", c, stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("not serving:\n%s", stderr)
	}
	type answer struct {
		status int
		body   string
		err    error
	}
	done := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"aggregate","arguments":{"stream":"messages","metric":"count"}}}`))
		// Not a substring of any answer: the RS client redacts echoed bearers.
		req.Header.Set("Authorization", "Bearer pdpp_shutdown_test_bearer_0123456789")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		done <- answer{status: resp.StatusCode, body: string(b)}
	}()
	select {
	case <-arrived:
	case a := <-done:
		t.Fatalf("the call finished before reaching the RS: %d %v %.300s", a.status, a.err, a.body)
	case <-time.After(30 * time.Second):
		t.Fatal("the call never reached the RS")
	}
	cancel() // the signal
	select {
	case c := <-code:
		t.Fatalf("exited %d with a call in flight", c)
	default:
	}
	close(release)
	a := <-done
	if a.err != nil || a.status != 200 || !strings.Contains(a.body, "value") {
		t.Errorf("in-flight call: %d %v %.200s", a.status, a.err, a.body)
	}
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit %d", c)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("did not exit after the call finished")
	}
}
