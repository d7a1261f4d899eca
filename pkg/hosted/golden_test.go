package hosted

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/internal/goldenfile"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

// TestGoldenTranscripts pins the wire form (status, headers, body) of the
// exchanges a host sees first. UPDATE_GOLDEN=1 rewrites them. Origins and
// tokens are replaced by fixed names, and per-run ids by placeholders.
func TestGoldenTranscripts(t *testing.T) {
	g := newGateway(t, gatewayOptions{introspect: true, mutate: func(o *Options) { o.Version = "0.0.0-golden" }})
	client, owner := g.token(pdpptest.TokenClient), g.token(pdpptest.TokenOwner)
	v2025 := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
	v2026 := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "aggregate"}
	meta2026 := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "golden", "version": "1"},
	}
	cases := []struct {
		name string
		r    req
	}{
		{"challenge", req{body: initBody}},
		{"metadata", req{method: http.MethodGet, path: PathMetadata, noMCPHd: true}},
		{"owner_403", req{token: owner, body: initBody}},
		{"initialize", req{token: client, body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"golden","version":"1"}}}`}},
		{"tool_call_2025-11-25", req{token: client, header: v2025, body: rpc(2, "tools/call", map[string]any{"name": "aggregate", "arguments": map[string]any{"stream": "messages", "metric": "count"}})}},
		{"tool_call_2026-07-28", req{token: client, header: v2026, body: rpc(2, "tools/call", map[string]any{"name": "aggregate", "arguments": map[string]any{"stream": "messages", "metric": "count"}, "_meta": meta2026})}},
	}
	norm := strings.NewReplacer(g.url, "http://gateway.test", g.double.URL(), "http://rs.test", client, "<client-token>", owner, "<owner-token>")
	reqID := regexp.MustCompile(`req_[0-9a-f]{16}`)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			x := g.do(t, tc.r)
			var b strings.Builder
			method, path := tc.r.method, tc.r.path
			if method == "" {
				method = http.MethodPost
			}
			if path == "" {
				path = PathMCP
			}
			fmt.Fprintf(&b, "> %s %s\n", method, path)
			if tc.r.token != "" {
				fmt.Fprintf(&b, "> Authorization: Bearer %s\n", tc.r.token)
			}
			var hk []string
			for k := range tc.r.header {
				hk = append(hk, k)
			}
			slices.Sort(hk)
			for _, k := range hk {
				fmt.Fprintf(&b, "> %s: %s\n", k, tc.r.header[k])
			}
			if tc.r.body != "" {
				fmt.Fprintf(&b, ">\n> %s\n", tc.r.body)
			}
			fmt.Fprintf(&b, "\n< %d %s\n", x.status, http.StatusText(x.status))
			var keys []string
			for k := range x.header {
				if k != "Date" && k != "Content-Length" {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				fmt.Fprintf(&b, "< %s: %s\n", k, strings.Join(x.header[k], ", "))
			}
			fmt.Fprintf(&b, "<\n%s\n", strings.TrimRight(string(x.body), "\n"))
			goldenfile.Check(t, "testdata/golden/"+tc.name+".txt", []byte(reqID.ReplaceAllString(norm.Replace(b.String()), "req_<id>")))
		})
	}
}
