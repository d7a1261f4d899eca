package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// leaseGrace bounds how long RS body bytes stay counted after a handler
// returns when the request's context never ends (a transport that does not
// cancel it after writing the answer).
const leaseGrace = 30 * time.Second

// answer makes sure every data-bearing request gets an answer, and keeps
// the RS bodies it read counted against the process-wide budget until the
// answer is written.
//
// The SDK drops the response when it cannot encode a result (for example
// JSON nested past encoding/json's limit), which leaves the client waiting
// forever; a handler panic would end the session. Both become error results
// here. A tool result's structuredContent is encoded here to find out, and
// the result leaves with its whole wire form (encodedResult), which the SDK
// then sends as it is.
func answer(log *slog.Logger) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" && method != "resources/read" {
				return next(ctx, method, req)
			}
			return guard(ctx, log, method, selfEncoding(req), func(ctx context.Context) (mcp.Result, error) { return next(ctx, method, req) })
		}
	}
}

// selfEncoding reports whether a tool result of req may leave the guard as
// an encodedResult. The SDK adds fields to the results of requests of the
// stateless revision (those with a protocol version in _meta) after the
// middleware returns; such results leave as they are.
func selfEncoding(req mcp.Request) bool {
	if !selfEncode {
		return false
	}
	r, ok := req.(*mcp.CallToolRequest)
	if !ok || r.Params == nil {
		return false
	}
	_, stateless := r.Params.Meta[mcp.MetaKeyProtocolVersion]
	return !stateless
}

// selfEncode turns encodedResult on; a test turns it off to compare.
var selfEncode = true

// encodedResult is a tool result that carries its own wire form, so the
// SDK's encoder copies (and checks) the bytes instead of encoding the
// result again. Everything else sees the embedded result.
type encodedResult struct {
	*mcp.CallToolResult
	wire []byte
}

func (e *encodedResult) MarshalJSON() ([]byte, error) { return e.wire, nil }

// answerHold is how a transport that writes a direct answer itself says
// when the answer is out. Waiting for the request's context to end instead
// costs a timer and, at the end, a goroutine per call.
type answerHold struct {
	mu      sync.Mutex
	release func()
	ended   bool
}

type answerHoldKey struct{}

// WithAnswerHold returns a context for Direct.Call or Direct.ReadResource
// and the function to call once the answer has been written or dropped
// (defer it): the RS bytes the call read stay counted against the
// process's budget until then. Calling it again does nothing.
func WithAnswerHold(ctx context.Context) (context.Context, func()) {
	h := &answerHold{}
	return context.WithValue(ctx, answerHoldKey{}, h), h.end
}

// take makes release the hold's to run; false when the hold has ended or
// holds another call already.
func (h *answerHold) take(release func()) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended || h.release != nil {
		return false
	}
	h.release = release
	return true
}

func (h *answerHold) end() {
	h.mu.Lock()
	r := h.release
	h.release, h.ended = nil, true
	h.mu.Unlock()
	if r != nil {
		r()
	}
}

// guard runs one data-bearing request for answer and for Direct: the RS
// lease, the panic guard and the encoding check.
func guard(ctx context.Context, log *slog.Logger, method string, encode bool, next func(context.Context) (mcp.Result, error)) (res mcp.Result, err error) {
	lctx, release := rs.WithLease(ctx)
	if h, ok := ctx.Value(answerHoldKey{}).(*answerHold); !ok || !h.take(release) {
		// The request's context ends once the answer is written (the SDK
		// cancels it; an HTTP request's ends with its handler): only
		// then are the bodies' bytes really free.
		fallback := time.AfterFunc(leaseGrace, release)
		context.AfterFunc(ctx, func() {
			// Stopping the fallback keeps a busy hosted gateway from
			// holding one live timer per call for leaseGrace.
			fallback.Stop()
			release()
		})
	}
	defer func() {
		if p := recover(); p != nil {
			log.Error("request handler panicked", "method", method, "panic", fmt.Sprint(p))
			res, err = failed(method, "the request failed inside pdpp-mcp")
		}
	}()
	res, err = next(lctx)
	if err != nil || res == nil {
		return res, err
	}
	// Only a tool result's structuredContent can fail to encode: text,
	// resource contents and the rest are strings and numbers
	// (encoding/json replaces invalid UTF-8 rather than failing). Its
	// encoding is kept, so the SDK copies bytes instead of walking the
	// value a second time.
	tr, ok := res.(*mcp.CallToolResult)
	if !ok || tr == nil {
		return res, nil
	}
	switch sc := tr.StructuredContent.(type) {
	case nil:
	case jsonw.Encoded:
		// Written by the tool through jsonw, which checks what it copies:
		// already what json.Marshal would make of it.
		b, _ := sc.MarshalJSON()
		tr.StructuredContent = json.RawMessage(b)
	default:
		b, mErr := json.Marshal(sc)
		if mErr != nil {
			log.Warn("result could not be encoded; answering an error instead", "method", method, "error", mErr)
			return failed(method, "the result could not be encoded as JSON ("+mErr.Error()+")")
		}
		tr.StructuredContent = json.RawMessage(b)
	}
	if encode {
		if wire, ok := appendToolResult(nil, tr); ok {
			return &encodedResult{tr, wire}, nil
		}
	}
	return tr, nil
}

// failed is the answer to a request whose own result cannot be sent: an
// error result for a tool call (the model sees it), a JSON-RPC error
// otherwise.
func failed(method, msg string) (mcp.Result, error) {
	if method != "tools/call" {
		return nil, fmt.Errorf("%s", msg)
	}
	text := "error code=internal_error\nmessage: " + msg +
		"\nnext: call again once, narrower (fewer fields, a smaller limit); if it fails the same way, report this message"
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
	res.IsError = true
	return res, nil
}
