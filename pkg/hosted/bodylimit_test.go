package hosted

import (
	"net/http"
	"strings"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

// TestBodyLimitBoundary: with MaxBodyBytes 4,096 a body of exactly 4,096
// bytes is served and one of 4,097 is refused with 413, on the direct path
// and on the SDK's.
func TestBodyLimitBoundary(t *testing.T) {
	const limit = 4096
	d := pdpptest.New(t, pdpptest.Options{})
	call := rpc(7, "tools/call", map[string]any{"name": "aggregate", "arguments": map[string]any{"stream": "messages", "metric": "count"}})
	sized := func(n int) string { return call + strings.Repeat(" ", n-len(call)) } // trailing space keeps it one plain call
	for _, path := range []string{"direct", "sdk"} {
		t.Run(path, func(t *testing.T) {
			g := newGateway(t, gatewayOptions{double: d, mutate: func(o *Options) {
				o.MaxBodyBytes = limit
				o.DisableDirectCalls = path == "sdk"
			}})
			tok := d.Token(pdpptest.TokenClient)
			for _, tc := range []struct {
				size   int
				status int
			}{{limit - 1, 200}, {limit, 200}, {limit + 1, http.StatusRequestEntityTooLarge}} {
				before := g.h.directCalls.Load()
				body := sized(tc.size)
				if len(body) != tc.size {
					t.Fatalf("built %d bytes, want %d", len(body), tc.size)
				}
				x := g.do(t, req{token: tok, body: body})
				if x.status != tc.status {
					t.Fatalf("%d-byte body: status %d, want %d\n%.300s", tc.size, x.status, tc.status, x.body)
				}
				if tc.status == 200 {
					direct := g.h.directCalls.Load() > before
					if direct != (path == "direct") {
						t.Errorf("%d-byte body: answered by the direct path: %v", tc.size, direct)
					}
					if jsonField(t, x.body, "result") == nil {
						t.Errorf("%d-byte body: no result\n%.300s", tc.size, x.body)
					}
				} else if jsonField(t, x.body, "error", "code") != "request_entity_too_large" {
					t.Errorf("%d-byte body: %.300s", tc.size, x.body)
				}
			}
		})
	}
}
