package hosted

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout/fanouttest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// TestFanoutResolverServesPackage: the double's own /mcp resolves an
// mcp_package token to its children and the tools read them as one RS; a
// revoked child is reported, not silently dropped.
func TestFanoutResolverServesPackage(t *testing.T) {
	ds, err := dataset.Demo()
	if err != nil {
		t.Fatal(err)
	}
	d := pdpptest.New(t, pdpptest.Options{Dataset: ds, Now: dataset.DemoTime})
	pkgToken, _ := d.IssuePackage(
		pdpptest.PackageChild{ConnectionID: dataset.DemoPersonalMailConnection},
		pdpptest.PackageChild{ConnectionID: dataset.DemoWorkMailConnection},
		pdpptest.PackageChild{ConnectionID: ds.Connector("calendar").Connections[0].ID, Revoked: true},
	)
	resolver, err := FanoutResolver(FanoutOptions{ProviderURL: d.URL(),
		Lookup: func(_ context.Context, _ *Principal, token string) (string, []fanout.Child, error) {
			return fanouttest.PackageChildren(d, token)
		}})
	if err != nil {
		t.Fatal(err)
	}
	g := newGateway(t, gatewayOptions{introspect: true, double: d, mutate: func(o *Options) { o.Packages = resolver }})
	call := func(name string, args map[string]any) string {
		x := g.do(t, req{token: pkgToken, body: rpc(1, "tools/call", map[string]any{"name": name, "arguments": args}),
			header: map[string]string{"MCP-Protocol-Version": "2025-11-25"}})
		if x.status != 200 {
			t.Fatalf("%s: status %d\n%.300s", name, x.status, x.body)
		}
		return string(x.body)
	}
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
