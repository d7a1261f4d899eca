package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestWatchSignals(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	ctx, cancel := context.WithCancelCause(context.Background())
	exited := make(chan int, 1)
	go watchSignals(sigs, cancel, func(code int) { exited <- code })
	sigs <- syscall.SIGTERM
	<-ctx.Done()
	if !strings.Contains(context.Cause(ctx).Error(), "terminated") {
		t.Errorf("cause = %v", context.Cause(ctx))
	}
	select {
	case code := <-exited:
		t.Fatalf("exited with %d after one signal", code)
	default:
	}
	sigs <- syscall.SIGINT
	if code := <-exited; code != 130 {
		t.Errorf("second signal: exit %d, want 130", code)
	}
}

// hangingRS answers the owner probe and then holds every request until the
// client gives up on it, reporting both moments.
type hangingRS struct {
	probes   atomic.Int32
	entered  chan struct{} // a data request arrived
	released chan struct{} // its context ended (the client cancelled it)
}

func newHangingRS(t *testing.T) (*hangingRS, *httptest.Server) {
	h := &hangingRS{entered: make(chan struct{}, 16), released: make(chan struct{}, 16)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/schema" && h.probes.Add(1) == 1 {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"object":"schema","bearer":{"token_kind":"client"},"streams":[]}`)
			return
		}
		h.entered <- struct{}{}
		<-r.Context().Done()
		h.released <- struct{}{}
	}))
	t.Cleanup(srv.Close)
	return h, srv
}

// startProcess runs the test binary as pdpp-mcp with signals, on pipes.
func startProcess(t *testing.T, args ...string) (*exec.Cmd, io.WriteCloser, *bufio.Reader, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "PDPP_MCP_TEST_MAIN=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, in, bufio.NewReader(out), &stderr
}

const (
	initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	callLine = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"query_records","arguments":{"stream":"messages"}}}` + "\n"
)

// TestSignalStopsCallsInFlight: the first SIGTERM cancels the resource
// server request of a call in flight and the process exits 0 within about
// a second, long before the per-call timeout.
func TestSignalStopsCallsInFlight(t *testing.T) {
	isolate(t, nil)
	h, srv := newHangingRS(t)
	root := t.TempDir()
	writeCache(t, root, srv.URL, tokenMember("scoped-token"))
	cmd, in, out, stderr := startProcess(t, "--provider-url", srv.URL, "--cache-root", root, "--timeout", "60s", "--log-level", "error")
	io.WriteString(in, initLine)
	if line, err := out.ReadString('\n'); err != nil || !strings.Contains(line, `"id":1,"result"`) {
		t.Fatalf("initialize: %q %v (stderr: %s)", line, err, stderr)
	}
	io.WriteString(in, callLine)
	<-h.entered
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, out)
	err := cmd.Wait()
	elapsed := time.Since(start)
	if err != nil {
		t.Errorf("exit: %v, want 0 (stderr: %s)", err, stderr)
	}
	if elapsed > 2*time.Second {
		t.Errorf("exit took %s after SIGTERM, want about a second", elapsed)
	}
	select {
	case <-h.released:
	case <-time.After(5 * time.Second): // bounds a failure, not a synchronisation
		t.Error("the resource server request was never cancelled")
	}
}

// TestStdinCloseDrainIsBounded: a call still in flight when stdin closes
// is given at most the per-call timeout, then the process exits.
func TestStdinCloseDrainIsBounded(t *testing.T) {
	isolate(t, nil)
	h, srv := newHangingRS(t)
	root := t.TempDir()
	writeCache(t, root, srv.URL, tokenMember("scoped-token"))
	cmd, in, out, stderr := startProcess(t, "--provider-url", srv.URL, "--cache-root", root, "--timeout", "1s", "--log-level", "error")
	io.WriteString(in, initLine+callLine)
	<-h.entered
	start := time.Now()
	in.Close()
	go io.Copy(io.Discard, out)
	err := cmd.Wait()
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("exit took %s after stdin closed with --timeout 1s", elapsed)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	if err != nil {
		t.Errorf("exit: %v (stderr: %s)", err, stderr)
	}
}
