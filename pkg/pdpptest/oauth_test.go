package pdpptest

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// asClientFor registers a public client with one loopback redirect URI.
func asClientFor(t *testing.T, s *Server) (clientID, redirect string) {
	t.Helper()
	redirect = "http://127.0.0.1:1/cb"
	status, body := asPost(t, s.URL()+PathRegister, "application/json", `{"redirect_uris":["`+redirect+`"],"client_name":"t"}`)
	var reg map[string]any
	if err := json.Unmarshal([]byte(body), &reg); err != nil || status != http.StatusCreated {
		t.Fatalf("register: %d %s", status, body)
	}
	return reg["client_id"].(string), redirect
}

var noRedirect = &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func asPost(t *testing.T, u, ctype, body string) (int, string) {
	t.Helper()
	resp, err := noRedirect.Post(u, ctype, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func asGet(t *testing.T, u string) *http.Response {
	t.Helper()
	resp, err := noRedirect.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestOAuthMetadata(t *testing.T) {
	s := New(t, Options{})
	var md map[string]any
	resp := asGet(t, s.URL()+PathASMetadata)
	if err := json.NewDecoder(resp.Body).Decode(&md); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{
		"issuer": s.URL(), "authorization_endpoint": s.URL() + PathAuthorize, "token_endpoint": s.URL() + PathToken,
		"registration_endpoint": s.URL() + PathRegister,
	} {
		if md[k] != want {
			t.Errorf("%s = %v, want %v", k, md[k], want)
		}
	}
	if got, _ := json.Marshal(md["code_challenge_methods_supported"]); string(got) != `["S256"]` {
		t.Errorf("code_challenge_methods_supported = %s", got)
	}
	// A browser-based client may register: the preflight is answered.
	req, _ := http.NewRequest(http.MethodOptions, s.URL()+PathRegister, nil)
	req.Header.Set("Origin", "http://localhost:6274")
	req.Header.Set("Access-Control-Request-Method", "POST")
	pre, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	pre.Body.Close()
	if pre.StatusCode != http.StatusNoContent || pre.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("registration preflight: %d, Allow-Origin %q", pre.StatusCode, pre.Header.Get("Access-Control-Allow-Origin"))
	}
}

func TestOAuthRegister(t *testing.T) {
	s := New(t, Options{})
	for _, tt := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"not JSON", `{`, 400, "invalid_client_metadata"},
		{"no redirect", `{"client_name":"x"}`, 400, "invalid_redirect_uri"},
		{"http off loopback", `{"redirect_uris":["http://evil.example/cb"]}`, 400, "invalid_redirect_uri"},
		{"http on a name ending in localhost", `{"redirect_uris":["http://localhost.evil.example/cb"]}`, 400, "invalid_redirect_uri"},
		{"http on another loopback address", `{"redirect_uris":["http://127.0.0.2:9/cb"]}`, 201, `"client_id"`},
		{"fragment", `{"redirect_uris":["http://127.0.0.1/cb#x"]}`, 400, "invalid_redirect_uri"},
		{"javascript", `{"redirect_uris":["javascript:alert(1)"]}`, 400, "invalid_redirect_uri"},
		{"client credentials", `{"redirect_uris":["http://localhost/cb"],"grant_types":["client_credentials"]}`, 400, "invalid_client_metadata"},
		{"too large", `{"client_name":"` + strings.Repeat("x", maxRegistrationBytes) + `"}`, 400, "invalid_client_metadata"},
		{"public client", `{"redirect_uris":["http://localhost:3334/oauth/callback"],"token_endpoint_auth_method":"client_secret_basic"}`, 201, `"token_endpoint_auth_method":"none"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, body := asPost(t, s.URL()+PathRegister, "application/json", tt.body)
			if status != tt.status || !strings.Contains(body, tt.want) {
				t.Errorf("%d %.200s; want %d and %s", status, body, tt.status, tt.want)
			}
			if status == 201 && strings.Contains(body, "client_secret") {
				t.Errorf("a public client got a secret: %s", body)
			}
		})
	}
}

// authorizeURL builds an authorization request with PKCE S256 unless the
// caller overrides a parameter ("" deletes it).
func authorizeURL(s *Server, clientID, redirect, verifier string, override map[string]string) string {
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect}, "state": {"xyz"},
		"code_challenge": {oauth2.S256ChallengeFromVerifier(verifier)}, "code_challenge_method": {"S256"},
		"resource": {s.URL() + "/mcp"}}
	for k, v := range override {
		if v == "" {
			q.Del(k)
		} else {
			q.Set(k, v)
		}
	}
	return s.URL() + PathAuthorize + "?" + q.Encode()
}

func TestOAuthAuthorizeRequest(t *testing.T) {
	s := New(t, Options{})
	id, redirect := asClientFor(t, s)
	verifier := oauth2.GenerateVerifier()
	for _, tt := range []struct {
		name     string
		override map[string]string
		status   int
		errCode  string // the error redirected back; "" for a page
	}{
		{"consent page", nil, 200, ""},
		{"unknown client: no redirect", map[string]string{"client_id": "dcr_nope"}, 400, ""},
		{"unregistered redirect: no redirect", map[string]string{"redirect_uri": "http://127.0.0.1:2/cb"}, 400, ""},
		{"plain PKCE", map[string]string{"code_challenge_method": "plain"}, 302, "invalid_request"},
		{"no PKCE", map[string]string{"code_challenge": "", "code_challenge_method": ""}, 302, "invalid_request"},
		{"implicit", map[string]string{"response_type": "token"}, 302, "unsupported_response_type"},
		{"resource elsewhere", map[string]string{"resource": "https://other.example/mcp"}, 302, "invalid_target"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := asGet(t, authorizeURL(s, id, redirect, verifier, tt.override))
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %.300s", resp.StatusCode, tt.status, b)
			}
			loc, _ := url.Parse(resp.Header.Get("Location"))
			switch {
			case tt.errCode != "" && (loc.Query().Get("error") != tt.errCode || loc.Query().Get("state") != "xyz" || !strings.HasPrefix(loc.String(), redirect)):
				t.Errorf("Location %q, want %s?error=%s&state=xyz", loc, redirect, tt.errCode)
			case tt.errCode == "" && resp.Header.Get("Location") != "":
				t.Errorf("redirected to %q; a bad client or redirect URI must not be redirected to", loc)
			case tt.errCode == "" && (strings.Contains(string(b), "<script") || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'")):
				t.Errorf("the page may run scripts: CSP %q", resp.Header.Get("Content-Security-Policy"))
			}
		})
	}
}

func TestOAuthConsentAndTokens(t *testing.T) {
	s := New(t, Options{})
	id, redirect := asClientFor(t, s)
	cfg := &oauth2.Config{ClientID: id, RedirectURL: redirect,
		Endpoint: oauth2.Endpoint{AuthURL: s.URL() + PathAuthorize, TokenURL: s.URL() + PathToken, AuthStyle: oauth2.AuthStyleInParams}}
	ctx := t.Context()

	// answer shows the consent page and posts the form with the first n
	// sources and the decision; mutate may change the form first.
	answer := func(verifier string, n int, decision string, mutate func(url.Values)) (*http.Response, url.Values) {
		t.Helper()
		resp := asGet(t, authorizeURL(s, id, redirect, verifier, nil))
		page, _ := io.ReadAll(resp.Body)
		form := url.Values{"decision": {decision}}
		for _, m := range regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`).FindAllStringSubmatch(string(page), -1) {
			form.Set(m[1], strings.ReplaceAll(m[2], "&amp;", "&"))
		}
		for i, m := range regexp.MustCompile(`name="source" value="([^"]+)"`).FindAllStringSubmatch(string(page), -1) {
			if i < n {
				form.Add("source", m[1])
			}
		}
		if mutate != nil {
			mutate(form)
		}
		r, err := noRedirect.PostForm(s.URL()+PathAuthorize, form)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		return r, form
	}
	code := func(r *http.Response) string {
		loc, _ := url.Parse(r.Header.Get("Location"))
		return loc.Query().Get("code")
	}

	t.Run("deny", func(t *testing.T) {
		r, _ := answer(oauth2.GenerateVerifier(), 1, "deny", nil)
		if loc := r.Header.Get("Location"); r.StatusCode != 302 || !strings.Contains(loc, "error=access_denied") {
			t.Errorf("%d %q; want a redirect with error=access_denied", r.StatusCode, loc)
		}
	})
	t.Run("nonce is single-use and tied to its request", func(t *testing.T) {
		r, form := answer(oauth2.GenerateVerifier(), 1, "approve", nil)
		if r.StatusCode != 302 || code(r) == "" {
			t.Fatalf("first answer: %d %q", r.StatusCode, r.Header.Get("Location"))
		}
		r2, err := noRedirect.PostForm(s.URL()+PathAuthorize, form)
		if err != nil {
			t.Fatal(err)
		}
		r2.Body.Close()
		if r2.StatusCode != 400 {
			t.Errorf("replayed consent: %d, want 400", r2.StatusCode)
		}
		r3, _ := answer(oauth2.GenerateVerifier(), 1, "approve", func(f url.Values) {
			f.Set("code_challenge", oauth2.S256ChallengeFromVerifier("x"+oauth2.GenerateVerifier()))
		})
		if r3.StatusCode != 400 {
			t.Errorf("consent for a changed request: %d, want 400", r3.StatusCode)
		}
	})
	t.Run("wrong verifier", func(t *testing.T) {
		r, _ := answer(oauth2.GenerateVerifier(), 1, "approve", nil)
		_, err := cfg.Exchange(ctx, code(r), oauth2.VerifierOption(oauth2.GenerateVerifier()))
		if re := (*oauth2.RetrieveError)(nil); !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
			t.Errorf("exchange with another verifier: %v; want invalid_grant", err)
		}
	})
	for _, tt := range []struct {
		name    string
		sources int
		kind    string
	}{
		{"one source gives a client token", 1, "client"},
		{"two sources give a package token", 2, "mcp_package"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := oauth2.GenerateVerifier()
			r, _ := answer(v, tt.sources, "approve", nil)
			c := code(r)
			tok, err := cfg.Exchange(ctx, c, oauth2.VerifierOption(v))
			if err != nil {
				t.Fatal(err)
			}
			in := introspect(t, s, tok.AccessToken)
			if in["active"] != true || in["pdpp_token_kind"] != tt.kind || in["aud"] != s.URL()+"/mcp" {
				t.Errorf("introspection %v; want active %s with aud %s/mcp", in, tt.kind, s.URL())
			}
			if _, err := cfg.Exchange(ctx, c, oauth2.VerifierOption(v)); err == nil {
				t.Error("a code was exchanged twice")
			}
			fresh, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
			if err != nil {
				t.Fatal(err)
			}
			if in := introspect(t, s, fresh.AccessToken); in["active"] != true || in["pdpp_token_kind"] != tt.kind {
				t.Errorf("refreshed token: %v", in)
			}
			if in := introspect(t, s, tok.AccessToken); in["active"] != false {
				t.Errorf("the access token a refresh replaced is still active: %v", in)
			}
		})
	}
}

func introspect(t *testing.T, s *Server, tok string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.IntrospectionURL(), strings.NewReader(url.Values{"token": {tok}}.Encode()))
	req.SetBasicAuth(IntrospectionClientID, IntrospectionClientSecret)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestTokenSeed(t *testing.T) {
	a, b := New(t, Options{TokenSeed: "s"}), New(t, Options{TokenSeed: "s"})
	c := New(t, Options{})
	for _, k := range TokenKinds() {
		if a.Token(k) != b.Token(k) {
			t.Errorf("%s: two starts with one seed gave different tokens", k)
		}
		if a.Token(k) == c.Token(k) {
			t.Errorf("%s: a seeded token equals an unseeded one", k)
		}
	}
	if _, m1, err := a.PackageMembers(a.Token(TokenPackage)); err != nil || len(m1) == 0 {
		t.Fatalf("package members: %v", err)
	} else if _, m2, _ := b.PackageMembers(b.Token(TokenPackage)); m1[0].Token != m2[0].Token {
		t.Error("seeded package children differ between starts")
	}
}
