package hosted

import (
	"regexp"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

var hitLines = regexp.MustCompile(`(?m)^\d+\. id=.*$`)

// At hosted /mcp, with a single grant and with a package, the first search
// titles hits by their declared primary-title though every request is
// served by a server built for it; the hit lines are the same after a
// schema call; and each grant's roles are read once across the requests.
func TestHostedTitlesFromTheFirstCall(t *testing.T) {
	d := demoDouble(t)
	pkgToken := mailPackage(d)
	resolver := packageResolver(t, d, FanoutOptions{})
	for _, tc := range []struct {
		name    string
		token   string
		readers int // bearers that read the roles: the grant, or each member
	}{
		{"grant", d.Token(pdpptest.TokenClient), 1},
		{"package", pkgToken, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGateway(t, gatewayOptions{introspect: true, double: d, mutate: func(o *Options) { o.Packages = resolver }})
			call := func(name string, args map[string]any) gjson.Result {
				// A fresh server for every request: what is shared lives
				// above it.
				g.h.servers = newServerCache(DefaultServerCacheEntries)
				x := g.tool(t, tc.token, name, args)
				r := gjson.GetBytes(x.body, "result")
				if r.Get("isError").Bool() {
					t.Fatalf("%s: an error result\n%.400s", name, x.body)
				}
				return r
			}
			d.ResetRequests()
			search := map[string]any{"q": "launch", "streams": []string{"mail_messages"}, "limit": 10}
			first := call("search", search)
			titled := 0
			first.Get("structuredContent.results").ForEach(func(_, r gjson.Result) bool {
				plain := strings.NewReplacer("<mark>", "", "</mark>", "").Replace(r.Get("snippet").Str)
				if strings.Contains(plain, "launch") && plain == r.Get("title").Str {
					titled++
				}
				return true
			})
			if titled == 0 {
				t.Fatalf("no hit titled by its subject on the first call:\n%.1500s", first.Raw)
			}
			for _, q := range []string{"receipt", "Lisbon"} {
				call("search", map[string]any{"q": q, "limit": 5})
			}
			reads := map[string]int{}
			for _, r := range d.Requests() {
				if r.Path == "/v1/schema" && r.RawQuery == "view=compact" {
					reads[r.Header.Get("Authorization")]++
				}
			}
			if len(reads) != tc.readers {
				t.Errorf("the roles were read by %d bearers, want %d", len(reads), tc.readers)
			}
			for _, n := range reads {
				if n != 1 {
					t.Errorf("the roles were read %d times by one bearer over three requests, want once", n)
				}
			}
			call("schema", map[string]any{})
			again := call("search", search)
			before := hitLines.FindAllString(first.Get("content.0.text").Str, -1)
			after := hitLines.FindAllString(again.Get("content.0.text").Str, -1)
			if len(before) == 0 || strings.Join(before, "\n") != strings.Join(after, "\n") {
				t.Errorf("hit lines changed after schema:\nbefore:\n%s\nafter:\n%s", strings.Join(before, "\n"), strings.Join(after, "\n"))
			}
		})
	}
}
