package hosted

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/internal/testlog"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

// TestDuplicateKeys: a message that repeats a key the SDK reads would run
// the last while the log and metrics named the first; the gateway refuses
// it before anything runs. Keys that differ (in case, say) are different
// keys to the SDK too and pass.
func TestDuplicateKeys(t *testing.T) {
	var buf testlog.Buffer
	g := newGateway(t, gatewayOptions{mutate: func(o *Options) {
		o.AccessLog = true
		o.Logger = slog.New(slog.NewTextHandler(&buf, nil))
	}})
	tok := g.token(pdpptest.TokenClient)
	// The bearer's verdict is cached first, so any RS read below would be
	// a tool's.
	if x := g.do(t, req{token: tok, body: initBody}); x.status != 200 {
		t.Fatalf("initialize: %d", x.status)
	}
	schema := `"params":{"name":"schema","arguments":{}}`
	cases := []struct {
		name   string
		body   string
		header map[string]string
		dup    string // the key as the refusal quotes it; "" when served
	}{
		{"method twice", `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call",` + schema + `}`, nil, `"method"`},
		{"method twice, escaped", `{"jsonrpc":"2.0","id":1,"method":"tools/list","m\u0065thod":"tools/call",` + schema + `}`, nil, `"method"`},
		{"tool name twice", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"aggregate","name":"schema","arguments":{}}}`, nil, `"params.name"`},
		{"id twice", `{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call",` + schema + `}`, nil, `"id"`},
		{"params twice", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"aggregate"},` + schema + `}`, nil, `"params"`},
		{"empty key twice", `{"jsonrpc":"2.0","id":1,"":1,"":2,"method":"tools/call",` + schema + `}`, nil, `""`},
		{"in a batch", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"tools/list","method":"tools/call",` + schema + `}]`, nil, `"method"`},
		{"keys differing in case", `{"jsonrpc":"2.0","id":1,"method":"tools/call","Method":"tools/list",` + schema + `}`, nil, ""},
		{"repeated keys inside arguments are the tool's", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"schema","arguments":{"stream":"a","stream":"messages"}}}`, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(g.double.Requests())
			logBefore := len(buf.String())
			x := g.do(t, req{token: tok, body: tc.body, header: tc.header})
			line := buf.String()[logBefore:]
			if tc.dup == "" {
				if x.status != http.StatusOK {
					t.Fatalf("status %d\n%.300s", x.status, x.body)
				}
				return
			}
			if x.status != http.StatusBadRequest || jsonField(t, x.body, "error", "code") != float64(-32600) {
				t.Fatalf("status %d, want 400 with JSON-RPC -32600\n%.300s", x.status, x.body)
			}
			if msg := jsonField(t, x.body, "error", "message"); !strings.Contains(msg.(string), tc.dup+` appears twice`) {
				t.Errorf("message %q does not name %q", msg, tc.dup)
			}
			if n := len(g.double.Requests()) - before; n != 0 {
				t.Errorf("%d RS reads were made for a refused message", n)
			}
			if !strings.Contains(line, "reason=duplicate_key") || strings.Contains(line, "rpc=") {
				t.Errorf("access line does not say what happened: %s", line)
			}
		})
	}
}
