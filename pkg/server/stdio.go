package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of StdioOptions.
const (
	// DefaultMaxLineBytes bounds one inbound JSON-RPC line, the SDK's own
	// frame limit.
	DefaultMaxLineBytes = 16 << 20
	// DefaultDrainTimeout bounds how long a closed stdin waits for answers
	// still in flight.
	DefaultDrainTimeout = 30 * time.Second
	// DefaultShutdownGrace is how long, after the serving context ends, calls
	// in flight (whose contexts are then cancelled) get to be answered.
	DefaultShutdownGrace = 750 * time.Millisecond
)

// StdioOptions configures RunStdio.
type StdioOptions struct {
	// MaxLineBytes bounds one inbound line; a longer one is answered with an
	// invalid-request error and skipped without being buffered. 0 means
	// DefaultMaxLineBytes.
	MaxLineBytes int
	// DrainTimeout bounds how long serving continues after stdin closes, so
	// that requests already read are answered; when it runs out the calls
	// still in flight are cancelled and their error answers get
	// ShutdownGrace to be written. 0 means DefaultDrainTimeout. Pass the
	// per-call timeout: no call legitimately runs longer.
	DrainTimeout time.Duration
	// ShutdownGrace bounds how long RunStdio waits, after ctx ends (or the
	// drain bound passes), for the cancelled calls in flight to be
	// answered. 0 means DefaultShutdownGrace.
	ShutdownGrace time.Duration
	// Hold, when set, runs before every data-bearing call (tools/call and
	// resources/read): the call waits for it and fails with its error. A
	// command uses it to hold data until a start-up check has finished
	// without delaying initialize or tools/list.
	Hold func(ctx context.Context) error
	// Logger receives transport diagnostics (never message contents); nil
	// discards.
	Logger *slog.Logger
	// Direct, when set, must be the Direct NewWithDirect returned with the
	// server: plain tool calls are then answered through it without the
	// SDK's session (see lineConn.direct), with the same middleware and the
	// same bytes.
	Direct *Direct
	// IdleTrim is how long after the last request in flight has ended the
	// server collects garbage and returns free memory to the operating
	// system (when the calls since the last time allocated at least 4 MiB).
	// 0 means DefaultIdleTrim; a negative value never trims.
	IdleTrim time.Duration

	// trim replaces the trim itself (tests).
	trim func()
}

// dataMethods are the requests that read personal data.
var dataMethods = map[string]bool{"tools/call": true, "resources/read": true}

// RunStdio serves srv over newline-delimited JSON-RPC on in and out until
// stdin closes (after draining the calls in flight, bounded by
// DrainTimeout) or ctx ends. It returns nil in both cases and an error only
// when out cannot be written or in cannot be read.
//
// Every inbound line passes a filter before the SDK sees it: a line that is
// not a valid JSON-RPC message is answered with a parse error (-32700) or an
// invalid-request error (-32600) whose id is null, and serving continues.
// Request ids are echoed byte for byte.
//
// When ctx ends, the contexts of the calls in flight are cancelled (so their
// resource-server requests stop), their answers get ShutdownGrace to be
// written, and RunStdio returns. srv gets a middleware for this, so run it
// once per server.
func RunStdio(ctx context.Context, srv *mcp.Server, in io.Reader, out io.Writer, o StdioOptions) error {
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = DefaultDrainTimeout
	}
	if o.ShutdownGrace <= 0 {
		o.ShutdownGrace = DefaultShutdownGrace
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// Calls run under their own contexts (the SDK does not derive them from
	// the session's); stopCalls is what ends them on shutdown.
	callCtx, stopCalls := context.WithCancel(context.WithoutCancel(ctx))
	defer stopCalls()
	mw := []mcp.Middleware{bindCalls(callCtx, o.Hold)}
	if o.IdleTrim >= 0 {
		trimmer := newIdleTrimmer(cmp.Or(o.IdleTrim, DefaultIdleTrim), o.trim)
		defer trimmer.stop()
		mw = append(mw, trimmer.middleware())
	}
	addReceiving(srv, o.Direct, mw...)

	conn := newLineConn(in, out, o.MaxLineBytes, log, o.Direct)
	conn.drainTimeout = o.DrainTimeout
	conn.onDrainTimeout = stopCalls
	conn.shutdownGrace = o.ShutdownGrace
	ss, err := srv.Connect(context.WithoutCancel(ctx), connTransport{conn}, nil)
	if err != nil {
		return fmt.Errorf("serve stdio: %w", err)
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()

	select {
	case err := <-ended:
		return conn.result(err)
	case <-ctx.Done():
	}
	log.Debug("stopping", "cause", context.Cause(ctx), "calls_in_flight", conn.inFlight())
	stopCalls()
	grace := time.NewTimer(o.ShutdownGrace)
	defer grace.Stop()
	select {
	case <-conn.idle():
	case <-grace.C:
	}
	// Closing ends the session once no handler is running, which a
	// handler that ignores its cancelled context, or an answer whose write
	// is blocked (a host that stopped reading), can delay for ever: do not
	// wait on either for long.
	go ss.Close()
	last := time.NewTimer(o.ShutdownGrace)
	defer last.Stop()
	select {
	case <-ended:
	case <-last.C:
	}
	return nil
}

// bindCalls ends every call's context when calls ends, and holds
// data-bearing calls behind hold.
func bindCalls(calls context.Context, hold func(context.Context) error) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			ctx, cancel := context.WithCancelCause(ctx)
			defer cancel(nil)
			stop := context.AfterFunc(calls, func() { cancel(errShuttingDown) })
			defer stop()
			if hold != nil && dataMethods[method] {
				if err := hold(ctx); err != nil {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
				}
			}
			return next(ctx, method, req)
		}
	}
}

var errShuttingDown = errors.New("pdpp-mcp is shutting down")

// connTransport hands the SDK an already built connection.
type connTransport struct{ c *lineConn }

func (t connTransport) Connect(context.Context) (mcp.Connection, error) { return t.c, nil }
