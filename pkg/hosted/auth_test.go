package hosted

import (
	"net/http"
	"strings"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

// TestAuthorization covers every refusal path of /mcp over real HTTP, with
// both verifiers: the RS's own answer and RFC 7662 introspection.
func TestAuthorization(t *testing.T) {
	d := pdpptest.New(t, pdpptest.Options{})
	for _, mode := range []string{"rs", "introspect"} {
		t.Run(mode, func(t *testing.T) {
			g := newGateway(t, gatewayOptions{double: d, introspect: mode == "introspect"})
			prm := g.url + PathMetadata
			pkgStatus, pkgCode := http.StatusForbidden, "package_tokens_unsupported"
			if mode == "rs" {
				// Without introspection the RS only says it refuses the token.
				pkgStatus, pkgCode = http.StatusUnauthorized, "context.kind_mismatch"
			}
			unknownCode := "authentication_error"
			if mode == "rs" {
				unknownCode = "context.active_false"
			}
			cases := []struct {
				name       string
				auth       string
				wantStatus int
				wantCode   string
			}{
				{"no header", "", 401, "authentication_error"},
				{"basic scheme", "Basic dXNlcjpwYXNz", 401, "authentication_error"},
				{"lowercase bearer", "bearer " + d.Token(pdpptest.TokenClient), 401, "authentication_error"},
				{"empty bearer", "Bearer ", 401, "authentication_error"},
				{"unknown token", "Bearer " + d.Token(pdpptest.TokenUnknown), 401, unknownCode},
				{"owner token", "Bearer " + d.Token(pdpptest.TokenOwner), 403, "permission_error"},
				{"revoked grant", "Bearer " + d.Token(pdpptest.TokenRevoked), 403, "grant_revoked"},
				{"expired grant", "Bearer " + d.Token(pdpptest.TokenExpired), 403, "grant_expired"},
				{"package token", "Bearer " + d.Token(pdpptest.TokenPackage), pkgStatus, pkgCode},
				{"client token", "Bearer " + d.Token(pdpptest.TokenClient), 200, ""},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					hd := map[string]string{"Authorization": tc.auth}
					x := g.do(t, req{body: initBody, header: hd})
					if x.status != tc.wantStatus {
						t.Fatalf("status %d, want %d\n%s", x.status, tc.wantStatus, x.body)
					}
					if got := x.header.Get("Link"); got != "<"+g.url+`/icon.svg>; rel="icon"; type="image/svg+xml"` {
						t.Errorf("Link = %q", got)
					}
					if tc.wantStatus == 200 {
						if v := jsonField(t, x.body, "result", "serverInfo", "name"); v != "pdpp-mcp" {
							t.Errorf("serverInfo.name = %v", v)
						}
						return
					}
					if got := jsonField(t, x.body, "error", "code"); got != tc.wantCode {
						t.Errorf("error.code = %v, want %s\n%s", got, tc.wantCode, x.body)
					}
					if got := jsonField(t, x.body, "error", "request_id"); got != "req_test" {
						t.Errorf("error.request_id = %v", got)
					}
					challenge := x.header.Get("WWW-Authenticate")
					if tc.wantStatus == 401 {
						if challenge != `Bearer resource_metadata="`+prm+`"` {
							t.Errorf("WWW-Authenticate = %q", challenge)
						}
						if got := jsonField(t, x.body, "error", "resource_metadata"); got != prm {
							t.Errorf("error.resource_metadata = %v", got)
						}
					} else if challenge != "" {
						t.Errorf("403 carries a challenge: %q", challenge)
					}
					if strings.Contains(string(x.body), d.Token(pdpptest.TokenClient)) {
						t.Error("body echoes a token")
					}
				})
			}
		})
	}
}

// TestOwnerTokenServesNothing: an owner bearer never reaches a tool, so the
// RS sees only the kind check, never a data read.
func TestOwnerTokenServesNothing(t *testing.T) {
	g := newGateway(t, gatewayOptions{})
	g.double.ResetRequests()
	x := g.do(t, req{token: g.token(pdpptest.TokenOwner), body: rpc(1, "tools/call", map[string]any{"name": "schema", "arguments": map[string]any{}})})
	if x.status != 403 {
		t.Fatalf("status %d", x.status)
	}
	for _, r := range g.double.Requests() {
		if r.Path != "/v1/schema" || r.RawQuery != "view=compact" {
			t.Errorf("owner token reached the RS with %s %s?%s", r.Method, r.Path, r.RawQuery)
		}
	}
}
