package server

import (
	"context"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Direct calls a server's tools without an MCP session, for a transport
// that has decoded a plain tools/call itself (the hosted gateway's direct
// path, which skips the SDK's per-request session). A call runs through the
// same guard as the server's own tools/call (RS lease, panic guard,
// encoding check) and the same tool handler, so it gets the same result.
type Direct struct {
	log      *slog.Logger
	handlers map[string]mcp.ToolHandler
}

// Has reports whether name is one of the server's tools. A call of any
// other name belongs to the SDK, which answers it with its own error.
func (d *Direct) Has(name string) bool {
	_, ok := d.handlers[name]
	return ok
}

// CallTool runs the tools/call req (Params set, Params.Name a tool Has
// reports). The error is a JSON-RPC-level failure, as the SDK would send
// it; tool failures are results with IsError set.
func (d *Direct) CallTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	h := d.handlers[req.Params.Name]
	res, err := guard(ctx, d.log, "tools/call", func(ctx context.Context) (mcp.Result, error) {
		res, err := h(ctx, req)
		if err != nil || res == nil {
			return nil, err
		}
		if res.Content == nil {
			// As the SDK does: an empty list, never null.
			r := *res
			r.Content = []mcp.Content{}
			res = &r
		}
		return res, nil
	})
	if err != nil {
		return nil, err
	}
	tr, ok := res.(*mcp.CallToolResult)
	if !ok || tr == nil {
		fr, _ := failed("tools/call", "the tool returned no result")
		return fr.(*mcp.CallToolResult), nil
	}
	return tr, nil
}
