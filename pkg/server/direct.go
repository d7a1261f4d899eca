package server

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

// Direct calls a server's tools, lists them and reads its resources without
// an MCP session, for a transport that has decoded a plain tools/call,
// tools/list or resources/read itself (the hosted gateway's direct path,
// which skips the SDK's per-request session). A request runs through the
// server's receiving middleware (the same list the SDK runs, see receiving)
// and the same handler, so it gets the same result.
type Direct struct {
	impl      *mcp.Implementation
	handlers  map[string]mcp.ToolHandler
	mw        []mcp.Middleware
	handle    mcp.MethodHandler
	calls     atomic.Uint64 // calls made through Call, for tests
	tools     []*mcp.Tool   // the tool definitions, ordered by name
	lists     listForms
	templates []readTemplate
	// info is the server's identity as _meta, encoded once.
	infoOnce sync.Once
	info     []byte
	infoErr  error
}

func newDirect(impl *mcp.Implementation, reg tools.Registered, defs []*mcp.Tool, mw []mcp.Middleware) *Direct {
	d := &Direct{impl: impl, handlers: reg.Tools, tools: defs, templates: newReadTemplates(reg.Templates)}
	d.use(mw...)
	return d
}

// use adds mw to the middleware Direct runs as AddReceivingMiddleware adds
// to the SDK's: around what is there (mw[0] outermost). Call it only through
// addReceiving, before serving.
func (d *Direct) use(mw ...mcp.Middleware) {
	d.mw = append(slices.Clone(mw), d.mw...)
	d.handle = d.dispatch
	// As the SDK applies them: the first middleware is the outermost.
	for _, m := range slices.Backward(d.mw) {
		d.handle = m(d.handle)
	}
}

// addReceiving adds mw to what runs around every request srv receives, on
// the SDK's path and on d's (nil: srv has no Direct in use).
func addReceiving(srv *mcp.Server, d *Direct, mw ...mcp.Middleware) {
	srv.AddReceivingMiddleware(mw...)
	if d != nil {
		d.use(mw...)
	}
}

// Has reports whether name is one of the server's tools. A call of any
// other name belongs to the SDK, which answers it with its own error.
func (d *Direct) Has(name string) bool {
	_, ok := d.handlers[name]
	return ok
}

// ServerInfo is the server's identity, which results of protocol
// 2026-07-28 carry in their _meta.
func (d *Direct) ServerInfo() *mcp.Implementation { return d.impl }

// CallTool runs the tools/call req (Params set, Params.Name a tool Has
// reports). The error is a JSON-RPC-level failure, as the SDK would send
// it; tool failures are results with IsError set.
func (d *Direct) CallTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	res, _, err := d.Call(ctx, req)
	return res, err
}

// Call is CallTool, plus the result's wire form (EncodeToolResult's bytes)
// when the server's guard has made it already, else nil.
func (d *Direct) Call(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, []byte, error) {
	d.calls.Add(1)
	res, err := d.handle(ctx, "tools/call", req)
	if err != nil {
		return nil, nil, err
	}
	switch r := res.(type) {
	case *encodedResult:
		if r.CallToolResult != nil {
			return r.CallToolResult, r.wire, nil
		}
	case *mcp.CallToolResult:
		if r != nil {
			return r, nil, nil
		}
	}
	fr, _ := failed("tools/call", "the tool returned no result")
	return fr.(*mcp.CallToolResult), nil, nil
}

// dispatch is what the SDK does inside the middleware: for a tools/call,
// find the tool, run it, and send an empty content list rather than null;
// for a tools/list, list the tools; for a resources/read, read it.
func (d *Direct) dispatch(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
	switch r := req.(type) {
	case *mcp.ListToolsRequest:
		if method == "tools/list" {
			return d.listTools(ctx, req), nil
		}
	case *mcp.ReadResourceRequest:
		if method == "resources/read" && r.Params != nil {
			return d.readResource(ctx, r)
		}
	}
	r, ok := req.(*mcp.CallToolRequest)
	if method != "tools/call" || !ok || r.Params == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method %q is not served directly", method)}
	}
	h, ok := d.handlers[r.Params.Name]
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", r.Params.Name)}
	}
	res, err := h(ctx, r)
	if err != nil || res == nil {
		return res, err
	}
	if res.Content == nil {
		c := *res
		c.Content = []mcp.Content{}
		res = &c
	}
	return res, nil
}
