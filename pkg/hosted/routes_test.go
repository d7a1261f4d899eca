package hosted

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

// TestPerTokenConcurrency: with one request of a token in flight and a
// limit of one, the next gets 429 with Retry-After; another token is not
// affected. The RS is a loopback server written here that holds data reads
// until released.
func TestPerTokenConcurrency(t *testing.T) {
	arrived := make(chan struct{}, 4)
	release := make(chan struct{})
	rsSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/schema" && r.URL.RawQuery == "view=compact" {
			_, _ = w.Write([]byte(`{"object":"schema","bearer":{"token_kind":"client","grant_id":"g"},"connectors":[]}`))
			return
		}
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		_, _ = w.Write([]byte(`{"object":"aggregation","value":1}`))
	}))
	t.Cleanup(rsSrv.Close)
	probe, err := SchemaProbe(rsSrv.URL, nil, rsOptions())
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Options{ProviderURL: rsSrv.URL, Verifier: NewCachedVerifier(RSVerifier{Probe: probe}, CacheOptions{}), MaxInFlightPerToken: 1})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	g := &gateway{h: h, srv: srv, url: srv.URL}
	call := rpc(1, "tools/call", map[string]any{"name": "aggregate", "arguments": map[string]any{"stream": "messages", "metric": "count"}})
	var wg sync.WaitGroup
	wg.Add(1)
	var first exchange
	go func() {
		defer wg.Done()
		first = g.do(t, req{token: "tok-a", body: call, header: map[string]string{"MCP-Protocol-Version": "2025-06-18"}})
	}()
	<-arrived // the first call is now inside the RS
	x := g.do(t, req{token: "tok-a", body: call, header: map[string]string{"MCP-Protocol-Version": "2025-06-18"}})
	if x.status != http.StatusTooManyRequests || x.header.Get("Retry-After") == "" {
		t.Errorf("second call: status %d Retry-After %q, want 429 with Retry-After\n%s", x.status, x.header.Get("Retry-After"), x.body)
	}
	if got := jsonField(t, x.body, "error", "type"); got != "rate_limit_error" {
		t.Errorf("type %v", got)
	}
	// Another token has its own budget: it only needs to pass the limiter,
	// so a protocol request that makes no RS call is enough.
	if y := g.do(t, req{token: "tok-b", body: initBody}); y.status != 200 {
		t.Errorf("other token: status %d", y.status)
	}
	close(release)
	wg.Wait()
	if first.status != 200 {
		t.Errorf("first call: status %d", first.status)
	}
	if y := g.do(t, req{token: "tok-a", body: initBody}); y.status != 200 {
		t.Errorf("after release: status %d", y.status)
	}
}

