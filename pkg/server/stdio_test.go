package server

import (
	"bufio"
	"context"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/testlog"
)

// stdio is a RunStdio session on pipes, driven line by line. Its stdout
// is an answerWatch: every answer it writes is checked to be written while
// the session still counts the request in flight.
type stdio struct {
	t       *testing.T
	in      chan string // written to stdin in order by one goroutine, so a test never blocks on a pipe
	closeIn func()      // closes stdin once the lines sent are written
	out     *bufio.Reader
	done    chan error
	watch   *answerWatch
	// wait bounds the wait for answers; tests with a session per subtest
	// share their parent's (see answerWait).
	wait *answerWaiter
}

func startStdio(t *testing.T, ctx context.Context, o StdioOptions) *stdio {
	t.Helper()
	s, _ := newTestServer(t)
	return runStdio(t, ctx, s, o)
}

// startStdioDirect is startStdio with plain tool calls answered by the
// server's Direct.
func startStdioDirect(t *testing.T, ctx context.Context, o StdioOptions) *stdio {
	t.Helper()
	s, d, _ := newTestServerDirect(t)
	o.Direct = d
	return runStdio(t, ctx, s, o)
}

// bothPaths runs f once with every request going to the SDK and once with
// plain tool calls answered directly.
func bothPaths(t *testing.T, f func(t *testing.T, start func(*testing.T, context.Context, StdioOptions) *stdio)) {
	t.Run("sdk", func(t *testing.T) { f(t, startStdio) })
	t.Run("direct", func(t *testing.T) { f(t, startStdioDirect) })
}

// runStdio serves s with RunStdio on pipes.
func runStdio(t *testing.T, ctx context.Context, s *mcp.Server, o StdioOptions) *stdio {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	st := &stdio{t: t, in: make(chan string, 16), out: bufio.NewReaderSize(outR, 1<<20), done: make(chan error, 1),
		watch: newAnswerWatch(outW), wait: answerWait(t)}
	st.closeIn = sync.OnceFunc(func() { close(st.in) })
	go func() {
		err := RunStdio(ctx, s, inR, st.watch, o)
		st.watch.returned.Store(true)
		outW.Close()
		st.done <- err
	}()
	go func() {
		for l := range st.in {
			if _, err := io.WriteString(inW, l); err != nil {
				break
			}
		}
		inW.Close()
	}()
	t.Cleanup(func() {
		st.closeIn()
		go io.Copy(io.Discard, outR)
		select {
		case err := <-st.done:
			if err != nil {
				t.Errorf("RunStdio: %v", err)
			}
		case <-time.After(answerDeadline):
			t.Errorf("RunStdio did not return within %s of stdin closing", answerDeadline)
		}
		st.watch.report(t)
	})
	return st
}

func (s *stdio) send(line string) {
	s.in <- line
}

// end closes stdin, as a host does after its last request, and returns
// the rest of stdout once RunStdio has returned.
func (s *stdio) end() string {
	s.t.Helper()
	s.closeIn()
	var rest []byte
	var err error
	got := make(chan struct{})
	go func() {
		rest, err = io.ReadAll(s.out)
		close(got)
	}()
	if !s.wait.within(got) {
		s.t.Fatal("stdout did not end in time after stdin closed")
	}
	if err != nil {
		s.t.Fatalf("read stdout: %v", err)
	}
	return string(rest)
}

// answerDeadline bounds the wait for one answer. A server that stays silent
// fails the test with a message at once rather than hanging until the
// package times out; it is far above any answer's time on a loaded machine.
const answerDeadline = 10 * time.Second

// answerWaiter bounds a test's waits for answers. The first gets
// answerDeadline; once one has run out, the server has shown it can stay
// silent, and every later wait of the test (and of the subtests sharing
// the waiter) gets answerAfterMiss, far above the milliseconds a real
// answer takes: a silent server then costs one deadline and a second per
// answer left, not ten seconds each. All waits end with the test's
// context.
type answerWaiter struct {
	ctx    context.Context
	missed atomic.Bool
}

