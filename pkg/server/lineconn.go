package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"
)

// lineConn is the stdio mcp.Connection. It replaces the SDK's own stdio
// connection, which ends the session on the first line it cannot decode and
// rewrites ids it cannot represent (1.5 becomes 1). Here:
//
//   - every inbound line is checked before anything is decoded (lineFilter);
//     a bad one is answered with id null and the next line is read;
//   - the SDK sees only messages this type builds, with private integer ids
//     for the client's requests, and every answer goes out with the client's
//     id bytes as they came in;
//   - a closed stdin is reported only once the calls in flight have been
//     answered (bounded by drainTimeout) and their answers written;
//   - an answer the SDK cannot encode becomes an internal error for its id
//     instead of ending the session.
type lineConn struct {
	in     io.Reader
	out    io.Writer
	filter lineFilter
	log    *slog.Logger

	drainTimeout   time.Duration
	onDrainTimeout func()
	// shutdownGrace bounds the wait, once the drain limit has passed and
	// the calls left are cancelled, for their error answers.
	shutdownGrace time.Duration

	incoming chan jsonrpc.Message // closed when in ends; readErr says why
	readErr  error
	closed   chan struct{}
	close1   sync.Once

	wmu sync.Mutex // one line at a time on out

	mu       sync.Mutex
	next     int64
	calls    map[int64]*call  // private id → the client's request
	byClient map[string]int64 // idKey → private id, for cancellation
	// pending counts the requests whose answer is not yet written (or
	// failed to be written), cancelled ones aside. A request leaves it
	// only after its line (or its batch's line) has left writeLine, so a
	// caller that waits for idle() never returns with an answer unwritten.
	pending int
	empty   chan struct{} // closed while pending == 0
	initID  int64         // private id of initialize, 0 when none
	version string        // negotiated protocol revision

	// direct answers plain tool calls without the SDK's session; nil
	// sends every request to the SDK.
	direct *Direct
	// jobs hands a direct call to an idle worker; idleWorkers counts them.
	jobs        chan func()
	idleWorkers atomic.Int32
	spawned     atomic.Int64 // workers started, for tests
}

// maxIdleWorkers bounds the goroutines kept waiting for direct calls once a
// burst of concurrent calls is over.
const maxIdleWorkers = 4

// run runs job on a worker goroutine: an idle one when there is one, else a
// new one. A call's goroutine needs a stack of 16-32 KB (the tool, the RS
// client, net/http); a fresh goroutine starts at 8 KB and copies its stack
// as it grows, on every call. A worker keeps its grown stack.
func (c *lineConn) run(job func()) {
	select {
	case c.jobs <- job:
	default:
		c.spawned.Add(1)
		go c.worker(job)
	}
}

func (c *lineConn) worker(job func()) {
	for {
		job()
		if c.idleWorkers.Add(1) > maxIdleWorkers {
			c.idleWorkers.Add(-1)
			return
		}
		select {
		case job = <-c.jobs:
			c.idleWorkers.Add(-1)
		case <-c.closed:
			c.idleWorkers.Add(-1)
			return
		}
	}
}

// call is one client request in flight.
type call struct {
	id        []byte // the client's id, as sent
	key       string
	batch     *batch
	cancelled bool
	// cancel ends the context of a call answered directly; nil for the
	// SDK's calls, which the SDK cancels.
	cancel context.CancelFunc
}

// batch collects the answers to one inbound batch; it is written as one
// array once every request in it is answered.
type batch struct {
	waiting int
	answers [][]byte
	held    int // answers in answers still counted in flight (bad elements included)
}

func newLineConn(in io.Reader, out io.Writer, maxLine int, log *slog.Logger, direct *Direct) *lineConn {
	c := &lineConn{
		in:       in,
		out:      out,
		direct:   direct,
		filter:   lineFilter{maxDepth: maxDepth},
		log:      log,
		incoming: make(chan jsonrpc.Message),
		closed:   make(chan struct{}),
		calls:    map[int64]*call{},
		byClient: map[string]int64{},
		empty:    make(chan struct{}),
		jobs:     make(chan func()),
	}
	close(c.empty)
	if w, ok := out.(connWatcher); ok {
		w.watch(c)
	}
	go c.readLoop(maxLine)
	return c
}

