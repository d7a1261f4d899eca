package hosted

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// TestRSVerifierVerdicts: the gateway without introspection, in front of an
// RS that answers the kind check each way an RS can. A 4xx is final (401 or
// 403 at once, saying what the RS said); only outages are 503; and a bearer
// whose kind the RS does not report is never served.
func TestRSVerifierVerdicts(t *testing.T) {
	d := pdpptest.New(t, pdpptest.Options{})
	rsErr := func(code, msg string) string {
		return `{"error":{"code":"` + code + `","message":"` + msg + `","type":"x"}}`
	}
	cases := []struct {
		name       string
		status     int
		body       string
		wantStatus int
		wantCode   string
		wantMsg    []string
	}{
		{"package token at the reference RS", 404, rsErr("not_found", "Unknown source: unknown"), 403, "token_not_accepted",
			[]string{"HTTP 404 not_found", `"Unknown source: unknown"`, "retrying will not help", "provider's own /mcp"}},
		{"bad request", 400, rsErr("invalid_request", "nope"), 403, "token_not_accepted", []string{"HTTP 400 invalid_request"}},
		{"scope refusal", 401, rsErr("context.stream_not_allowed", "x"), 403, "token_not_accepted", nil},
		{"gone", 410, `{}`, 403, "token_not_accepted", []string{"HTTP 410"}},
		{"unknown token", 401, rsErr("authentication_error", "x"), 401, "authentication_error", nil},
		{"revoked grant", 403, rsErr("grant_revoked", "x"), 403, "grant_revoked", nil},
		{"legacy consent", 401, rsErr("authorization_state.unsupported_legacy_shape", "x"), 401, "authorization_state.unsupported_legacy_shape", nil},
		{"rate limited", 429, rsErr("rate_limit_exceeded", "x"), 503, "verifier_unavailable", []string{"retry shortly"}},
		{"request timeout", 408, `{}`, 503, "verifier_unavailable", nil},
		{"outage", 502, rsErr("bad_gateway", "x"), 503, "verifier_unavailable", nil},
		{"no bearer object", 200, `{"object":"schema","streams":[]}`, 403, "permission_error", []string{"did not report this token's kind"}},
		{"kind null", 200, `{"object":"schema","bearer":{"token_kind":null}}`, 403, "permission_error", nil},
		{"kind empty", 200, `{"object":"schema","bearer":{"token_kind":"  "}}`, 403, "permission_error", nil},
		{"kind Owner", 200, `{"object":"schema","bearer":{"token_kind":"Owner"}}`, 403, "permission_error", nil},
		{"kind OWNER_AGENT", 200, `{"object":"schema","bearer":{"token_kind":"OWNER_AGENT"}}`, 403, "permission_error", nil},
		// An answer that cannot be read with certainty gives no verdict:
		// never served, asked again.
		{"not JSON", 200, `{"bearer":{"token_kind":"client"`, 503, "verifier_unavailable", nil},
		{"kind twice, client first", 200, `{"object":"schema","bearer":{"token_kind":"client","token_kind":"owner"}}`, 503, "verifier_unavailable", nil},
		{"bearer twice, escaped", 200, `{"bearer":{"token_kind":"client"},"bear\u0065r":{"token_kind":"owner"}}`, 503, "verifier_unavailable", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var probes atomic.Int32
			hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/v1/schema" {
					d.ServeHTTP(w, r)
					return
				}
				probes.Add(1)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				fmt.Fprint(w, tc.body)
			}))
			t.Cleanup(hostile.Close)
			probe, err := SchemaProbe(hostile.URL, nil, rs.Options{})
			if err != nil {
				t.Fatal(err)
			}
			g := newGateway(t, gatewayOptions{double: d, mutate: func(o *Options) {
				o.ProviderURL = hostile.URL
				o.Verifier = NewCachedVerifier(RSVerifier{Probe: probe}, CacheOptions{})
			}})
			x := g.do(t, req{token: "tok-from-elsewhere", body: initBody})
			if x.status != tc.wantStatus || jsonField(t, x.body, "error", "code") != tc.wantCode {
				t.Fatalf("status %d, want %d %s\n%.400s", x.status, tc.wantStatus, tc.wantCode, x.body)
			}
			msg := fmt.Sprint(jsonField(t, x.body, "error", "message"))
			for _, w := range tc.wantMsg {
				if !strings.Contains(msg, w) {
					t.Errorf("message lacks %q: %s", w, msg)
				}
			}
			retry := x.header.Get("Retry-After") != ""
			if retry != (tc.wantStatus == 503) {
				t.Errorf("Retry-After %q on a %d", x.header.Get("Retry-After"), x.status)
			}
			if challenge := x.header.Get("WWW-Authenticate"); (challenge != "") != (tc.wantStatus == 401) {
				t.Errorf("WWW-Authenticate %q on a %d", challenge, x.status)
			}
			// A final verdict is remembered; an outage is asked again.
			g.do(t, req{token: "tok-from-elsewhere", body: initBody})
			want := int32(1)
			if tc.wantStatus == 503 {
				want = 2
			}
			if got := probes.Load(); got != want {
				t.Errorf("the RS was asked %d times for two requests, want %d", got, want)
			}
		})
	}
}
