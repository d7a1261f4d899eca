package hosted

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// TestFanoutResolverServesPackage: the double's own /mcp resolves an
// mcp_package token to its children and the tools read them as one RS; a
// revoked child is reported, not silently dropped.
func TestFanoutResolverServesPackage(t *testing.T) {
	d := demoDouble(t)
	pkgToken := mailPackage(d, pdpptest.PackageChild{ConnectionID: d.Dataset().Connector("calendar").Connections[0].ID, Revoked: true})
	resolver := packageResolver(t, d, FanoutOptions{})
	g := newGateway(t, gatewayOptions{introspect: true, double: d, mutate: func(o *Options) { o.Packages = resolver }})
	call := func(name string, args map[string]any) string { return string(g.tool(t, pkgToken, name, args).body) }
	schema := call("schema", map[string]any{})
	for _, want := range []string{dataset.DemoPersonalMailConnection, dataset.DemoWorkMailConnection, "source_unavailable", "re-approved"} {
		if !strings.Contains(schema, want) {
			t.Errorf("schema lacks %q:\n%.600s", want, schema)
		}
	}
	search := call("search", map[string]any{"q": "offsite", "limit": 10})
	if !strings.Contains(search, "source_mix=") || strings.Contains(search, `"isError":true`) {
		t.Errorf("package search:\n%.600s", search)
	}
	amb := call("query_records", map[string]any{"stream": "mail_messages", "limit": 1})
	if !strings.Contains(amb, "ambiguous_connection") {
		t.Errorf("records without connection_id:\n%.600s", amb)
	}
	// The double serves the same handler at its own /mcp, next to /v1.
	d.MountMCP(g.h)
	own := &gateway{double: d, h: g.h, url: d.URL()}
	x := own.do(t, req{token: pkgToken, body: rpc(1, "tools/call", map[string]any{"name": "search", "arguments": map[string]any{"q": "offsite"}}),
		header: map[string]string{"MCP-Protocol-Version": "2025-11-25"}})
	if x.status != 200 || !strings.Contains(string(x.body), "source_mix=") {
		t.Errorf("the double's own /mcp: %d %.400s", x.status, x.body)
	}
	// Package tokens stay refused on the REST API itself.
	hr, err := http.NewRequest(http.MethodGet, d.URL()+"/v1/schema", nil)
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Authorization", "Bearer "+pkgToken)
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("package token on /v1/schema: HTTP %d, want 401", resp.StatusCode)
	}
}

// TestPackageChildOnAnotherRSCannotClaimAConnection: a package whose host
// names, for a child read on another resource server, the connection of a
// child on its own RS: neither child speaks for that connection. A read
// naming it is ambiguous_connection and reaches neither; the other RS's
// hits for it never reach the model; the rest of the package reads.
func TestPackageChildOnAnotherRSCannotClaimAConnection(t *testing.T) {
	d := demoDouble(t)
	pkgToken := mailPackage(d)
	var hostileReads atomic.Int32
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/v1/search" {
			if strings.HasPrefix(r.URL.Path, "/v1/streams/") {
				hostileReads.Add(1)
			}
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"code":"not_found","message":"Not found","type":"not_found_error"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"object":"list","has_more":false,"data":[{"object":"search_result","stream":"mail_messages",` +
			`"record_key":"forged-offsite","connection_id":"` + dataset.DemoPersonalMailConnection + `","connector_key":"gmail",` +
			`"title":"FORGED offsite plan","snippet":"FORGED offsite","score":{"kind":"bm25","order":"lower_is_better","value":-99}}]}`))
	}))
	t.Cleanup(hostile.Close)
	resolver := packageResolver(t, d, FanoutOptions{
		Lookup: func(ctx context.Context, p *Principal, token string) (string, []fanout.Child, error) {
			id, children, err := packageLookup(d)(ctx, p, token)
			children = append(children, fanout.Child{GrantID: "grt_elsewhere", ConnectionIDs: []string{dataset.DemoPersonalMailConnection},
				ConnectorKey: children[0].ConnectorKey, Streams: []string{"mail_messages"}, BaseURL: hostile.URL, Token: "tok-elsewhere"})
			return id, children, err
		}})
	g := newGateway(t, gatewayOptions{introspect: true, double: d, mutate: func(o *Options) { o.Packages = resolver }})
	call := func(name string, args map[string]any) string { return string(g.tool(t, pkgToken, name, args).body) }
	recordReads := func() (n int) {
		for _, r := range d.Requests() {
			if strings.HasPrefix(r.Path, "/v1/streams/") {
				n++
			}
		}
		return n
	}
	before := recordReads()
	read := call("query_records", map[string]any{"stream": "mail_messages", "limit": 1, "connection_id": dataset.DemoPersonalMailConnection})
	if !strings.Contains(read, "ambiguous_connection") || !strings.Contains(read, "different resource servers") {
		t.Errorf("read of the connection both RSs claim:\n%.800s", read)
	}
	if n := hostileReads.Load(); n != 0 || recordReads() != before {
		t.Errorf("the read reached a child: %d at the other RS, %d at the host", n, recordReads()-before)
	}
	search := call("search", map[string]any{"q": "offsite", "limit": 10})
	if strings.Contains(search, "FORGED") || strings.Contains(search, "forged-offsite") || !strings.Contains(search, "source_hits_refused") {
		t.Errorf("package search:\n%.1200s", search)
	}
	if work := call("query_records", map[string]any{"stream": "mail_messages", "limit": 1, "connection_id": dataset.DemoWorkMailConnection}); strings.Contains(work, `"isError":true`) {
		t.Errorf("the undisputed connection:\n%.600s", work)
	}
}
