package hosted

import (
	"net/http"
	"strings"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

// TestTransportErrors pins the status of every malformed request an
// authorised client can send. Bodies are the SDK's (plain text) or ours
// (JSON) as noted.
func TestTransportErrors(t *testing.T) {
	g := newGateway(t, gatewayOptions{mutate: func(o *Options) { o.MaxBodyBytes = 4096 }})
	tok := g.token(pdpptest.TokenClient)
	notify := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	cases := []struct {
		name   string
		r      req
		status int
		body   string // substring
	}{
		{"accept json only", req{body: initBody, header: map[string]string{"Accept": "application/json"}}, 400, "Accept must contain both"},
		{"accept missing", req{body: initBody, header: map[string]string{"Accept": ""}}, 400, "Accept must contain both"},
		{"content type text", req{body: initBody, header: map[string]string{"Content-Type": "text/plain"}}, 415, "Content-Type must be"},
		{"unsupported protocol header", req{body: rpc(1, "tools/list", nil), header: map[string]string{"MCP-Protocol-Version": "2024-01-01"}}, 400, "Unsupported protocol version"},
		{"GET", req{method: http.MethodGet, noMCPHd: true, header: map[string]string{"Accept": "text/event-stream"}}, 405, "Method Not Allowed"},
		{"DELETE", req{method: http.MethodDelete}, 405, "Method Not Allowed"},
		{"PUT", req{method: http.MethodPut, body: initBody}, 405, "Method Not Allowed"},
		// 2025-03-26 allowed batches; later versions refuse them (next case).
		{"batch", req{body: "[" + initBody + "," + rpc(2, "tools/list", nil) + "]"}, 200, `[{"jsonrpc":"2.0","id":1,`},
		{"batch at 2025-06-18", req{body: "[" + rpc(1, "tools/list", nil) + "," + rpc(2, "tools/list", nil) + "]", header: map[string]string{"MCP-Protocol-Version": "2025-06-18"}}, 400, "batching is not supported"},
		{"notification only", req{body: notify, header: map[string]string{"MCP-Protocol-Version": "2025-06-18"}}, 202, ""},
		{"not JSON", req{body: "{", header: map[string]string{"MCP-Protocol-Version": "2025-06-18"}}, 400, ""},
		{"oversized body", req{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", 5000) + `"}}`}, 413, `"code":"request_entity_too_large"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.r.token = tok
			x := g.do(t, tc.r)
			if x.status != tc.status {
				t.Fatalf("status %d, want %d\n%s", x.status, tc.status, x.body)
			}
			if !strings.Contains(string(x.body), tc.body) {
				t.Errorf("body %q lacks %q", x.body, tc.body)
			}
			if x.header.Get("Mcp-Session-Id") != "" {
				t.Error("stateless handler sent a session id")
			}
		})
	}
	// A CORS preflight from an allowed origin needs no bearer.
	pre := g.do(t, req{method: http.MethodOptions, noMCPHd: true, header: map[string]string{"Origin": "http://localhost:5173", "Access-Control-Request-Method": "POST"}})
	if pre.status != http.StatusNoContent || pre.header.Get("Access-Control-Allow-Origin") != "http://localhost:5173" ||
		!strings.Contains(pre.header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Errorf("preflight: %d %v", pre.status, pre.header)
	}
	if x := g.do(t, req{method: http.MethodOptions, noMCPHd: true, header: map[string]string{"Origin": "https://evil.example"}}); x.status != 403 {
		t.Errorf("preflight from a foreign origin: %d", x.status)
	}
	// Transport checks never run before authorisation.
	x := g.do(t, req{method: http.MethodGet, noMCPHd: true})
	if x.status != 401 {
		t.Errorf("unauthenticated GET: status %d, want 401", x.status)
	}
}

// TestHostAndOrigin covers the 421 and Origin 403 rules and the trusted-proxy
// handling of X-Forwarded-*.
func TestHostAndOrigin(t *testing.T) {
	d := pdpptest.New(t, pdpptest.Options{})
	tok := d.Token(pdpptest.TokenClient)
	derived := newGateway(t, gatewayOptions{double: d, mutate: func(o *Options) { o.TrustedHosts = []string{"*.trusted.example"} }})
	public := newGateway(t, gatewayOptions{double: d, mutate: func(o *Options) { o.PublicURL = "https://mcp.example.com" }})
	proxied := newGateway(t, gatewayOptions{double: d, mutate: func(o *Options) {
		o.PublicURL = "http://127.0.0.1:1"
		o.TrustedProxies = prefixes("127.0.0.0/8")
		o.TrustedHosts = []string{"rs.example.org"}
	}})
	cases := []struct {
		name   string
		g      *gateway
		header map[string]string
		status int
		link   string // expected Link origin; "" skips
	}{
		{"loopback host", derived, nil, 200, derived.url},
		// A private Host passes our check, but on a loopback listener the SDK's
		// DNS-rebinding guard still refuses it.
		{"private host on a loopback listener", derived, map[string]string{"Host": "192.168.1.7:8080"}, 403, ""},
		{"public host not allowed", derived, map[string]string{"Host": "evil.example"}, 421, ""},
		{"allowlisted host", derived, map[string]string{"Host": "a.trusted.example"}, 200, "http://a.trusted.example"},
		{"forwarded host from untrusted peer is ignored", derived, map[string]string{"X-Forwarded-Host": "evil.example"}, 200, derived.url},
		{"foreign origin", derived, map[string]string{"Origin": "https://evil.example"}, 403, ""},
		{"loopback origin", derived, map[string]string{"Origin": "http://localhost:5173"}, 200, ""},
		{"explicit public URL", public, nil, 200, "https://mcp.example.com"},
		{"explicit public URL, its origin", public, map[string]string{"Origin": "https://mcp.example.com"}, 200, ""},
		{"explicit public URL, loopback origin refused", public, map[string]string{"Origin": "http://localhost"}, 403, ""},
		// The SDK's DNS-rebinding guard: a loopback listener, a public Host,
		// no trusted proxy.
		{"rebinding guard", public, map[string]string{"Host": "other.example"}, 403, ""},
		{"configured public host passes the rebinding guard", public, map[string]string{"Host": "mcp.example.com"}, 200, "https://mcp.example.com"},
		{"trusted proxy rebases loopback public URL", proxied, map[string]string{"Host": "rs.example.org", "X-Forwarded-Host": "rs.example.org", "X-Forwarded-Proto": "https"}, 200, "https://rs.example.org"},
		{"trusted proxy, forwarded host not allowed", proxied, map[string]string{"X-Forwarded-Host": "evil.example"}, 421, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			x := tc.g.do(t, req{token: tok, body: initBody, header: tc.header})
			if x.status != tc.status {
				t.Fatalf("status %d, want %d\n%s", x.status, tc.status, x.body)
			}
			if tc.status == 421 {
				if got := jsonField(t, x.body, "error", "code"); got != "misdirected_request" {
					t.Errorf("code %v", got)
				}
			}
			if tc.link != "" {
				if got := x.header.Get("Link"); !strings.HasPrefix(got, "<"+tc.link+"/icon.svg>") {
					t.Errorf("Link = %q, want origin %s", got, tc.link)
				}
				if got := jsonField(t, x.body, "result", "serverInfo", "icons"); got == nil || !strings.Contains(toJSON(got), tc.link+"/icon.svg") {
					t.Errorf("serverInfo.icons = %v", got)
				}
			}
		})
	}
}
