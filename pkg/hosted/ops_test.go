package hosted

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/internal/testlog"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

// TestAccessLog: one line per request with status, tool and a token hash
// prefix; never the token, the arguments or the result.
func TestAccessLog(t *testing.T) {
	var buf testlog.Buffer
	g := newGateway(t, gatewayOptions{mutate: func(o *Options) {
		o.AccessLog = true
		o.Logger = slog.New(slog.NewTextHandler(&buf, nil))
	}})
	tok := g.token(pdpptest.TokenClient)
	call := rpc(1, "tools/call", map[string]any{"name": "search", "arguments": map[string]any{"q": "needle-in-the-arguments"}})
	g.do(t, req{token: tok, body: call, header: map[string]string{"MCP-Protocol-Version": "2025-11-25"}})
	g.do(t, req{body: initBody})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var access []string
	for _, l := range lines {
		if strings.Contains(l, "msg=http ") {
			access = append(access, l)
		}
	}
	if len(access) != 2 {
		t.Fatalf("%d access lines, want 2:\n%s", len(access), buf.String())
	}
	for _, want := range []string{"status=200", "rpc=tools/call", "tool=search", "token=" + TokenHash(tok)[:12], "request_id=req_test"} {
		if !strings.Contains(access[0], want) {
			t.Errorf("line lacks %q: %s", want, access[0])
		}
	}
	if !strings.Contains(access[1], "status=401") || !strings.Contains(access[1], "reason=no_bearer") {
		t.Errorf("refusal line: %s", access[1])
	}
	for _, bad := range []string{tok, "needle-in-the-arguments", TokenHash(tok)} {
		if strings.Contains(buf.String(), bad) {
			t.Errorf("log contains %q", bad)
		}
	}
}

func TestMetrics(t *testing.T) {
	var m *Metrics
	g := newGateway(t, gatewayOptions{mutate: func(o *Options) {
		m = NewMetrics(o.Verifier.(*CachedVerifier))
		o.Metrics = m
	}})
	tok := g.token(pdpptest.TokenClient)
	call := rpc(1, "tools/call", map[string]any{"name": "aggregate", "arguments": map[string]any{"stream": "messages", "metric": "count"}})
	for range 2 {
		g.do(t, req{token: tok, body: call, header: map[string]string{"MCP-Protocol-Version": "2025-11-25"}})
	}
	g.do(t, req{token: tok, body: rpc(1, "tools/call", map[string]any{"name": "made-up-" + strings.Repeat("x", 10)}), header: map[string]string{"MCP-Protocol-Version": "2025-11-25"}})
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`pdpp_mcp_http_requests_total{path="/mcp",status="200",tool="aggregate"} 2`,
		`tool="other"`, // unknown tool names do not become labels
		`pdpp_mcp_rs_request_duration_seconds_count{outcome="ok"}`,
		"pdpp_mcp_verdict_cache_hits_total 2",
		"pdpp_mcp_verdict_upstream_calls_total 1",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(string(body), "made-up") {
		t.Error("an unknown tool name became a label")
	}
}

// TestPackageResolver: an embedding host that resolves packages serves
// mcp_package tokens through the reader it returns.
func TestPackageResolver(t *testing.T) {
	var resolved *Principal
	g := newGateway(t, gatewayOptions{introspect: true})
	g2 := newGateway(t, gatewayOptions{introspect: true, double: g.double, mutate: func(o *Options) {
		o.Packages = func(_ context.Context, p *Principal, _ string) (tools.RS, error) {
			resolved = p
			// Stand-in for the package's member grants: the client grant.
			return rs.New(rs.Options{BaseURL: g.double.URL(), Token: func() string { return g.double.Token(pdpptest.TokenClient) }})
		}
	}})
	x := g2.do(t, req{token: g.token(pdpptest.TokenPackage), body: rpc(1, "tools/call", map[string]any{"name": "aggregate", "arguments": map[string]any{"stream": "messages", "metric": "count"}}),
		header: map[string]string{"MCP-Protocol-Version": "2025-11-25"}})
	if x.status != 200 || strings.Contains(string(x.body), `"isError":true`) {
		t.Fatalf("status %d\n%.300s", x.status, x.body)
	}
	if resolved == nil || resolved.Kind != KindPackage || resolved.PackageID != "gpk_pdpptest" {
		t.Errorf("resolver got %+v", resolved)
	}
}
