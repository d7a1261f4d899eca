package pdpptest

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/tidwall/gjson"
)

// proseDiff matches the places where the document carries our own prose
// instead of the reference's.
var proseDiff = regexp.MustCompile(`^\$\.(pdpp_owner_agent_onboarding\.(control_surface\.actions\[\d+\]\.reason|warning)|resource_name): `)

// TestResourceMetadataMatchesCapture compares the document with the
// reference's capture after mapping the reference's three origins (resource
// server, authorization server, discovery origin) onto the double, which
// plays all three. Only our own prose may differ.
func TestResourceMetadataMatchesCapture(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(fixturesDir, "protected-resource-metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	srv := New(t, Options{})
	for _, origin := range []string{captureHost, "http://127.0.0.1:7662", "http://localhost:3002"} {
		raw = bytes.ReplaceAll(raw, []byte(origin), []byte(srv.URL()))
	}
	want, err := decodeOrdered(raw)
	if err != nil {
		t.Fatal(err)
	}
	a := get(t, srv, "", "/.well-known/oauth-protected-resource")
	wantOK(t, a)
	got, err := decodeOrdered(a.body)
	if err != nil {
		t.Fatal(err)
	}
	var diffs []string
	compareNodes("$", want, got, &diffs)
	prose := 0
	for _, d := range diffs {
		if proseDiff.MatchString(d) {
			prose++
			continue
		}
		t.Error(d)
	}
	if prose == 0 {
		t.Error("no prose differences at all: the reasons were copied, or the filter no longer matches")
	}
	if got := a.j("resource_name").String(); got != srv.Dataset().Provider+" Resource Server" {
		t.Errorf("resource_name = %q", got)
	}
}

func TestResourceMetadata(t *testing.T) {
	for _, tc := range []struct {
		name                       string
		opts                       Options
		semantic, hybrid, paginate bool
	}{
		{"all modes", Options{}, true, true, true},
		{"semantic off", Options{DisableSemantic: true}, false, false, false},
		{"hybrid off", Options{DisableHybrid: true}, true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := New(t, tc.opts)
			// No bearer: the document is public, and a bogus one is ignored.
			for _, tok := range []string{"", "not-a-token"} {
				a := get(t, srv, tok, "/.well-known/oauth-protected-resource")
				wantOK(t, a)
				if ct := a.header.Get("Content-Type"); ct != contentTypeJSON {
					t.Errorf("Content-Type = %q", ct)
				}
				for path, want := range map[string]string{
					"resource":                                srv.URL(),
					"pdpp_core_query_base":                    srv.URL() + "/v1",
					"authorization_servers.0":                 srv.URL(),
					"pdpp_agent_discovery.mcp.endpoint":       srv.URL() + "/mcp",
					"pdpp_agent_discovery.mcp.transport":      "streamable_http",
					"capabilities.lexical_retrieval.endpoint": "/v1/search",
				} {
					if got := a.j(path).String(); got != want {
						t.Errorf("%s = %q, want %q", path, got, want)
					}
				}
				if a.j("links").Exists() || a.j("meta").Exists() {
					t.Errorf("metadata carries a read envelope: %s", a.body)
				}
				if got := a.j("capabilities.semantic_retrieval.supported").Bool(); got != tc.semantic {
					t.Errorf("semantic supported = %v, want %v", got, tc.semantic)
				}
				if got := a.j("capabilities.hybrid_retrieval.supported").Bool(); got != tc.hybrid {
					t.Errorf("hybrid supported = %v, want %v", got, tc.hybrid)
				}
				if got := a.j("pdpp_discovery_hints.hybrid_pagination_supported").Exists(); got != tc.paginate {
					t.Errorf("hybrid_pagination_supported present = %v, want %v", got, tc.paginate)
				}
			}
			// The advertisement and the routes agree.
			owner := srv.Token(TokenOwner)
			for path, mounted := range map[string]bool{
				"/v1/search?q=x":          true,
				"/v1/search/semantic?q=x": tc.semantic,
				"/v1/search/hybrid?q=x":   tc.hybrid,
			} {
				a := get(t, srv, owner, path)
				if mounted {
					wantOK(t, a)
				} else {
					wantError(t, a, http.StatusNotFound, "not_found", "")
				}
			}
		})
	}
}

func TestResourceMetadataMCP(t *testing.T) {
	srv := New(t, Options{})
	a := get(t, srv, "", "/.well-known/oauth-protected-resource/mcp")
	wantOK(t, a)
	for path, want := range map[string]string{
		"resource":                      srv.URL() + "/mcp",
		"resource_name":                 srv.Dataset().Provider + " Hosted MCP Resource",
		"pdpp_core_query_base":          srv.URL() + "/v1",
		"pdpp_token_kinds_supported":    `["client","mcp_package"]`,
		"bearer_methods_supported":      `["header"]`,
		"pdpp_provider_connect_version": providerConnectVersion,
	} {
		if got := a.j(path).Raw; got != want && a.j(path).String() != want {
			t.Errorf("%s = %s, want %s", path, got, want)
		}
	}
	for _, absent := range []string{"capabilities", "pdpp_discovery_hints", "pdpp_agent_discovery"} {
		if a.j(absent).Exists() {
			t.Errorf("%s present on the /mcp document", absent)
		}
	}
}

// TestResourceMetadataFollowsHost: every URL names the host the client used,
// as the 401 challenge does.
func TestResourceMetadataFollowsHost(t *testing.T) {
	srv := New(t, Options{})
	req, err := http.NewRequest(http.MethodGet, srv.URL()+"/.well-known/oauth-protected-resource", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "rs.example.test:8443"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got := gjson.GetBytes(body, "resource").String(); resp.StatusCode != http.StatusOK || got != "http://rs.example.test:8443" {
		t.Errorf("status %d, resource = %q", resp.StatusCode, got)
	}
	if bytes.Contains(body, []byte(srv.URL())) {
		t.Errorf("document still names %s: %s", srv.URL(), body)
	}
}
