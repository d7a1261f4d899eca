package server

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listRequest is a tools/list as the hosted direct path builds it, at rev
// (stateless: with the protocol version in _meta).
func listRequest(rev string) *mcp.ListToolsRequest {
	h := http.Header{}
	var meta mcp.Meta
	if rev != "" {
		h.Set("MCP-Protocol-Version", rev)
	}
	if rev >= cacheRevision {
		meta = mcp.Meta{mcp.MetaKeyProtocolVersion: rev, mcp.MetaKeyClientCapabilities: map[string]any{}}
	}
	return &mcp.ListToolsRequest{Params: &mcp.ListToolsParams{Meta: meta}, Extra: &mcp.RequestExtra{Header: h}}
}

// TestDirectListRunsReceivingMiddleware: a tools/list answered by Direct
// runs the server's middleware once, and what the middleware changes
// reaches the answer, on every revision.
func TestDirectListRunsReceivingMiddleware(t *testing.T) {
	for _, rev := range []string{"", "2025-11-25", "2026-07-28"} {
		t.Run("rev="+rev, func(t *testing.T) {
			var runs atomic.Int32
			mark := func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					if method != "tools/list" {
						return next(ctx, method, req)
					}
					runs.Add(1)
					res, err := next(ctx, method, req)
					if l, ok := res.(*mcp.ListToolsResult); ok && err == nil {
						l.Tools = append(l.Tools, &mcp.Tool{Name: "marked", InputSchema: map[string]any{"type": "object"}})
					}
					return res, err
				}
			}
			_, direct := NewWithDirect(Options{Middleware: []mcp.Middleware{mark}})
			got, err := direct.ListTools(context.Background(), listRequest(rev))
			if err != nil {
				t.Fatal(err)
			}
			if n := runs.Load(); n != 1 {
				t.Fatalf("the middleware ran %d times, want 1", n)
			}
			if !strings.Contains(string(got), `"name":"marked"`) {
				t.Errorf("the middleware's change is not in the answer:\n%.300s", got)
			}
			if strings.Contains(string(got), "ttlMs") != (rev >= cacheRevision) || strings.Contains(string(got), "resultType") != (rev >= cacheRevision) {
				t.Errorf("revision %q: wrong revision fields in\n%.300s", rev, got)
			}
		})
	}
}

// TestDirectListStoredMatchesEncoded: the stored wire forms of the list
// are what encoding the result afresh gives, on every revision (a
// middleware that hands back a copy of the result takes the encoding
// path).
func TestDirectListStoredMatchesEncoded(t *testing.T) {
	cp := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			switch r := res.(type) {
			case *mcp.ListToolsResult:
				c := *r
				c.Meta = mcp.Meta{}
				return &c, err
			case uncached:
				c := *r.Result.(*mcp.ListToolsResult)
				c.Meta = mcp.Meta{}
				return uncached{&c}, err
			}
			return res, err
		}
	}
	_, stored := NewWithDirect(Options{})
	_, encoded := NewWithDirect(Options{})
	addReceiving(mcp.NewServer(&mcp.Implementation{Name: "x"}, nil), encoded, cp)
	for _, rev := range []string{"", "2025-03-26", "2025-11-25", "2026-07-28"} {
		a, err := stored.ListTools(context.Background(), listRequest(rev))
		if err != nil {
			t.Fatal(err)
		}
		b, err := encoded.ListTools(context.Background(), listRequest(rev))
		if err != nil {
			t.Fatal(err)
		}
		if string(a) != string(b) {
			t.Errorf("revision %q: stored\n%s\nencoded\n%s", rev, a, b)
		}
		if len(a) < 1000 || strings.Contains(string(a), `"_meta":{}`) {
			t.Errorf("revision %q: not a list:\n%.300s", rev, a)
		}
	}
}
