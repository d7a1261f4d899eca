package hosted

import (
	"strings"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

// Search and fetch cite the provider's public origin, never the internal
// address the gateway reads it at; without a public origin they cite the
// record's pdpp:// handle.
func TestCitationsNeverInternal(t *testing.T) {
	for _, tc := range []struct {
		name   string
		public string
		want   string // prefix of every document url
	}{
		{"no public origin", "", "pdpp://record/"},
		{"configured public origin", "https://rs.example.com", "https://rs.example.com/v1/streams/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGateway(t, gatewayOptions{mutate: func(o *Options) { o.ProviderPublicURL = tc.public }})
			tok := g.token(pdpptest.TokenClient)
			for _, call := range []string{
				rpc(2, "tools/call", map[string]any{"name": "search", "arguments": map[string]any{"q": "Lisbon"}}),
				rpc(3, "tools/call", map[string]any{"name": "fetch", "arguments": map[string]any{"id": "cin_gmail_personal/messages:p_msg_003"}}),
			} {
				ex := g.do(t, req{token: tok, body: call, header: map[string]string{"MCP-Protocol-Version": "2025-06-18"}})
				body := string(ex.body)
				if ex.status != 200 || strings.Contains(body, g.double.URL()) || strings.Contains(body, "127.0.0.1") {
					t.Fatalf("status %d, the internal origin appears: %.400s", ex.status, body)
				}
				if !strings.Contains(body, `"url":"`+tc.want) {
					t.Errorf("no url starting %s: %.600s", tc.want, body)
				}
			}
		})
	}
}
