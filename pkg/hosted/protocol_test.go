package hosted

import (
	"context"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

// bearerTransport adds the bearer to every request of an SDK client.
type bearerTransport struct {
	token string
	base  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// TestProtocolVersions: the official Go client on every protocol version
// the SDK speaks sees the same six tools and can call one; 2026-07-28 runs
// without initialize (server/discover).
func TestProtocolVersions(t *testing.T) {
	g := newGateway(t, gatewayOptions{})
	for _, v := range []string{"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(v, func(t *testing.T) {
			ctx := context.Background()
			client := mcp.NewClient(&mcp.Implementation{Name: "hosted-test", Version: "1"}, nil)
			tr := &mcp.StreamableClientTransport{
				Endpoint:   g.url + PathMCP,
				HTTPClient: &http.Client{Transport: bearerTransport{g.token(pdpptest.TokenClient), http.DefaultTransport}},
				MaxRetries: -1,
			}
			cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: v})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != v {
				t.Errorf("negotiated %s, want %s", got, v)
			}
			icons := cs.InitializeResult().ServerInfo.Icons
			if len(icons) != 1 || icons[0].Source != g.url+PathIcon {
				t.Errorf("serverInfo.icons = %+v", icons)
			}
			if cs.InitializeResult().Instructions == "" {
				t.Error("no instructions")
			}
			lt, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range lt.Tools {
				names = append(names, tool.Name)
			}
			if len(names) != 6 {
				t.Errorf("tools %v, want six", names)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "aggregate", Arguments: map[string]any{"stream": "messages", "metric": "count"}})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError {
				t.Errorf("aggregate failed: %+v", res.Content)
			}
		})
	}
}
