package server

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// answerWatch is RunStdio's stdout in tests. As each answer line is
// written it checks that the connection still counts a request in flight:
// RunStdio returns (and the process exits) once the connection is idle, so
// an answer written after that point can be lost. The check runs while the
// line is unwritten, so a wrong order fails every time, not when the
// scheduler happens to interleave the two.
type answerWatch struct {
	w        io.Writer
	ready    chan struct{} // closed once conn is set
	conn     *lineConn
	returned atomic.Bool // set by the caller once RunStdio has returned

	mu       sync.Mutex
	problems []string
	answers  int
}

func newAnswerWatch(w io.Writer) *answerWatch {
	return &answerWatch{w: w, ready: make(chan struct{})}
}

// watch is how newLineConn hands over the connection (connWatcher).
func (a *answerWatch) watch(c *lineConn) {
	a.conn = c
	close(a.ready)
}

func (a *answerWatch) Write(b []byte) (int, error) {
	<-a.ready
	if isAnswer(b) {
		var problem string
		switch {
		case a.returned.Load():
			problem = "written after RunStdio returned"
		case a.conn.inFlight() == 0:
			problem = "written while the connection counted no request in flight, so RunStdio could return before it"
		}
		a.mu.Lock()
		a.answers++
		if problem != "" {
			a.problems = append(a.problems, problem+": "+strings.TrimSpace(string(b)))
		}
		a.mu.Unlock()
	}
	return a.w.Write(b)
}

// isAnswer reports whether a line answers requests: a batch's array, or a
// response (an id and no method). Notifications and server requests are
// not counted.
func isAnswer(line []byte) bool {
	r := gjson.ParseBytes(line)
	return r.IsArray() || (r.Get("id").Exists() && !r.Get("method").Exists())
}

// report fails t with every answer written out of order.
func (a *answerWatch) report(t *testing.T) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range a.problems {
		t.Errorf("an answer was %s", p)
	}
}

func (a *answerWatch) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.answers
}