const answerAfterMiss = time.Second

// answerWait is a waiter ending with t's context.
func answerWait(t *testing.T) *answerWaiter {
	return &answerWaiter{ctx: t.Context()}
}

// within waits for got until the waiter's deadline, reporting whether it
// came.
func (w *answerWaiter) within(got <-chan struct{}) bool {
	d := answerDeadline
	if w.missed.Load() {
		d = answerAfterMiss
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-got:
		return true
	case <-w.ctx.Done():
		return false
	case <-timer.C:
		w.missed.Store(true)
		return false
	}
}

func (s *stdio) recv() string {
	s.t.Helper()
	var (
		line string
		err  error
	)
	got := make(chan struct{})
	go func() {
		line, err = s.out.ReadString('\n')
		close(got)
	}()
	if !s.wait.within(got) {
		s.t.Fatal("no answer in time: the server stayed silent on a line that needs one")
	}
	if err != nil {
		s.t.Fatalf("read answer: %v (got %q)", err, line)
	}
	return strings.TrimSuffix(line, "\n")
}

func (s *stdio) initialize(version string) {
	s.t.Helper()
	s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version +
		`","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}` + "\n")
	if a := s.recv(); gjson.Get(a, "result.protocolVersion").Str != version {
		s.t.Fatalf("initialize answer: %s", a)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
}

const ping = `{"jsonrpc":"2.0","id":"next","method":"ping"}` + "\n"