func TestPublicRoutes(t *testing.T) {
	g := newGateway(t, gatewayOptions{})
	t.Run("metadata", func(t *testing.T) {
		x := g.do(t, req{method: http.MethodGet, path: PathMetadata, noMCPHd: true})
		if x.status != 200 || x.header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("status %d, headers %v", x.status, x.header)
		}
		want := map[string]string{
			"resource":                   `"` + g.url + `/mcp"`,
			"authorization_servers":      `["` + g.double.URL() + `"]`,
			"bearer_methods_supported":   `["header"]`,
			"pdpp_token_kinds_supported": `["client","mcp_package"]`,
			"pdpp_core_query_base":       `"` + g.double.URL() + `/v1"`,
		}
		for k, v := range want {
			if got := toJSON(jsonField(t, x.body, k)); got != v {
				t.Errorf("%s = %s, want %s", k, got, v)
			}
		}
		if jsonField(t, x.body, "logo_uri") != nil {
			t.Error("metadata has logo_uri")
		}
		if got := jsonField(t, x.body, "pdpp_agent_discovery", "mcp", "endpoint"); got != g.url+"/mcp" {
			t.Errorf("mcp hint endpoint %v", got)
		}
		if strings.Contains(string(x.body), g.double.URL()+"/mcp") {
			t.Error("metadata still names the RS's /mcp as the resource")
		}
	})
	t.Run("metadata on a foreign host", func(t *testing.T) {
		x := g.do(t, req{method: http.MethodGet, path: PathMetadata, noMCPHd: true, header: map[string]string{"Host": "evil.example"}})
		if x.status != http.StatusMisdirectedRequest {
			t.Errorf("status %d", x.status)
		}
	})
	t.Run("authorization servers flag wins", func(t *testing.T) {
		g2 := newGateway(t, gatewayOptions{double: g.double, mutate: func(o *Options) { o.AuthorizationServers = []string{"https://as.example"} }})
		x := g2.do(t, req{method: http.MethodGet, path: PathMetadata, noMCPHd: true})
		if got := toJSON(jsonField(t, x.body, "authorization_servers")); got != `["https://as.example"]` {
			t.Errorf("authorization_servers %s", got)
		}
	})
	t.Run("icon", func(t *testing.T) {
		x := g.do(t, req{method: http.MethodGet, path: PathIcon, noMCPHd: true})
		if x.status != 200 || x.header.Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(string(x.body), "<svg") {
			t.Errorf("status %d type %q body %.40q", x.status, x.header.Get("Content-Type"), x.body)
		}
	})
	t.Run("healthz", func(t *testing.T) {
		if x := g.do(t, req{method: http.MethodGet, path: PathHealth, noMCPHd: true}); x.status != 200 {
			t.Errorf("status %d", x.status)
		}
	})
	t.Run("readyz", func(t *testing.T) {
		if x := g.do(t, req{method: http.MethodGet, path: PathReady, noMCPHd: true}); x.status != 200 {
			t.Errorf("status %d", x.status)
		}
		down := httptest.NewServer(http.NotFoundHandler())
		down.Close()
		h, err := New(Options{ProviderURL: down.URL, Verifier: VerifierFunc(func(context.Context, string) (*Principal, error) { return nil, errInvalidToken })})
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+PathReady, nil))
		if rec.Code != http.StatusServiceUnavailable {
			t.Errorf("RS down: status %d", rec.Code)
		}
	})
	t.Run("unknown path", func(t *testing.T) {
		if x := g.do(t, req{method: http.MethodGet, path: "/nope", noMCPHd: true}); x.status != 404 {
			t.Errorf("status %d", x.status)
		}
	})
}

// TestMountedOnDouble: the double serves /mcp like the reference does.
func TestMountedOnDouble(t *testing.T) {
	d := pdpptest.New(t, pdpptest.Options{})
	probe, err := SchemaProbe(d.URL(), nil, rsOptions())
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Options{ProviderURL: d.URL(), Verifier: NewCachedVerifier(RSVerifier{Probe: probe}, CacheOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	d.MountMCP(h)
	g := &gateway{double: d, h: h, url: d.URL()}
	x := g.do(t, req{token: d.Token(pdpptest.TokenClient), body: rpc(1, "tools/list", nil), header: map[string]string{"MCP-Protocol-Version": "2025-11-25"}})
	if x.status != 200 || !strings.Contains(string(x.body), `"name":"aggregate"`) {
		t.Fatalf("status %d\n%.300s", x.status, x.body)
	}
	if x := g.do(t, req{method: http.MethodGet, path: PathIcon, noMCPHd: true}); x.status != 200 {
		t.Errorf("icon on the double: %d", x.status)
	}
}

func TestAddMCPHint(t *testing.T) {
	doc := map[string]any{
		"resource":             "https://rs.example",
		"pdpp_core_query_base": "https://rs.example/v1",
		"pdpp_agent_discovery": map[string]any{"advisory": true, "skill_name": "pdpp-data-access"},
	}
	AddMCPHint(doc, "https://rs.example/")
	got := toJSON(doc)
	for _, want := range []string{
		`"pdpp_core_query_base":"https://rs.example/v1"`,
		`"skill_name":"pdpp-data-access"`,
		`"endpoint":"https://rs.example/mcp"`,
		`"transport":"streamable_http"`,
		`"no_owner_token":true`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("document lacks %s:\n%s", want, got)
		}
	}
	empty := map[string]any{}
	AddMCPHint(empty, "https://rs.example")
	if !strings.Contains(toJSON(empty), `"advisory":true,"mcp":{"endpoint":"https://rs.example/mcp"`) {
		t.Errorf("hint on an empty document: %s", toJSON(empty))
	}
}
