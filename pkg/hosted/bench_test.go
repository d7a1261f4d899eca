package hosted

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

// BenchmarkAggregateHosted is one aggregate tool call through the gateway,
// on the direct path and (sdk) through the SDK's transport.
func BenchmarkAggregateHosted(b *testing.B) {
	b.Run("direct", func(b *testing.B) { benchAggregateHosted(b, false, "2025-11-25") })
	b.Run("sdk", func(b *testing.B) { benchAggregateHosted(b, true, "2025-11-25") })
	b.Run("direct-2026-07-28", func(b *testing.B) { benchAggregateHosted(b, false, "2026-07-28") })
	b.Run("sdk-2026-07-28", func(b *testing.B) { benchAggregateHosted(b, true, "2026-07-28") })
}

func benchAggregateHosted(b *testing.B, sdkOnly bool, version string) {
	g := newGateway(b, gatewayOptions{mutate: func(o *Options) { o.DisableDirectCalls = sdkOnly }})
	body := []byte(rpc(1, "tools/call", map[string]any{"name": "aggregate", "arguments": map[string]any{"stream": "messages", "metric": "count"}}))
	if version == "2026-07-28" {
		body = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
			`"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"b","version":"0"}},` +
			`"name":"aggregate","arguments":{"stream":"messages","metric":"count"}}}`)
	}
	defer func() {
		if n := g.h.directCalls.Load(); (n > 0) == sdkOnly {
			b.Fatalf("the direct path answered %d calls (sdk only: %v)", n, sdkOnly)
		}
	}()
	postParallel(b, g, body, map[string]string{"MCP-Protocol-Version": version, "Mcp-Method": "tools/call", "Mcp-Name": "aggregate"})
}

func BenchmarkAggregateDirectRS(b *testing.B) {
	g := newGateway(b, gatewayOptions{})
	tok := g.token(pdpptest.TokenClient)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodGet, g.double.URL()+"/v1/streams/messages/aggregate?metric=count", nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
}

// BenchmarkHostedMethod is one request of each kind the gateway serves
// most, at the oldest and the newest protocol revision: the gateway's work
// per request (with the in-process double's and the client's) for profiles.
func BenchmarkHostedMethod(b *testing.B) {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"b","version":"0"}}`
	type method struct{ name, mcpName, params string }
	methods := []method{
		{"tools/call", "aggregate", `"name":"aggregate","arguments":{"stream":"messages","metric":"count"}`},
		{"tools/list", "", ""},
		{"resources/read", "pdpp://stream/messages", `"uri":"pdpp://stream/messages"`},
	}
	for _, rev := range []string{"2025-03-26", "2026-07-28"} {
		for _, m := range methods {
			params := m.params
			header := map[string]string{"MCP-Protocol-Version": rev}
			if rev == "2026-07-28" {
				header["Mcp-Method"] = m.name
				if m.mcpName != "" {
					header["Mcp-Name"] = m.mcpName
				}
				params = strings.TrimSuffix(meta+","+params, ",")
			}
			body := []byte(`{"jsonrpc":"2.0","id":1,"method":"` + m.name + `","params":{` + params + `}}`)
			b.Run(rev+"/"+m.name, func(b *testing.B) { benchHosted(b, body, header) })
		}
	}
}

func benchHosted(b *testing.B, body []byte, header map[string]string) {
	postParallel(b, newGateway(b, gatewayOptions{}), body, header)
}

// postParallel posts body to g's /mcp with header and the client token from
// parallel goroutines for the benchmark's iterations; every answer must be
// a successful result.
func postParallel(b *testing.B, g *gateway, body []byte, header map[string]string) {
	tok := g.token(pdpptest.TokenClient)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodPost, g.url+PathMCP, bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				// Not Fatal: this goroutine is not the benchmark's.
				b.Error(err)
				return
			}
			a, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !bytes.Contains(a, []byte(`"result"`)) || bytes.Contains(a, []byte(`"isError":true`)) {
				b.Errorf("answer %d: %.300s", resp.StatusCode, a)
				return
			}
		}
	})
}
