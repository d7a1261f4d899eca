package hosted

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// FuzzIntrospectionAnswer: whatever the endpoint answers, a principal comes
// out only for valid JSON with "active": true and a kind; anything else is
// a 401/403 refusal or, for a broken answer, undecided (never cached).
func FuzzIntrospectionAnswer(f *testing.F) {
	for _, s := range []string{
		`{"active":true,"pdpp_token_kind":"client","grant_id":"g","exp":1900000000}`,
		`{"active":false,"inactive_reason":"grant_revoked"}`,
		`{"active":"true","pdpp_token_kind":"owner"}`,
		`{"active":true,"exp":"soon"}`,
		`[]`, `null`, `{"active":true,"pdpp_token_kind":""}`,
	} {
		f.Add(s)
	}
	in := &Introspector{Now: func() time.Time { return time.Unix(1_800_000_000, 0) }}
	f.Fuzz(func(t *testing.T, body string) {
		p, err := in.principal([]byte(body))
		if err == nil {
			if p == nil || p.Kind == "" || !json.Valid([]byte(body)) || !strings.Contains(body, "true") {
				t.Fatalf("accepted %q as %+v", body, p)
			}
			return
		}
		ae, ok := err.(*AuthError)
		if !ok && !json.Valid([]byte(body)) {
			return // undecided: answered 503, never served
		}
		if !ok || (ae.Status != http.StatusUnauthorized && ae.Status != http.StatusForbidden) {
			t.Fatalf("refusal %v for %q", err, body)
		}
	})
}

// FuzzHostRules: the host check never panics, and an accepted host-derived
// origin is always scheme://host with nothing after the host.
func FuzzHostRules(f *testing.F) {
	for _, s := range []string{"127.0.0.1:8080", "evil.example", "[::1]:80", "a.trusted.example", "x/y@z", "10.0.0.1", ""} {
		f.Add(s, "")
		f.Add(s, "a.trusted.example")
	}
	h := &Handler{o: Options{TrustedHosts: []string{"*.trusted.example"}}}
	f.Fuzz(func(t *testing.T, host, fwd string) {
		r := &http.Request{Host: host, Header: http.Header{"X-Forwarded-Host": {fwd}}, RemoteAddr: "127.0.0.1:1"}
		base, _, herr := h.resolveOrigin(r)
		if herr != nil {
			return
		}
		rest, ok := strings.CutPrefix(base, "http://")
		if !ok || rest == "" || strings.ContainsAny(rest, "/?#@ \"<>\\") {
			t.Fatalf("host %q gave origin %q", host, base)
		}
	})
}
