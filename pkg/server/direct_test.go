package server

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// TestDirectRunsReceivingMiddleware holds Direct to the server's receiving
// middleware: a middleware given to the server runs once for a tools/call on
// the SDK's path and once on Direct's, sees the same method and tool, and
// what it changes reaches the answer on both.
func TestDirectRunsReceivingMiddleware(t *testing.T) {
	c, d := newTestRS(t, rs.Options{})
	var runs atomic.Int32
	var seen atomic.Value
	mark := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			runs.Add(1)
			seen.Store(method + " " + req.(*mcp.CallToolRequest).Params.Name)
			res, err := next(ctx, method, req)
			if tr, ok := res.(*mcp.CallToolResult); ok && err == nil {
				tr.Content = append(tr.Content, &mcp.TextContent{Text: "marked"})
			}
			return res, err
		}
	}
	s, direct := NewWithDirect(Options{RS: c, ProviderURL: d.URL(), Middleware: []mcp.Middleware{mark}})
	ctx := context.Background()

	viaSDK, err := connect(t, s, nil).CallTool(ctx, &mcp.CallToolParams{Name: "schema", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if n := runs.Swap(0); n != 1 {
		t.Fatalf("SDK path: the middleware ran %d times, want 1", n)
	}
	viaDirect, err := direct.CallTool(ctx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "schema", Arguments: json.RawMessage(`{}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if n := runs.Swap(0); n != 1 {
		t.Fatalf("direct path: the middleware ran %d times, want 1", n)
	}
	if got := seen.Load(); got != "tools/call schema" {
		t.Errorf("the middleware saw %v", got)
	}
	for name, res := range map[string]*mcp.CallToolResult{"SDK": viaSDK, "direct": viaDirect} {
		last, _ := res.Content[len(res.Content)-1].(*mcp.TextContent)
		if res.IsError || last == nil || last.Text != "marked" {
			t.Errorf("%s path: the middleware's change is not in the answer: %+v", name, res.Content)
		}
	}
}

// TestDirectGuardsPanics: a panic under Direct is an error result, as on
// the SDK's path, because Direct runs the same guard.
func TestDirectGuardsPanics(t *testing.T) {
	boom := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) { panic("boom") }
	}
	_, direct := NewWithDirect(Options{Middleware: []mcp.Middleware{boom}})
	res, err := direct.CallTool(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "schema"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "internal_error") {
		t.Fatalf("got %+v, %v", res, err)
	}
}

// TestNoToolBindsHeaders: the gateway's direct path answers 2026-07-28
// tool calls without the SDK's x-mcp-header check (Mcp-Param-* headers
// bound to arguments), which is right only while no tool declares one.
func TestNoToolBindsHeaders(t *testing.T) {
	s, _ := newTestServer(t)
	res, err := connect(t, s, nil).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		if strings.Contains(string(b), "x-mcp-header") {
			t.Errorf("tool %s binds an argument to a header: teach the hosted direct path the Mcp-Param-* check (or leave such calls to the SDK) first", tool.Name)
		}
	}
}

// TestDirectMiddlewareOrder: middleware added later runs outside what was
// there, on Direct's path as on the SDK's.
func TestDirectMiddlewareOrder(t *testing.T) {
	var order []string
	mark := func(name string) mcp.Middleware {
		return func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "tools/call" {
					order = append(order, name)
				}
				return next(ctx, method, req)
			}
		}
	}
	s, direct := NewWithDirect(Options{Middleware: []mcp.Middleware{mark("first")}})
	addReceiving(s, direct, mark("outer-a"), mark("outer-b"))
	if _, err := connect(t, s, nil).CallTool(context.Background(), &mcp.CallToolParams{Name: "nope", Arguments: map[string]any{}}); err == nil {
		t.Fatal("unknown tool: no error")
	}
	sdk := order
	order = nil
	if _, err := direct.CallTool(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "nope"}}); err == nil {
		t.Fatal("unknown tool: no error")
	}
	if strings.Join(order, ",") != strings.Join(sdk, ",") || strings.Join(sdk, ",") != "outer-a,outer-b,first" {
		t.Errorf("SDK ran %v, Direct ran %v", sdk, order)
	}
}
