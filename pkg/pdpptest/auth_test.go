package pdpptest

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestAuthentication(t *testing.T) {
	ds := gmailWith(t, map[string]string{
		"narrow": narrowGrant,
		"lapsed": strings.Replace(narrowGrant, `"version": "0.1.0",`, `"version": "0.1.0", "expires_at": "2026-01-01T00:00:00Z",`, 1),
	})
	srv := New(t, Options{Dataset: ds, Now: func() time.Time { return time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC) }})
	revoked := srv.IssueClientToken("client")
	srv.RevokeToken(revoked)

	for _, tc := range []struct {
		name   string
		header string // full Authorization header value; "" sends none
		status int
		code   string
	}{
		{"owner", "Bearer " + srv.Token(TokenOwner), 200, ""},
		{"client", "Bearer " + srv.Token(TokenClient), 200, ""},
		{"issued client token", "Bearer " + srv.IssueClientToken("narrow"), 200, ""},
		{"scheme is case-insensitive", "bearer " + srv.Token(TokenClient), 200, ""},
		{"no header", "", 401, "authentication_error"},
		{"basic scheme", "Basic dXNlcjpwYXNz", 401, "authentication_error"},
		{"empty bearer", "Bearer ", 401, "authentication_error"},
		{"unknown token", "Bearer " + srv.Token(TokenUnknown), 401, "context.active_false"},
		{"revoked token", "Bearer " + revoked, 401, "context.active_false"},
		{"grant revoked", "Bearer " + srv.Token(TokenRevoked), 403, "grant_revoked"},
		{"grant expired", "Bearer " + srv.Token(TokenExpired), 403, "grant_expired"},
		{"grant past expires_at", "Bearer " + srv.IssueClientToken("lapsed"), 403, "grant_expired"},
		{"package token on /v1", "Bearer " + srv.Token(TokenPackage), 401, "context.kind_mismatch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a answer
			if tc.header == "" {
				a = get(t, srv, "", "/v1/schema")
			} else {
				a = get(t, srv, "", "/v1/schema", "Authorization", tc.header)
			}
			if tc.code == "" {
				wantOK(t, a)
				return
			}
			wantError(t, a, tc.status, tc.code, "")
			if tc.status != http.StatusUnauthorized {
				if a.header.Get("WWW-Authenticate") != "" {
					t.Errorf("a %d carries a challenge", tc.status)
				}
				return
			}
			prm := srv.URL() + "/.well-known/oauth-protected-resource"
			if got, want := a.header.Get("WWW-Authenticate"), `Bearer resource_metadata="`+prm+`"`; got != want {
				t.Errorf("WWW-Authenticate = %q, want %q", got, want)
			}
			if a.j("error.resource_metadata").String() != prm || a.j("error.next_step").String() == "" {
				t.Errorf("401 body lacks resource_metadata/next_step: %s", a.body)
			}
		})
	}
}

func TestTokensAreOpaqueAndDistinct(t *testing.T) {
	srv := New(t, Options{})
	seen := map[string]TokenKind{}
	for _, k := range TokenKinds() {
		tok := srv.Token(k)
		if strings.Contains(tok, string(k)) {
			t.Errorf("token of kind %s reveals its kind: %s", k, tok)
		}
		if prev, dup := seen[tok]; dup {
			t.Errorf("kinds %s and %s share a token", prev, k)
		}
		seen[tok] = k
	}
	if a, b := srv.IssueClientToken("client"), srv.IssueClientToken("client"); a == b {
		t.Error("IssueClientToken returned the same token twice")
	}
}

func TestClientBan(t *testing.T) {
	srv := New(t, Options{})
	client := srv.Token(TokenClient)
	for _, tc := range []struct {
		target, param string
	}{
		{"/v1/streams/messages/records?filter[is_seen]=true", "filter"},
		{"/v1/streams/messages/records?filter[received_at][gte]=2026-01-01", "filter"},
		{"/v1/streams/messages/records?expand=attachments", "expand"},
		{"/v1/streams/messages/records?expand[]=attachments", "expand"},
		{"/v1/streams/messages/records?expand_limit[attachments]=2", "expand_limit"},
		{"/v1/streams/messages/records/p_msg_002?connection_id=cin_gmail_personal&expand=attachments", "expand"},
		{"/v1/streams/messages/aggregate?metric=count&filter[is_seen]=true", "filter"},
		// The ban comes before parameter validation.
		{"/v1/streams/messages/records?filter[x]=1&bogus=1&limit=abc", "filter"},
	} {
		t.Run(tc.target, func(t *testing.T) {
			wantError(t, get(t, srv, client, tc.target), 400, "invalid_request", tc.param)
		})
	}
	// Owners may filter and expand.
	a := get(t, srv, srv.Token(TokenOwner), "/v1/streams/messages/records?connector_id=gmail&filter[is_seen]=true&expand=attachments")
	wantOK(t, a)
}

func TestCommonHeaders(t *testing.T) {
	srv := New(t, Options{})
	client := srv.Token(TokenClient)

	a := get(t, srv, client, "/v1/streams")
	wantOK(t, a)
	if !regexp.MustCompile(`^req_[0-9a-f]{16}$`).MatchString(a.header.Get("Request-Id")) {
		t.Errorf("generated Request-Id = %q", a.header.Get("Request-Id"))
	}
	if a.header.Get("PDPP-Version") != "2026-04-06" {
		t.Errorf("PDPP-Version = %q", a.header.Get("PDPP-Version"))
	}
	if a.header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Errorf("Content-Type = %q", a.header.Get("Content-Type"))
	}

	a = get(t, srv, client, "/v1/streams", "Request-Id", "req_from_caller")
	if a.header.Get("Request-Id") != "req_from_caller" {
		t.Errorf("Request-Id not echoed: %q", a.header.Get("Request-Id"))
	}
	a = get(t, srv, client, "/v1/streams/nope/records", "Request-Id", "req_echo_in_error")
	if a.j("error.request_id").String() != "req_echo_in_error" {
		t.Errorf("error.request_id = %q", a.j("error.request_id"))
	}

	wantOK(t, get(t, srv, client, "/v1/streams", "PDPP-Version", "2026-04-06"))
	a = get(t, srv, client, "/v1/streams", "PDPP-Version", "2025-01-01")
	wantError(t, a, 400, "unsupported_version", "")
	if a.header.Get("PDPP-Version") != "2026-04-06" {
		t.Errorf("a rejected version still gets the server's version header")
	}
}

func TestRoutesOutsideTheReadAPI(t *testing.T) {
	srv := New(t, Options{})
	wantError(t, get(t, srv, srv.Token(TokenClient), "/v1/owner/connections"), 403, "permission_error", "")
	wantError(t, get(t, srv, srv.Token(TokenOwner), "/v1/owner/connections"), 501, "not_implemented", "")
	wantError(t, get(t, srv, srv.Token(TokenClient), "/v1/nothing-here"), 404, "not_found", "")
}

func TestErrorType(t *testing.T) {
	for status, want := range map[int]string{
		400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
		404: "not_found_error", 409: "api_error", 410: "gone_error", 413: "request_entity_too_large_error",
		422: "api_error", 429: "rate_limit_error", 500: "api_error", 501: "api_error",
	} {
		if got := errorType(status); got != want {
			t.Errorf("errorType(%d) = %q, want %q", status, got, want)
		}
	}
}