// connWatcher is an output that wants to see the connection writing to it
// before anything is written: a test's stdout checks through it that no
// answer is written while the connection counts itself idle.
type connWatcher interface{ watch(*lineConn) }

func (c *lineConn) SessionID() string { return "" }

// Read returns the next message for the SDK. At the end of stdin it first
// waits until no call is in flight (or the drain limit passes).
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m, ok := <-c.incoming:
		if ok {
			return m, nil
		}
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if err := c.stdinErr(); err != nil {
		return nil, err
	}
	c.drain(ctx)
	return nil, io.EOF
}

// drain waits for the calls still in flight after stdin closed.
func (c *lineConn) drain(ctx context.Context) {
	t := time.NewTimer(c.drainTimeout)
	defer t.Stop()
	select {
	case <-c.idle():
	case <-c.closed:
	case <-ctx.Done():
	case <-t.C:
		c.log.Warn("stdin closed; giving up on calls still in flight", "calls", c.inFlight(), "waited", c.drainTimeout)
		if c.onDrainTimeout == nil {
			return
		}
		// The calls left are cancelled and answer with an error; once Read
		// returns, the SDK writes nothing more, so those answers are waited
		// for here, as a signal's are.
		c.onDrainTimeout()
		g := time.NewTimer(c.shutdownGrace)
		defer g.Stop()
		select {
		case <-c.idle():
		case <-c.closed:
		case <-ctx.Done():
		case <-g.C:
		}
	}
}

func (c *lineConn) idle() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.empty
}

func (c *lineConn) inFlight() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pending
}

// Close unblocks Read. stdin is closed too when it can be, so the read loop
// ends; otherwise it stays parked in a read until the process exits.
func (c *lineConn) Close() error {
	c.close1.Do(func() {
		close(c.closed)
		if cl, ok := c.in.(io.Closer); ok {
			cl.Close()
		}
	})
	return nil
}

// result maps how the session ended to RunStdio's result.
func (c *lineConn) result(err error) error {
	if rerr := c.stdinErr(); rerr != nil {
		select {
		case <-c.closed:
		default:
			return fmt.Errorf("read stdin: %w", rerr)
		}
	}
	if err == nil || errors.Is(err, io.EOF) {
		return nil
	}
	return fmt.Errorf("serve stdio: %w", err)
}

// stdinErr is the error that ended stdin, other than its end.
func (c *lineConn) stdinErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if errors.Is(c.readErr, io.EOF) {
		return nil
	}
	return c.readErr
}