// TestStdioMalformedLines feeds every kind of bad line and checks the
// answer (or silence) and that the next request is still answered.
func TestStdioMalformedLines(t *testing.T) {
	const limit = 4096
	long := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", limit) + `"}}`
	wait := answerWait(t) // one for every row: a silent server fails the rows left at once
	for _, tt := range []struct {
		name string
		line string // sent as is; most end with "\n"
		code int64  // expected error code; 0 means no answer
	}{
		{"not JSON", "hello\n", -32700},
		{"half an object", `{"jsonrpc":"2.0","id":1` + "\n", -32700},
		{"unterminated string", `{"jsonrpc":"2.0","id":"` + "\n", -32700},
		{"single quotes", `{'jsonrpc':'2.0'}` + "\n", -32700},
		{"trailing comma", `{"jsonrpc":"2.0","id":1,"method":"ping",}` + "\n", -32700},
		{"trailing bytes", `{"jsonrpc":"2.0","id":1,"method":"ping"} x` + "\n", -32700},
		{"two objects on a line", `{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n", -32700},
		{"closing brace only", "}\n", -32700},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}\n", -32700},
		{"invalid escape", `{"jsonrpc":"2.0","id":1,"method":"\x41"}` + "\n", -32700},
		{"NUL byte", "{\"jsonrpc\":\"2.0\",\x00\"id\":1}\n", -32700},
		{"raw control character in string", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi\x01ng\"}\n", -32700},
		{"leading zero number", `{"jsonrpc":"2.0","id":01,"method":"ping"}` + "\n", -32700},
		{"NaN", `{"jsonrpc":"2.0","id":NaN,"method":"ping"}` + "\n", -32700},
		{"null", "null\n", -32600},
		{"true", "true\n", -32600},
		{"number", "42\n", -32600},
		{"float", "1.5\n", -32600},
		{"string", `"ping"` + "\n", -32600},
		{"empty array", "[]\n", -32600},
		{"batch before 2025-03-26", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]` + "\n", -32600},
		{"empty object", "{}\n", -32600},
		{"missing jsonrpc", `{"id":1,"method":"ping"}` + "\n", -32600},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"ping"}` + "\n", -32600},
		{"jsonrpc number", `{"jsonrpc":2.0,"id":1,"method":"ping"}` + "\n", -32600},
		{"jsonrpc escaped differently", `{"jsonrpc":"2\u002e0","id":1,"method":"ping"}` + "\n", -32600},
		{"JSONRPC upper case", `{"JSONRPC":"2.0","id":1,"method":"ping"}` + "\n", -32600},
		{"method number", `{"jsonrpc":"2.0","id":1,"method":7}` + "\n", -32600},
		{"method null", `{"jsonrpc":"2.0","id":1,"method":null}` + "\n", -32600},
		{"method empty", `{"jsonrpc":"2.0","id":1,"method":""}` + "\n", -32600},
		{"id null", `{"jsonrpc":"2.0","id":null,"method":"ping"}` + "\n", -32600},
		{"id object", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}` + "\n", -32600},
		{"id array", `{"jsonrpc":"2.0","id":[1],"method":"ping"}` + "\n", -32600},
		{"id boolean", `{"jsonrpc":"2.0","id":true,"method":"ping"}` + "\n", -32600},
		{"params string", `{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}` + "\n", -32600},
		{"params number", `{"jsonrpc":"2.0","id":1,"method":"ping","params":3}` + "\n", -32600},
		{"response without id", `{"jsonrpc":"2.0","result":{}}` + "\n", -32600},
		{"response with result and error", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}` + "\n", -32600},
		{"response with bad error", `{"jsonrpc":"2.0","id":1,"error":"x"}` + "\n", -32600},
		{"id only", `{"jsonrpc":"2.0","id":1}` + "\n", -32600},
		{"nested too deeply", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "}}\n", -32600},
		{"deep nesting, not closed", strings.Repeat("[", 100000) + "\n", -32600},
		{"line over the limit", long + "\n", -32600},
		{"line over the limit in pieces", long[:limit/2] + long[limit/2:] + "\n", -32600},
		{"blank line", "\n", 0},
		{"spaces only", "   \t \r\n", 0},
		{"CRLF line end", `{"jsonrpc":"2.0","method":"notifications/x"}` + "\r\n", 0},
		{"unknown notification", `{"jsonrpc":"2.0","method":"notifications/whatever","params":{}}` + "\n", 0},
		{"cancel of nothing", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nope"}}` + "\n", 0},
		{"cancel with a bad id", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}` + "\n", 0},
		{"response to nothing", `{"jsonrpc":"2.0","id":99,"result":{}}` + "\n", 0},
		{"response with a float id", `{"jsonrpc":"2.0","id":1.5,"result":{}}` + "\n", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := startStdio(t, context.Background(), StdioOptions{MaxLineBytes: limit})
			s.wait = wait
			s.initialize("2025-06-18")
			s.send(tt.line)
			s.send(ping)
			a := s.recv()
			if tt.code != 0 {
				if gjson.Get(a, "error.code").Int() != tt.code || gjson.Get(a, "id").Raw != "null" || gjson.Get(a, "jsonrpc").Str != "2.0" {
					t.Errorf("answer = %s, want error %d with id null", a, tt.code)
				}
				a = s.recv()
			}
			if a != `{"jsonrpc":"2.0","id":"next","result":{}}` {
				t.Errorf("ping after the line: %s", a)
			}
		})
	}
}

// TestStdioByteOrderMark strips a UTF-8 byte-order mark and serves the line.
func TestStdioByteOrderMark(t *testing.T) {
	s := startStdio(t, context.Background(), StdioOptions{})
	s.send("\xef\xbb\xbf" + `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}` + "\n")
	if a := s.recv(); !strings.HasPrefix(a, `{"jsonrpc":"2.0","id":0,"result":{`) {
		t.Fatalf("initialize after a BOM: %s", a)
	}
	s.send("\xef\xbb\xbf" + ping)
	if a := s.recv(); a != `{"jsonrpc":"2.0","id":"next","result":{}}` {
		t.Errorf("ping after a BOM: %s", a)
	}
}

// TestStdioEchoesIDs echoes every id exactly as it was spelled.
func TestStdioEchoesIDs(t *testing.T) {
	s := startStdio(t, context.Background(), StdioOptions{})
	s.initialize("2025-06-18")
	for _, id := range []string{
		`1.5`, `1.0`, `-0`, `1e3`, `9007199254740993`, `123456789012345678901234567890`, `-7`,
		`"a\"b\\c\u0000d\n"`, `"\u00e9t\u00e9"`, `"été"`, `""`, `"1"`, `"𝄞"`,
	} {
		s.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}` + "\n")
		if a, want := s.recv(), `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`; a != want {
			t.Errorf("answer = %s, want %s", a, want)
		}
	}
	// Numbers are matched by spelling: 1 and 1.0 are distinct requests.
	s.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":1.0,"method":"ping"}` + "\n")
	got := map[string]bool{s.recv(): true, s.recv(): true}
	for _, id := range []string{"1", "1.0"} {
		if !got[`{"jsonrpc":"2.0","id":`+id+`,"result":{}}`] {
			t.Errorf("no answer for id %s: %v", id, got)
		}
	}
}

