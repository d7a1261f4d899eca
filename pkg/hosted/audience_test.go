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
// challenge, also when it names this one too (every audience stated must
// be this resource); one naming only this /mcp or the provider, or
// nothing, is served.
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
		{"aud array naming this /mcp and another", `"aud":[` + other + `,` + self + `]`, 401},
		{"aud array naming this /mcp and a non-string", `"aud":[` + self + `,7]`, 401},
		{"aud array naming this /mcp and an empty string", `"aud":[` + self + `,""]`, 401},
		{"aud this /mcp, resource another", `"aud":` + self + `,"resource":` + other, 401},
		{"aud another, resource this /mcp", `"aud":` + other + `,"resource":` + self, 401},
		{"aud array of this /mcp and the provider", `"aud":[` + self + `,"` + d.URL() + `/"]`, 200},
		{"aud this /mcp, resource the provider", `"aud":` + self + `,"resource":"` + d.URL() + `"`, 200},
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

// TestIntrospectionRepeatedKey: an introspection answer that holds a key
// twice at its top level (whichever: the audience, the verdict, the kind,
// spelled alike or escaped) is the verifier misbehaving: 503
// verifier_unavailable, nothing served and nothing cached, as for any
// answer that cannot be read.
func TestIntrospectionRepeatedKey(t *testing.T) {
	d := pdpptest.New(t, pdpptest.Options{})
	var answer atomic.Value
	intro := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, answer.Load())
	}))
	t.Cleanup(intro.Close)
	in := &Introspector{URL: intro.URL, ClientID: "rs", ClientSecret: "s"}
	g := newGateway(t, gatewayOptions{double: d, mutate: func(o *Options) { o.Verifier = in }})
	self := `"` + g.url + `/mcp"`
	const good = `"active":true,"pdpp_token_kind":"client","grant_id":"grt_1"`
	for i, tc := range []struct{ name, answer string }{
		{"aud", `{` + good + `,"aud":` + self + `,"aud":"https://other-rs.example/mcp"}`},
		{"aud, the other first", `{` + good + `,"aud":"https://other-rs.example/mcp","aud":` + self + `}`},
		{"resource", `{` + good + `,"resource":` + self + `,"resource":` + self + `}`},
		{"aud escaped", `{` + good + `,"aud":` + self + `,"a\u0075d":"https://other-rs.example/mcp"}`},
		{"active", `{"active":false,` + good + `}`},
		{"token kind", `{` + good + `,"pdpp_token_kind":"owner"}`},
		{"grant id", `{` + good + `,"grant_id":"grt_2"}`},
		{"package id", `{` + good + `,"grant_package_id":"p1","grant_package_id":"p2"}`},
		{"token_type", `{` + good + `,"token_type":"Bearer","token_type":"DPoP"}`},
		{"scope", `{` + good + `,"scope":"a","scope":"b"}`},
		{"client_id", `{` + good + `,"client_id":"a","client_id":"b"}`},
		{"exp", `{` + good + `,"exp":1,"exp":4000000000}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answer.Store(tc.answer)
			token := fmt.Sprintf("%s-dup-%d", d.Token(pdpptest.TokenClient), i)
			x := g.do(t, req{token: token, body: initBody})
			if x.status != http.StatusServiceUnavailable || jsonField(t, x.body, "error", "code") != "verifier_unavailable" || x.header.Get("Retry-After") == "" {
				t.Fatalf("status %d, want 503 verifier_unavailable with Retry-After\n%.400s", x.status, x.body)
			}
			// Not cached: the same bearer is served once the answer is sound.
			answer.Store(`{` + good + `,"aud":` + self + `}`)
			if x := g.do(t, req{token: token, body: initBody}); x.status != http.StatusOK {
				t.Errorf("after a sound answer: status %d\n%.400s", x.status, x.body)
			}
		})
	}
}
