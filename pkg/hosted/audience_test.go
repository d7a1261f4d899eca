package hosted

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

// TestAudience: an introspection answer that is active, for a client
// token, but names another resource in aud or resource is refused with the
// challenge; one naming this /mcp, the provider, or nothing is served.
func TestAudience(t *testing.T) {
	d := pdpptest.New(t, pdpptest.Options{})
	const other = `"https://other-rs.example/mcp"`
	var answer atomic.Value
	intro := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, answer.Load())
	}))
	t.Cleanup(intro.Close)
	in := &Introspector{URL: intro.URL, ClientID: "rs", ClientSecret: "s"}
	g := newGateway(t, gatewayOptions{double: d, mutate: func(o *Options) { o.Verifier = in }})
	self := `"` + g.url + `/mcp"`
	cases := []struct {
		name   string
		fields string
		want   int
	}{
		{"aud another server", `"aud":` + other, 401},
		{"aud array of others", `"aud":[` + other + `,"https://x.example"]`, 401},
		{"resource another server", `"resource":` + other, 401},
		{"aud empty array", `"aud":[]`, 401},
		{"aud a number", `"aud":42`, 401},
		{"aud an object", `"aud":{"x":` + self + `}`, 401},
		{"aud another, resource null", `"aud":` + other + `,"resource":null`, 401},
		{"aud this /mcp", `"aud":` + self, 200},
		{"aud this /mcp with a slash", `"aud":"` + g.url + `/mcp/"`, 200},
		{"aud array naming this /mcp", `"aud":[` + other + `,` + self + `]`, 200},
		{"resource this /mcp", `"resource":` + self, 200},
		{"aud the provider", `"aud":"` + d.URL() + `"`, 200},
		{"resource the provider's /mcp", `"resource":"` + d.URL() + `/mcp"`, 200},
		{"no audience", ``, 200},
		{"aud null", `"aud":null`, 200},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := `{"active":true,"pdpp_token_kind":"client","grant_id":"grt_1"`
			if tc.fields != "" {
				a += "," + tc.fields
			}
			answer.Store(a + "}")
			// Introspection answers are not cached here, but every case
			// uses its own bearer anyway.
			x := g.do(t, req{token: fmt.Sprintf("%s-%d", d.Token(pdpptest.TokenClient), i), body: initBody})
			if x.status != tc.want {
				t.Fatalf("status %d, want %d\n%.400s", x.status, tc.want, x.body)
			}
			if tc.want == 401 {
				if jsonField(t, x.body, "error", "code") != "invalid_token" || x.header.Get("WWW-Authenticate") == "" {
					t.Errorf("refusal without the challenge or code: %v\n%s", x.header, x.body)
				}
			}
		})
	}
}
