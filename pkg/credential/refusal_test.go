package credential

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// TestClassifyRefusal: every status and code an RS may refuse with, and what
// each means for the token, from one table that stdio, fan-out and hosted
// share.
func TestClassifyRefusal(t *testing.T) {
	e := func(status int, code string) error {
		return fmt.Errorf("wrapped: %w", &rs.Error{Status: status, Code: code})
	}
	cases := []struct {
		name string
		err  error
		want Refusal
		dead string
	}{
		{"transport", errors.New("connection refused"), NotRefused, ""},
		{"5xx", e(502, "bad_gateway"), NotRefused, ""},
		{"429", e(429, "rate_limit_exceeded"), NotRefused, ""},
		{"408", e(408, ""), NotRefused, ""},
		{"404", e(404, "not_found"), RefusedRequest, ""},
		{"400", e(400, "invalid_request"), RefusedRequest, ""},
		{"403 other", e(403, "field_not_granted"), RefusedRequest, ""},
		{"401 scope", e(401, "context.stream_not_allowed"), RefusedScope, ""},
		{"401 inactive", e(401, "context.active_false"), RefusedToken, CodeRejected},
		{"401 plain", e(401, "authentication_error"), RefusedToken, CodeRejected},
		{"403 revoked", e(403, "grant_revoked"), RefusedGrant, "grant_revoked"},
		{"403 expired", e(403, "grant_expired"), RefusedGrant, "grant_expired"},
		{"403 invalid", e(403, "grant_invalid"), RefusedGrant, "grant_invalid"},
		{"401 legacy", e(401, "authorization_state.unsupported_legacy_shape"), RefusedGrant, "authorization_state.unsupported_legacy_shape"},
		{"500 grant code", e(500, "grant_revoked"), NotRefused, ""},
		{"reloaded", &RejectedError{Outcome: OutcomeReloaded, Err: &rs.Error{Status: 401}}, RefusedToken, ""},
		{"unchanged", &RejectedError{Outcome: OutcomeUnchanged, Err: &rs.Error{Status: 401}}, RefusedToken, CodeRejected},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := ClassifyRefusal(tc.err); got != tc.want {
				t.Errorf("ClassifyRefusal = %d, want %d", got, tc.want)
			}
			if got := DeadReason(tc.err); got != tc.dead {
				t.Errorf("DeadReason = %q, want %q", got, tc.dead)
			}
			// RefusalCode names the refusal even when a reload already
			// answered it; elsewhere it is DeadReason.
			wantCode := tc.dead
			if tc.name == "reloaded" {
				wantCode = CodeRejected
			}
			if got := RefusalCode(tc.err); got != wantCode {
				t.Errorf("RefusalCode = %q, want %q", got, wantCode)
			}
		})
	}
}

// TestProbeKindOwnerAnySpelling: an RS that spells the owner kind in
// another case or with spaces is still refused, as the cache metadata's
// owner markers are.
func TestProbeKindOwnerAnySpelling(t *testing.T) {
	for _, kind := range []string{"owner", "Owner", "OWNER", " owner ", " oWnEr"} {
		t.Run(kind, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"object":"schema","bearer":{"token_kind":%q}}`, kind)
			}))
			defer hs.Close()
			v, err := ProbeKind(context.Background(), rsClientFor(t, hs.URL, "bearer-0123456789abcdef"))
			if err != nil || !v.Owner || !v.Reported {
				t.Errorf("verdict %+v, %v; want an owner verdict", v, err)
			}
		})
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"schema","bearer":{"token_kind":"owner_agent"}}`)
	}))
	defer hs.Close()
	if v, err := ProbeKind(context.Background(), rsClientFor(t, hs.URL, "bearer-0123456789abcdef")); err != nil || v.Owner {
		t.Errorf("owner_agent: verdict %+v, %v; the owner flag is for owner only", v, err)
	}
}
