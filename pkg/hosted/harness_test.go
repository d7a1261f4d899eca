package hosted

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout/fanouttest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// gateway is a hosted handler on a real loopback listener in front of a
// pdpptest double.
type gateway struct {
	double *pdpptest.Server
	h      *Handler
	srv    *httptest.Server
	url    string // gateway origin
	cache  *CachedVerifier
}

type gatewayOptions struct {
	introspect bool // verify with the double's /introspect instead of the RS
	mutate     func(*Options)
	double     *pdpptest.Server
}

func newGateway(t testing.TB, o gatewayOptions) *gateway {
	t.Helper()
	d := o.double
	if d == nil {
		d = pdpptest.New(t, pdpptest.Options{})
	}
	var v Verifier
	if o.introspect {
		v = &Introspector{URL: d.IntrospectionURL(), ClientID: pdpptest.IntrospectionClientID, ClientSecret: pdpptest.IntrospectionClientSecret}
	} else {
		probe, err := SchemaProbe(d.URL(), nil, rs.Options{})
		if err != nil {
			t.Fatal(err)
		}
		v = RSVerifier{Probe: probe}
	}
	cache := NewCachedVerifier(v, CacheOptions{})
	opts := Options{ProviderURL: d.URL(), Verifier: cache}
	if o.mutate != nil {
		o.mutate(&opts)
	}
	h, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &gateway{double: d, h: h, srv: srv, url: srv.URL, cache: cache}
}

// exchange is one HTTP request and its answer.
type exchange struct {
	status  int
	header  http.Header
	body    []byte
	length  int64 // Content-Length, -1 when unknown
	chunked bool
}

type req struct {
	method  string
	path    string
	token   string // "" sends no Authorization
	header  map[string]string
	body    string
	noMCPHd bool // omit the standard MCP Accept/Content-Type
	// ctx, when set, bounds the request; nil sends it without a bound.
	ctx context.Context
}

func (g *gateway) do(t testing.TB, r req) exchange {
	t.Helper()
	if r.method == "" {
		r.method = http.MethodPost
	}
	if r.path == "" {
		r.path = PathMCP
	}
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	ctx := r.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	hr, err := http.NewRequestWithContext(ctx, r.method, g.url+r.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if !r.noMCPHd {
		hr.Header.Set("Accept", "application/json, text/event-stream")
		hr.Header.Set("Content-Type", "application/json")
	}
	hr.Header.Set("Request-Id", "req_test")
	if r.token != "" {
		hr.Header.Set("Authorization", "Bearer "+r.token)
	}
	for k, v := range r.header {
		if v == "" {
			hr.Header.Del(k)
			continue
		}
		if strings.EqualFold(k, "Host") {
			hr.Host = v
			continue
		}
		hr.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return exchange{status: resp.StatusCode, header: resp.Header, body: b, length: resp.ContentLength,
		chunked: slices.Contains(resp.TransferEncoding, "chunked")}
}

func (g *gateway) token(k pdpptest.TokenKind) string { return g.double.Token(k) }

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func rpc(id int, method string, params any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return string(b)
}

func jsonField(t testing.TB, b []byte, path ...string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(bytes.TrimSpace(b), &v); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, b)
	}
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func prefixes(s ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, p := range s {
		out = append(out, netip.MustParsePrefix(p))
	}
	return out
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func rsOptions() rs.Options { return rs.Options{} }

// demoDouble is the demo dataset's double, at the dataset's clock.
func demoDouble(t testing.TB) *pdpptest.Server {
	t.Helper()
	ds, err := dataset.Demo()
	if err != nil {
		t.Fatal(err)
	}
	return pdpptest.New(t, pdpptest.Options{Dataset: ds, Now: dataset.DemoTime})
}

// mailPackage issues a package token over the demo's two mail
// connections, then extra.
func mailPackage(d *pdpptest.Server, extra ...pdpptest.PackageChild) string {
	token, _ := d.IssuePackage(append([]pdpptest.PackageChild{
		{ConnectionID: dataset.DemoPersonalMailConnection},
		{ConnectionID: dataset.DemoWorkMailConnection},
	}, extra...)...)
	return token
}

// packageLookup resolves the double's package tokens to their children.
func packageLookup(d *pdpptest.Server) func(context.Context, *Principal, string) (string, []fanout.Child, error) {
	return func(_ context.Context, _ *Principal, token string) (string, []fanout.Child, error) {
		return fanouttest.PackageChildren(d, token)
	}
}

// packageResolver is FanoutResolver(o) over the double, o's Lookup
// packageLookup(d) unless set.
func packageResolver(t testing.TB, d *pdpptest.Server, o FanoutOptions) PackageResolver {
	t.Helper()
	o.ProviderURL = d.URL()
	if o.Lookup == nil {
		o.Lookup = packageLookup(d)
	}
	r, err := FanoutResolver(o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// tool makes one tools/call with token at revision 2025-11-25, and fails
// the test unless it is answered 200.
func (g *gateway) tool(t testing.TB, token, name string, args map[string]any) exchange {
	t.Helper()
	x := g.do(t, req{token: token, body: rpc(1, "tools/call", map[string]any{"name": name, "arguments": args}),
		header: map[string]string{"MCP-Protocol-Version": "2025-11-25"}})
	if x.status != 200 {
		t.Fatalf("%s: status %d\n%.400s", name, x.status, x.body)
	}
	return x
}