func (c *lineConn) readLoop(maxLine int) {
	defer close(c.incoming)
	lr := lineReader{r: bufio.NewReaderSize(c.in, 64<<10), max: maxLine}
	for {
		line, tooLong, err := lr.next()
		if err != nil {
			c.mu.Lock()
			c.readErr = err
			c.mu.Unlock()
			return
		}
		if tooLong {
			c.log.Warn("rejected an input line", "reason", "too long", "limit_bytes", maxLine)
			c.reject(jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid request: line longer than %d bytes", maxLine))
			continue
		}
		for _, m := range c.accept(line) {
			select {
			case c.incoming <- m:
			case <-c.closed:
				return
			}
		}
	}
}

// reject answers a line that is not a usable message. The answer counts
// as a request in flight until it is written, as any other does.
func (c *lineConn) reject(code int64, msg string) {
	if err := c.writeAnswer(errorAnswer(code, msg)); err != nil {
		c.log.Debug("could not answer a rejected line", "error", err)
	}
}

// writeAnswer writes a line answering a request the connection has not
// counted (a rejected line): it counts one until the line is out, so
// nothing waiting for idle returns before it.
func (c *lineConn) writeAnswer(line []byte) error {
	c.mu.Lock()
	c.addLocked()
	c.mu.Unlock()
	err := c.writeLine(line)
	c.finish(1)
	return err
}

func errorAnswer(code int64, msg string) []byte {
	b, _ := json.Marshal(msg)
	return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":` + strconv.FormatInt(code, 10) + `,"message":` + string(b) + `}}`)
}

// accept turns one line into the messages the SDK is given, answering
// whatever cannot be given to it.
func (c *lineConn) accept(line []byte) []jsonrpc.Message {
	doc, fail := c.filter.check(line)
	switch {
	case fail != nil:
		c.log.Debug("rejected an input line", "reason", fail.msg, "bytes", len(line))
		c.reject(fail.code, fail.msg)
		return nil
	case !doc.Exists():
		return nil // blank line
	case doc.IsArray():
		return c.acceptBatch(doc)
	}
	m, fail := c.decode(doc, nil)
	if fail != nil {
		c.log.Debug("rejected an input line", "reason", fail.msg, "bytes", len(line))
		c.reject(fail.code, fail.msg)
		return nil
	}
	if m == nil {
		return nil
	}
	return []jsonrpc.Message{m}
}

// acceptBatch handles an array of messages, allowed only in protocol
// revision 2025-03-26 (JSON-RPC batching was added there and removed in
// 2025-06-18).
func (c *lineConn) acceptBatch(doc gjson.Result) []jsonrpc.Message {
	c.mu.Lock()
	allowed := c.version == "2025-03-26"
	c.mu.Unlock()
	if !allowed {
		c.reject(jsonrpc.CodeInvalidRequest, "Invalid request: JSON-RPC batches are not supported in this protocol revision")
		return nil
	}
	elems := doc.Array()
	if len(elems) == 0 {
		c.reject(jsonrpc.CodeInvalidRequest, "Invalid request: empty batch")
		return nil
	}
	b := &batch{}
	var msgs []jsonrpc.Message
	c.mu.Lock()
	b.waiting = 1 // held until every element is registered
	c.mu.Unlock()
	for _, e := range elems {
		var m jsonrpc.Message
		var fail *lineError
		if !e.IsObject() {
			fail = &lineError{jsonrpc.CodeInvalidRequest, "Invalid request: a batch element is not an object"}
		} else {
			m, fail = c.decode(e, b)
		}
		if fail != nil {
			c.mu.Lock()
			b.answers = append(b.answers, errorAnswer(fail.code, fail.msg))
			b.held++
			c.addLocked()
			c.mu.Unlock()
			continue
		}
		if m != nil {
			msgs = append(msgs, m)
		}
	}
	c.mu.Lock()
	b.waiting--
	if b.waiting > 0 {
		c.mu.Unlock()
		return msgs
	}
	// No request of the batch is left to answer: its line goes out here.
	out, held := batchLine(b.answers), b.held
	c.mu.Unlock()
	if out != nil {
		if err := c.writeLine(out); err != nil {
			c.log.Debug("could not answer a batch", "error", err)
		}
	}
	c.finish(held)
	return msgs
}

func batchLine(answers [][]byte) []byte {
	if len(answers) == 0 {
		return nil // only notifications: nothing to say
	}
	return append(append([]byte{'['}, bytes.Join(answers, []byte{','})...), ']')
}

// decode builds the SDK message for one JSON-RPC object. A nil message
// with a nil error means the object was consumed here.
func (c *lineConn) decode(m gjson.Result, b *batch) (jsonrpc.Message, *lineError) {
	if v := m.Get("jsonrpc"); v.Type != gjson.String || v.Raw != `"2.0"` {
		return nil, &lineError{jsonrpc.CodeInvalidRequest, `Invalid request: "jsonrpc" must be "2.0"`}
	}
	id := m.Get("id")
	if id.Exists() && id.Type != gjson.String && id.Type != gjson.Number {
		// MCP forbids null ids; JSON-RPC allows only strings and numbers.
		return nil, &lineError{jsonrpc.CodeInvalidRequest, `Invalid request: "id" must be a string or a number`}
	}
	method := m.Get("method")
	if !method.Exists() {
		return c.decodeResponse(m, id)
	}
	if method.Type != gjson.String || method.Str == "" {
		return nil, &lineError{jsonrpc.CodeInvalidRequest, `Invalid request: "method" must be a non-empty string`}
	}
	var params json.RawMessage
	if p := m.Get("params"); p.Exists() && p.Type != gjson.Null {
		if !p.IsObject() && !p.IsArray() {
			return nil, &lineError{jsonrpc.CodeInvalidRequest, `Invalid request: "params" must be an object or an array`}
		}
		params = json.RawMessage(p.Raw)
	}
	if !id.Exists() {
		return c.notification(method.Str, params)
	}
	key := idKey(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.byClient[key]; dup {
		return nil, &lineError{jsonrpc.CodeInvalidRequest, "Invalid request: the id is already used by a request in flight"}
	}
	var dc *mcp.CallToolRequest
	if b == nil && method.Str == "tools/call" {
		dc = c.directCallLocked(params)
	}
	c.next++
	p := c.next
	cl := &call{id: []byte(id.Raw), key: key, batch: b}
	c.calls[p] = cl
	c.byClient[key] = p
	if b != nil {
		b.waiting++
	}
	c.addLocked()
	if method.Str == "initialize" {
		c.initID = p
	}
	if dc != nil {
		ctx, cancel := context.WithCancel(context.Background())
		cl.cancel = cancel
		c.run(func() { c.answerDirect(ctx, cancel, p, dc) })
		return nil, nil
	}
	return &jsonrpc.Request{ID: intID(p), Method: method.Str, Params: params}, nil
}

// directCallLocked returns the request for a tools/call the direct path
// may answer, or nil. It takes what the SDK would dispatch without a look
// of its own: a session initialised at a revision before 2026-07-28 (whose
// requests carry their own _meta rules) and params of exactly a plain tool
// name and an arguments object, each once; anything else (_meta, a
// progress token, an unknown tool) goes to the SDK. c.mu is held.
func (c *lineConn) directCallLocked(params json.RawMessage) *mcp.CallToolRequest {
	if c.direct == nil || c.version == "" || c.version >= "2026-07-28" || len(params) == 0 || params[0] != '{' {
		return nil
	}
	var name, args gjson.Result
	ok := true
	gjson.ParseBytes(params).ForEach(func(k, v gjson.Result) bool {
		plain := len(k.Raw) == len(k.Str)+2
		switch {
		case plain && k.Str == "name" && !name.Exists():
			name = v
			ok = v.Type == gjson.String && len(v.Raw) == len(v.Str)+2
		case plain && k.Str == "arguments" && !args.Exists():
			args = v
			ok = v.IsObject()
		default:
			ok = false
		}
		return ok
	})
	if !ok || !name.Exists() || !c.direct.Has(name.Str) {
		return nil
	}
	p := &mcp.CallToolParamsRaw{Name: name.Str}
	if args.Exists() {
		p.Arguments = json.RawMessage(args.Raw)
	}
	// A direct request has no session, so the negotiated revision travels
	// as the hosted path carries it: what depends on the revision (such as
	// resource_link content) then answers as the SDK's path would.
	h := http.Header{}
	h.Set("MCP-Protocol-Version", c.version)
	return &mcp.CallToolRequest{Params: p, Extra: &mcp.RequestExtra{Header: h}}
}

// answerDirect runs one direct call and writes its answer as the SDK's
// would be written: Write does the accounting, the cancellation rule and
// the framing for both.
func (c *lineConn) answerDirect(ctx context.Context, cancel context.CancelFunc, p int64, req *mcp.CallToolRequest) {
	defer cancel()
	ctx, answered := WithAnswerHold(ctx)
	defer answered()
	resp := &jsonrpc.Response{ID: intID(p)}
	res, wire, err := c.direct.Call(ctx, req)
	if err == nil && wire == nil {
		wire, err = EncodeToolResult(res)
	}
	if err != nil {
		resp.Error = err
	} else {
		resp.Result = wire
	}
	select {
	case <-c.closed:
		return // the session is over; the SDK would not answer either
	default:
	}
	if err := c.Write(ctx, resp); err != nil {
		c.log.Debug("could not write a direct answer", "error", err)
	}
}

// notification passes a notification on; a cancellation is translated to
// the private id, or dropped when it names no request in flight (it could
// otherwise cancel an unrelated call whose private id happens to match).
func (c *lineConn) notification(method string, params json.RawMessage) (jsonrpc.Message, *lineError) {
	if method != "notifications/cancelled" {
		return &jsonrpc.Request{Method: method, Params: params}, nil
	}
	rid := gjson.GetBytes(params, "requestId")
	if rid.Type != gjson.String && rid.Type != gjson.Number {
		return nil, nil
	}
	c.mu.Lock()
	p, ok := c.byClient[idKey(rid)]
	var cancel context.CancelFunc
	if ok {
		cl := c.calls[p]
		if !cl.cancelled {
			cl.cancelled = true
			c.doneLocked(1) // MCP: a cancelled request gets no answer
		}
		cancel = cl.cancel
	}
	c.mu.Unlock()
	if cancel != nil {
		cancel() // a direct call: the SDK does not know it
		return nil, nil
	}
	if !ok {
		return nil, nil
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(params, &fields) != nil {
		return nil, nil
	}
	fields["requestId"] = json.RawMessage(strconv.FormatInt(p, 10))
	np, err := json.Marshal(fields)
	if err != nil {
		return nil, nil
	}
	return &jsonrpc.Request{Method: method, Params: np}, nil
}

// decodeResponse passes on the client's answer to a server request. The
// SDK numbers its own requests, so their ids are plain integers.
func (c *lineConn) decodeResponse(m, id gjson.Result) (jsonrpc.Message, *lineError) {
	res, rerr := m.Get("result"), m.Get("error")
	if !id.Exists() || res.Exists() == rerr.Exists() {
		return nil, &lineError{jsonrpc.CodeInvalidRequest, `Invalid request: a request needs "method"; a response needs "id" and one of "result" or "error"`}
	}
	var rid jsonrpc.ID
	if id.Type == gjson.String {
		rid, _ = jsonrpc.MakeID(id.Str)
	} else {
		n, err := strconv.ParseInt(id.Raw, 10, 64)
		if err != nil {
			return nil, nil // not an id the server ever sent
		}
		rid = intID(n)
	}
	resp := &jsonrpc.Response{ID: rid}
	if res.Exists() {
		resp.Result = json.RawMessage(res.Raw)
		return resp, nil
	}
	code, msg := rerr.Get("code"), rerr.Get("message")
	if !rerr.IsObject() || code.Type != gjson.Number || msg.Type != gjson.String {
		return nil, &lineError{jsonrpc.CodeInvalidRequest, `Invalid request: "error" must be an object with a numeric "code" and a string "message"`}
	}
	we := &jsonrpc.Error{Code: code.Int(), Message: msg.Str}
	if d := rerr.Get("data"); d.Exists() {
		we.Data = json.RawMessage(d.Raw)
	}
	resp.Error = we
	return resp, nil
}

// intID makes an integer id; the SDK builds them from float64 values.
func intID(n int64) jsonrpc.ID {
	id, _ := jsonrpc.MakeID(float64(n))
	return id
}

// idKey identifies a client id: a string by its value, a number by its
// spelling.
func idKey(id gjson.Result) string {
	if id.Type == gjson.String {
		return "s:" + id.Str
	}
	return "n:" + id.Raw
}

// addLocked counts one more request in flight; c.mu is held.
func (c *lineConn) addLocked() {
	if c.pending == 0 {
		c.empty = make(chan struct{})
	}
	c.pending++
}

// doneLocked marks n requests finished; c.mu is held.
func (c *lineConn) doneLocked(n int) {
	if n == 0 {
		return
	}
	c.pending -= n
	if c.pending == 0 {
		close(c.empty)
	}
}

// finish marks n requests finished once their answer line has been
// written or has failed to be.
func (c *lineConn) finish(n int) {
	c.mu.Lock()
	c.doneLocked(n)
	c.mu.Unlock()
}

// Write sends one message from the SDK.
func (c *lineConn) Write(_ context.Context, msg jsonrpc.Message) error {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		b, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			return err
		}
		return c.writeLine(b)
	}
	p, _ := resp.ID.Raw().(int64)
	c.mu.Lock()
	cl := c.calls[p]
	if cl == nil {
		c.mu.Unlock()
		c.log.Debug("dropped an answer to no request in flight")
		return nil
	}
	delete(c.calls, p)
	delete(c.byClient, cl.key)
	cancelled := cl.cancelled // counted done when it was cancelled
	if p == c.initID && resp.Error == nil {
		// Set before the answer is out: the client's next line may
		// depend on the revision (batches, the direct path).
		c.version = gjson.GetBytes(resp.Result, "protocolVersion").Str
	}
	c.mu.Unlock()

	// MCP: a cancelled request gets no answer.
	var line []byte
	if !cancelled {
		line = c.encodeAnswer(resp, p, cl.id)
	}
	if cl.batch == nil {
		if line == nil {
			return nil
		}
		err := c.writeLine(line)
		c.finish(1)
		return err
	}
	// In a batch, an answered request stays in flight until the batch's
	// line is written; whichever answer completes the batch writes it and
	// finishes them all.
	c.mu.Lock()
	b := cl.batch
	if line != nil {
		b.answers = append(b.answers, line)
		b.held++
	}
	b.waiting--
	if b.waiting > 0 {
		c.mu.Unlock()
		return nil
	}
	out, held := batchLine(b.answers), b.held
	c.mu.Unlock()
	var err error
	if out != nil {
		err = c.writeLine(out)
	}
	c.finish(held)
	return err
}

// encodeAnswer encodes resp with the client's id bytes in place of the
// private id. An answer that cannot be encoded becomes an internal error,
// so the request is still answered and the session goes on.
func (c *lineConn) encodeAnswer(resp *jsonrpc.Response, p int64, id []byte) []byte {
	if resp.Error == nil && len(resp.Result) > 0 {
		// The SDK encoded the result already (compact, without HTML
		// escaping), and encoding the response again would only scan and
		// copy those bytes once more: frame them as EncodeMessage does.
		if !utf8.Valid(resp.Result) {
			return c.unencodable(resp, p, id, errors.New("invalid UTF-8"))
		}
		// Room for the framing (33 bytes) and writeLine's newline.
		out := make([]byte, 0, len(resp.Result)+len(id)+34)
		out = append(out, `{"jsonrpc":"2.0","id":`...)
		out = append(out, id...)
		out = append(out, `,"result":`...)
		out = append(out, resp.Result...)
		return append(out, '}')
	}
	b, err := jsonrpc.EncodeMessage(resp)
	if err == nil && !utf8.Valid(b) {
		err = errors.New("invalid UTF-8")
	}
	if err != nil {
		return c.unencodable(resp, p, id, err)
	}
	return withClientID(b, p, id)
}

// unencodable is the internal error sent for an answer that cannot be sent
// as it is.
func (c *lineConn) unencodable(resp *jsonrpc.Response, p int64, id []byte, err error) []byte {
	c.log.Error("an answer could not be encoded; sending an internal error instead", "error", err)
	b, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: resp.ID, Error: &jsonrpc.Error{
		Code: jsonrpc.CodeInternalError, Message: "Internal error: the answer could not be encoded",
	}})
	return withClientID(b, p, id)
}

