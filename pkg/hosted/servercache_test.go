package hosted

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

func TestServerCacheBounded(t *testing.T) {
	c := newServerCache(3)
	builds := 0
	build := func() *built { builds++; return &built{srv: mcp.NewServer(&mcp.Implementation{Name: "x"}, nil)} }
	a := c.get(serverKey{"a", "o"}, build)
	if c.get(serverKey{"a", "o"}, build) != a || builds != 1 {
		t.Fatalf("same key built %d servers", builds)
	}
	if c.get(serverKey{"a", "other-origin"}, build) == a {
		t.Error("another origin shared a server (its icon URL differs)")
	}
	c.get(serverKey{"b", "o"}, build)
	c.get(serverKey{"a", "o"}, build) // a is now the most recent
	c.get(serverKey{"c", "o"}, build) // evicts the least recent
	if n := c.len(); n != 3 {
		t.Errorf("%d servers kept, bound 3", n)
	}
	if c.get(serverKey{"a", "o"}, build) != a {
		t.Error("the most recently used server was evicted")
	}
}

// TestServerReusedPerToken: two calls with one token build one server; a
// second token gets its own, whose RS client carries its own bearer.
func TestServerReusedPerToken(t *testing.T) {
	g := newGateway(t, gatewayOptions{})
	call := rpc(1, "tools/call", map[string]any{"name": "aggregate", "arguments": map[string]any{"stream": "messages", "metric": "count"}})
	hd := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
	second := g.double.IssueClientToken("client")
	for _, tok := range []string{g.token(pdpptest.TokenClient), g.token(pdpptest.TokenClient), second} {
		if x := g.do(t, req{token: tok, body: call, header: hd}); x.status != 200 {
			t.Fatalf("status %d", x.status)
		}
	}
	if n := g.h.servers.len(); n != 2 {
		t.Errorf("%d servers for two tokens", n)
	}
	var sawSecond bool
	for _, r := range g.double.Requests() {
		if r.Path == "/v1/streams/messages/aggregate" && r.Header.Get("Authorization") == "Bearer "+second {
			sawSecond = true
		}
	}
	if !sawSecond {
		t.Error("the second token's call did not reach the RS with the second token")
	}
}