// TestStdioBatches serves batches in 2025-03-26 only.
func TestStdioBatches(t *testing.T) {
	s := startStdio(t, context.Background(), StdioOptions{})
	s.initialize("2025-03-26")
	s.send(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},3,{"jsonrpc":"2.0","id":"b","method":"ping"}]` + "\n")
	a := gjson.Parse(s.recv())
	if !a.IsArray() || len(a.Array()) != 3 {
		t.Fatalf("batch answer: %s", a.Raw)
	}
	var ids []string
	for _, r := range a.Array() {
		ids = append(ids, r.Get("id").Raw)
	}
	for _, want := range []string{"1", `"b"`, "null"} {
		if !strings.Contains(strings.Join(ids, " "), want) {
			t.Errorf("batch answer lacks id %s: %s", want, a.Raw)
		}
	}
	s.send(`[{"jsonrpc":"2.0","method":"notifications/x"}]` + "\n")
	s.send("[]\n")
	if a := s.recv(); gjson.Get(a, "error.code").Int() != -32600 {
		t.Errorf("empty batch: %s", a)
	}
	s.send(ping)
	if a := s.recv(); a != `{"jsonrpc":"2.0","id":"next","result":{}}` {
		t.Errorf("ping after batches: %s", a)
	}
}

// TestStdioDrainsAfterEOF answers requests read before stdin closed.
func TestStdioDrainsAfterEOF(t *testing.T) {
	s, _ := newTestServer(t)
	in := strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"schema","arguments":{}}}`) // no final newline
	var out testlog.Buffer
	if err := RunStdio(context.Background(), s, in, &out, StdioOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `{"jsonrpc":"2.0","id":1.5,"result":{"content":[`) {
		t.Errorf("the tool call was not answered before exit:\n%s", out.String())
	}
}

// TestStdioStopsPromptly cancels the calls in flight when ctx ends.
func TestStdioStopsPromptly(t *testing.T) { bothPaths(t, testStdioStopsPromptly) }

func testStdioStopsPromptly(t *testing.T, startStdio func(*testing.T, context.Context, StdioOptions) *stdio) {
	ctx, cancel := context.WithCancel(context.Background())
	held := make(chan struct{})
	s := startStdio(t, ctx, StdioOptions{Hold: func(ctx context.Context) error {
		close(held)
		<-ctx.Done() // what a resource-server request does when cancelled
		return ctx.Err()
	}})
	s.initialize("2025-06-18")
	s.send(`{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"schema","arguments":{}}}` + "\n")
	<-held
	start := time.Now()
	cancel()
	a := s.recv()
	if gjson.Get(a, "id").Raw != `"c"` || !gjson.Get(a, "error").Exists() {
		t.Errorf("answer to the call in flight: %s", a)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("stopping took %s", d)
	}
}