// withClientID swaps the client's id bytes in for the private id p in an
// encoded answer.
func withClientID(b []byte, p int64, id []byte) []byte {
	// The SDK writes {"jsonrpc":"2.0","id":<p>,…}; swap in the client's id.
	prefix := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(p, 10) + `,`
	if !bytes.HasPrefix(b, []byte(prefix)) {
		var fields map[string]json.RawMessage
		if json.Unmarshal(b, &fields) == nil {
			fields["id"] = json.RawMessage(id)
			if nb, err := json.Marshal(fields); err == nil {
				return nb
			}
		}
		return errorAnswer(jsonrpc.CodeInternalError, "Internal error: the answer could not be encoded")
	}
	out := make([]byte, 0, len(b)+len(id))
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	out = append(out, ',')
	return append(out, b[len(prefix):]...)
}

func (c *lineConn) writeLine(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	// One write per line, newline included, so a reader never sees half a
	// message interleaved with another. Every caller hands over a line it
	// built for this write and does not keep, so the newline may go in
	// its spare capacity.
	_, err := c.out.Write(append(b, '\n'))
	return err
}

// lineReader reads newline-terminated lines, buffering at most max bytes
// of one line: the rest of a longer line is read and discarded.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

// next returns the next line without its terminator. tooLong reports a line
// over the limit (its content is not returned). The last line needs no
// newline.
func (l *lineReader) next() (line []byte, tooLong bool, err error) {
	if cap(l.buf) > 1<<20 {
		l.buf = nil // do not keep a large buffer after one large line
	}
	l.buf = l.buf[:0]
	for {
		frag, err := l.r.ReadSlice('\n')
		if !tooLong {
			if len(l.buf)+len(frag) > l.max+2 { // room for "\r\n"
				tooLong, l.buf = true, l.buf[:0]
			} else {
				l.buf = append(l.buf, frag...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && len(l.buf) == 0 && !tooLong:
			return nil, false, err
		}
		line = bytes.TrimRight(l.buf, "\r\n")
		if len(line) > l.max {
			tooLong, line = true, nil
		}
		return line, tooLong, nil
	}
}