// TestStdioAnswersBeforeReturn: for every path that answers (the SDK, the
// direct path, batches, a Hold that refuses, the line filter, the drain
// bound), each answer is written while its request still counts as in
// flight (the session's answerWatch checks it), and stdout holds every
// answer once RunStdio has returned. Each case ends by closing stdin right
// after its last request, as a script does.
func TestStdioAnswersBeforeReturn(t *testing.T) {
	const schemaCall = `{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"schema","arguments":{}}}` + "\n"
	hangs := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	refuses := func(context.Context) error { return errors.New("the grant was revoked") }
	for _, tt := range []struct {
		name    string
		direct  bool
		version string // "" for 2025-06-18
		o       StdioOptions
		lines   string // sent after initialize
		// want are the answers expected after initialize's, each as a
		// fragment of stdout.
		want []string
	}{
		{name: "SDK requests", lines: ping + `{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n",
			want: []string{`"id":"next","result":{}`, `"id":2,"result":{"tools"`}},
		{name: "SDK tool call", lines: schemaCall,
			want: []string{`"id":"c","result":{"content"`}},
		{name: "direct tool call", direct: true, lines: schemaCall,
			want: []string{`"id":"c","result":{"content"`}},
		{name: "batch", version: "2025-03-26",
			lines: `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"schema","arguments":{}}},7]` + "\n",
			want:  []string{`[{"jsonrpc":"2.0",`, `"id":1,"result":{}`, `"id":2,"result":{"content"`, `"id":null,"error":{"code":-32600`}},
		{name: "batch of bad elements only", version: "2025-03-26", lines: `[1,{"jsonrpc":"1.0","id":3,"method":"ping"}]` + "\n",
			want: []string{`[{"jsonrpc":"2.0","id":null,"error":{"code":-32600`}},
		{name: "line filter", o: StdioOptions{MaxLineBytes: 1024}, lines: "hello\n" + strings.Repeat("x", 2000) + "\n",
			want: []string{`"id":null,"error":{"code":-32700`, `"id":null,"error":{"code":-32600,"message":"Invalid request: line longer`}},
		{name: "hold refuses, SDK", o: StdioOptions{Hold: refuses}, lines: ping + schemaCall,
			want: []string{`"id":"next","result":{}`, `"id":"c","error":{"code":-32603,"message":"the grant was revoked"`}},
		{name: "hold refuses, direct", direct: true, o: StdioOptions{Hold: refuses}, lines: schemaCall,
			want: []string{`"id":"c","error":{"code":-32603,"message":"the grant was revoked"`}},
		{name: "drain bound, SDK", o: StdioOptions{Hold: hangs, DrainTimeout: time.Millisecond, ShutdownGrace: time.Minute}, lines: schemaCall,
			want: []string{`"id":"c","error":{"code":-32603`}},
		{name: "drain bound, direct", direct: true, o: StdioOptions{Hold: hangs, DrainTimeout: time.Millisecond, ShutdownGrace: time.Minute}, lines: schemaCall,
			want: []string{`"id":"c","error":{"code":-32603`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start := startStdio
			if tt.direct {
				start = startStdioDirect
			}
			s := start(t, context.Background(), tt.o)
			version := tt.version
			if version == "" {
				version = "2025-06-18"
			}
			s.initialize(version)
			s.send(tt.lines)
			got := s.end()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("stdout after initialize lacks %s:\n%s", w, got)
				}
			}
		})
	}
}

// TestStdioCancelledBatchAnswer: a batch whose last request is cancelled
// is written by that request's (unsent) answer; the answers gathered
// before it (a request's, a bad element's) stay in flight until the
// batch's line is out.
func TestStdioCancelledBatchAnswer(t *testing.T) {
	const slow = `{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"schema","arguments":{}}}`
	for _, tt := range []struct {
		name  string
		batch string
		want  []string // the batch answer's elements, as fragments
	}{
		{"a request answered first", `[{"jsonrpc":"2.0","id":1,"method":"ping"},` + slow + `,[]]`,
			[]string{`"id":1,"result":{}`, `"id":null,"error":{"code":-32600`}},
		{"only a bad element left", `[[],` + slow + `]`,
			[]string{`"id":null,"error":{"code":-32600`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			held := make(chan struct{}, 1)
			s := startStdio(t, context.Background(), StdioOptions{Hold: func(ctx context.Context) error {
				held <- struct{}{}
				<-ctx.Done()
				return ctx.Err()
			}})
			s.initialize("2025-03-26")
			s.send(tt.batch + "\n")
			<-held
			s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow"}}` + "\n")
			a := s.recv()
			ok := strings.HasPrefix(a, "[") && strings.Count(a, `"jsonrpc"`) == len(tt.want)
			for _, w := range tt.want {
				ok = ok && strings.Contains(a, w)
			}
			if !ok {
				t.Errorf("batch answer %s, want exactly %q", a, tt.want)
			}
			// The answers the session's watch checked: initialize's and the batch's.
			if n := s.watch.count(); n != 2 {
				t.Errorf("%d answers written, want 2", n)
			}
		})
	}
}

// TestStdioStopsWithStdoutBlocked: a host that stops reading stdout does
// not keep pdpp-mcp from stopping when ctx ends: the answer blocked in its
// write is given the shutdown grace, then RunStdio returns.
func TestStdioStopsWithStdoutBlocked(t *testing.T) {
	s, _ := newTestServer(t)
	inR, inW := io.Pipe()
	defer inW.Close()
	out := &stuckAfter{lines: 1, release: make(chan struct{}), written: make(chan struct{}, 8)}
	defer close(out.release)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- RunStdio(ctx, s, inR, out, StdioOptions{ShutdownGrace: 10 * time.Millisecond}) }()
	go io.WriteString(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`+"\n"+
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+ping)
	<-out.written // initialize's answer
	<-out.written // the ping's answer, now stuck
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(answerDeadline): // bounds a failure, not a synchronisation
		t.Fatal("RunStdio did not return after ctx ended while an answer's write was blocked")
	}
}

// stuckAfter lets the first lines writes through, then blocks every write
// until release is closed; written reports each write as it starts.
type stuckAfter struct {
	mu      sync.Mutex
	lines   int
	release chan struct{}
	written chan struct{}
}

func (w *stuckAfter) Write(b []byte) (int, error) {
	w.mu.Lock()
	w.lines--
	pass := w.lines >= 0
	w.mu.Unlock()
	select {
	case w.written <- struct{}{}:
	default:
	}
	if !pass {
		<-w.release
	}
	return len(b), nil
}