// TestStdioResourceURI answers resources/read with a bad URI as invalid
// params, and the session goes on.
func TestStdioResourceURI(t *testing.T) {
	s := startStdio(t, context.Background(), StdioOptions{})
	s.initialize("2025-06-18")
	for _, tt := range []struct {
		uri  string // JSON string contents
		code int64
	}{
		{`pdpp://record/a\u0001b`, -32602},
		{`pdpp://record/a\u0007b`, -32602},
		{`pdpp://record/a\u000bb`, -32602},
		{`pdpp://record/a\u007fb`, -32602},
		{`pdpp://record/a\nb`, -32602},
		{`pdpp://record/a\u0000b`, -32602},
		{`pdpp://record/a\udb40\udc01b`, -32602}, // U+E0001, not printable
		{`pdpp://record/a b`, -32602},
		{``, -32602},
		{`no scheme`, -32602},
		{`%zz`, -32602},
	} {
		s.send(`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"` + tt.uri + `"}}` + "\n")
		if a := s.recv(); gjson.Get(a, "id").Raw != "5" || gjson.Get(a, "error.code").Int() != tt.code {
			t.Errorf("uri %q: answer %s, want error %d", tt.uri, a, tt.code)
		}
		s.send(ping)
		if a := s.recv(); a != `{"jsonrpc":"2.0","id":"next","result":{}}` {
			t.Fatalf("ping after uri %q: %s", tt.uri, a)
		}
	}
	s.send(`{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"pdpp://nothing/été"}}` + "\n")
	if a := s.recv(); gjson.Get(a, "id").Raw != "6" || !gjson.Get(a, "error").Exists() {
		t.Errorf("unknown uri: %s", a)
	}
}

// TestStdioCancelled: a cancelled request is not answered and its id can
// be used again; a cancellation names the client's id, not the private one.
func TestStdioCancelled(t *testing.T) { bothPaths(t, testStdioCancelled) }

func testStdioCancelled(t *testing.T, startStdio func(*testing.T, context.Context, StdioOptions) *stdio) {
	held, returned := make(chan struct{}, 1), make(chan struct{}, 1)
	s := startStdio(t, context.Background(), StdioOptions{Hold: func(ctx context.Context) error {
		held <- struct{}{}
		<-ctx.Done()
		returned <- struct{}{}
		return ctx.Err()
	}})
	s.initialize("2025-06-18")
	s.send(`{"jsonrpc":"2.0","id":"x\u0041","method":"tools/call","params":{"name":"schema","arguments":{}}}` + "\n")
	<-held
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"xA","reason":"user"}}` + "\n")
	<-returned // the call's (unwanted) answer is on its way before the ping
	s.send(ping)
	if a := s.recv(); a != `{"jsonrpc":"2.0","id":"next","result":{}}` {
		t.Errorf("first line after the cancellation: %s (a cancelled call must not be answered)", a)
	}
}

// TestLineReaderDoesNotBufferLongLines: a 64 MiB line is skipped with at
// most the limit (plus one read buffer) held, and the next line is read.
func TestLineReaderDoesNotBufferLongLines(t *testing.T) {
	const limit = 1 << 10
	in := io.MultiReader(io.LimitReader(repeatByte('a'), 64<<20), strings.NewReader("\n{\"x\":1}\n"))
	l := lineReader{r: bufio.NewReaderSize(in, 64<<10), max: limit}
	line, tooLong, err := l.next()
	if err != nil || !tooLong || line != nil {
		t.Fatalf("long line: %q %v %v", line, tooLong, err)
	}
	if c := cap(l.buf); c > limit+64<<10 {
		t.Errorf("buffered %d bytes for a line over a %d-byte limit", c, limit)
	}
	if line, tooLong, err := l.next(); err != nil || tooLong || string(line) != `{"x":1}` {
		t.Errorf("next line: %q %v %v", line, tooLong, err)
	}
	if _, _, err := l.next(); err != io.EOF {
		t.Errorf("end: %v", err)
	}
}

type repeatByte byte

func (r repeatByte) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}
