package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"
)

// Wire keeps the result bytes of a client session's responses as they came
// over the wire, so --json, --structured and the sizes show what the server
// sent (its key order included) rather than the SDK's re-encoding of the
// decoded Go values.
//
// Wrap a stdio or in-memory transport with Transport. The Streamable HTTP
// client transport must not be wrapped (the SDK passes session state to its
// connection through an unexported interface a wrapper would hide), so HTTP
// traffic is read at the HTTP layer with RoundTripper instead.
type Wire struct {
	mu      sync.Mutex
	methods map[string]string          // request id → method
	order   []string                   // request ids, oldest first
	results map[string]json.RawMessage // request id → result
}

// NewWire returns an empty recorder.
func NewWire() *Wire {
	return &Wire{methods: map[string]string{}, results: map[string]json.RawMessage{}}
}

func idKey(v any) string {
	switch v := v.(type) {
	case string:
		return "s:" + v
	case nil:
		return ""
	default:
		return fmt.Sprintf("n:%v", v)
	}
}

func (w *Wire) request(key, method string) {
	if key == "" {
		return // a notification
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.methods[key] = method
	w.order = append(w.order, key)
}

func (w *Wire) response(key string, result json.RawMessage) {
	if key == "" || result == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.methods[key]; ok {
		w.results[key] = bytes.Clone(result)
	}
}

// Take returns the results of the requests made with method since the last
// Take, oldest first (a paginated list makes several), and forgets
// everything recorded so far.
func (w *Wire) Take(method string) []json.RawMessage {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []json.RawMessage
	for _, k := range w.order {
		if r, ok := w.results[k]; ok && w.methods[k] == method {
			out = append(out, r)
		}
	}
	clear(w.methods)
	clear(w.results)
	w.order = w.order[:0]
	return out
}

// Reset forgets everything recorded so far.
func (w *Wire) Reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	clear(w.methods)
	clear(w.results)
	w.order = w.order[:0]
}

// Transport wraps a message-based client transport (stdio, command,
// in-memory).
func (w *Wire) Transport(t mcp.Transport) mcp.Transport { return &wireTransport{t: t, w: w} }

type wireTransport struct {
	t mcp.Transport
	w *Wire
}

func (t *wireTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &wireConn{Connection: c, w: t.w}, nil
}

type wireConn struct {
	mcp.Connection
	w *Wire
}

func (c *wireConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.w.response(idKey(resp.ID.Raw()), resp.Result)
	}
	return msg, err
}

func (c *wireConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		c.w.request(idKey(req.ID.Raw()), req.Method)
	}
	return c.Connection.Write(ctx, msg)
}

// RoundTripper wraps the HTTP transport of a Streamable HTTP client: it
// notes the JSON-RPC requests POSTed and reads responses from JSON bodies and
// from server-sent event streams as the client consumes them.
func (w *Wire) RoundTripper(rt http.RoundTripper) http.RoundTripper {
	return &wireRoundTripper{rt: rt, w: w}
}

type wireRoundTripper struct {
	rt http.RoundTripper
	w  *Wire
}

// maxWireBody bounds what is kept of one HTTP body for inspection; the
// client still reads all of it.
const maxWireBody = 64 << 20

func (t *wireRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil && req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			b, _ := io.ReadAll(io.LimitReader(body, maxWireBody))
			body.Close()
			t.w.messages(b, false)
		}
	}
	resp, err := t.rt.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "application/json":
		resp.Body = &jsonTee{ReadCloser: resp.Body, w: t.w}
	case "text/event-stream":
		resp.Body = &sseTee{ReadCloser: resp.Body, w: t.w}
	}
	return resp, nil
}

// messages records the JSON-RPC messages in b: one object or a batch array.
func (w *Wire) messages(b []byte, incoming bool) {
	doc := gjson.ParseBytes(b)
	each := func(m gjson.Result) {
		id := m.Get("id")
		var key string
		switch id.Type {
		case gjson.String:
			key = idKey(id.Str)
		case gjson.Number:
			key = idKey(id.Raw)
		}
		if incoming {
			if r := m.Get("result"); r.Exists() {
				w.response(key, json.RawMessage(r.Raw))
			}
			return
		}
		if method := m.Get("method"); method.Type == gjson.String {
			w.request(key, method.Str)
		}
	}
	if doc.IsArray() {
		for _, m := range doc.Array() {
			each(m)
		}
		return
	}
	each(doc)
}

// jsonTee keeps a JSON response body and records it when the client has read
// it to the end (or closes it).
type jsonTee struct {
	io.ReadCloser
	w    *Wire
	buf  bytes.Buffer
	done bool
}

func (t *jsonTee) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if t.buf.Len()+n <= maxWireBody {
		t.buf.Write(p[:n])
	}
	if err == io.EOF {
		t.record()
	}
	return n, err
}

func (t *jsonTee) Close() error {
	t.record()
	return t.ReadCloser.Close()
}

func (t *jsonTee) record() {
	if !t.done {
		t.done = true
		t.w.messages(t.buf.Bytes(), true)
	}
}

// sseTee parses a server-sent event stream as the client reads it: data lines
// up to a blank line form one event, which carries one JSON-RPC message. The
// parsing happens inside Read, so an event is recorded before the client has
// the bytes that complete it.
type sseTee struct {
	io.ReadCloser
	w        *Wire
	line     []byte
	data     bytes.Buffer
	overflow bool // the current line or event is too long to keep
}

func (t *sseTee) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	b := p[:n]
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			t.keep(b)
			break
		}
		t.keep(b[:i])
		t.handleLine(bytes.TrimSuffix(t.line, []byte("\r")))
		t.line = t.line[:0]
		b = b[i+1:]
	}
	if err != nil {
		t.dispatch()
	}
	return n, err
}

func (t *sseTee) keep(b []byte) {
	if len(t.line)+len(b) > maxWireBody {
		t.overflow = true
		return
	}
	t.line = append(t.line, b...)
}

func (t *sseTee) handleLine(line []byte) {
	if len(line) == 0 {
		t.dispatch()
		return
	}
	v, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return // event:, id:, retry: and comments carry no message
	}
	if t.data.Len() > 0 {
		t.data.WriteByte('\n')
	}
	if t.data.Len()+len(v) > maxWireBody {
		t.overflow = true
		return
	}
	t.data.Write(bytes.TrimPrefix(v, []byte(" ")))
}

func (t *sseTee) dispatch() {
	if t.data.Len() > 0 && !t.overflow {
		t.w.messages(t.data.Bytes(), true)
	}
	t.data.Reset()
	t.overflow = false
}
