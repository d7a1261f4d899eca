package hosted

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

// BenchmarkAggregateHosted is one aggregate tool call through the gateway,
// on the direct path and (sdk) through the SDK's transport.
func BenchmarkAggregateHosted(b *testing.B) {
	b.Run("direct", func(b *testing.B) { benchAggregateHosted(b, false) })
	b.Run("sdk", func(b *testing.B) { benchAggregateHosted(b, true) })
}

func benchAggregateHosted(b *testing.B, sdkOnly bool) {
	g := newGateway(b, gatewayOptions{mutate: func(o *Options) { o.DisableDirectCalls = sdkOnly }})
	body := []byte(rpc(1, "tools/call", map[string]any{"name": "aggregate", "arguments": map[string]any{"stream": "messages", "metric": "count"}}))
	tok := g.token(pdpptest.TokenClient)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodPost, g.url+PathMCP, bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
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
