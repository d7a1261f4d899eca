package pdpptest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// clock is a settable clock for the authorization server.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// register registers a public client with one redirect URI on base.
func register(t *testing.T, base, redirect string) string {
	t.Helper()
	status, body := asPost(t, base+PathRegister, "application/json", `{"redirect_uris":["`+redirect+`"],"client_name":"t"}`)
	var reg map[string]any
	if err := json.Unmarshal([]byte(body), &reg); err != nil || status != http.StatusCreated {
		t.Fatalf("register: %d %s", status, body)
	}
	return reg["client_id"].(string)
}

// asClientFor registers a public client with one loopback redirect URI.
func asClientFor(t *testing.T, s *Server) (clientID, redirect string) {
	t.Helper()
	redirect = "http://127.0.0.1:1/cb"
	return register(t, s.URL(), redirect), redirect
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
		"registration_endpoint": s.URL() + PathRegister, "authorization_response_iss_parameter_supported": true,
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
		{"redirect URIs too long together", `{"redirect_uris":["https://a.example/` + strings.Repeat("x", 1500) + `","https://b.example/` + strings.Repeat("x", 1500) + `"]}`, 400, "invalid_redirect_uri"},
		{"name too long", `{"redirect_uris":["http://localhost/cb"],"client_name":"` + strings.Repeat("x", maxClientNameBytes+1) + `"}`, 400, "client_name"},
		{"name with a control character", `{"redirect_uris":["http://localhost/cb"],"client_name":"a\u0007"}`, 400, "client_name"},
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

// TestOAuthRegistrationKeepsNothing: a client id carries its registration,
// so registering keeps no state and is never refused for lack of room
// (the server used to keep every client, and refuse the 10,001st).
func TestOAuthRegistrationKeepsNothing(t *testing.T) {
	s := New(t, Options{})
	body := `{"redirect_uris":["http://127.0.0.1:1/cb"],"client_name":"flood"}`
	for i := range 10_001 {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1"+PathRegister, strings.NewReader(body))
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			t.Fatalf("registration %d: %d %s", i+1, rec.Code, rec.Body)
		}
	}
	s.as.mu.Lock()
	defer s.as.mu.Unlock()
	if n := s.as.pending.len() + s.as.families.len(); n != 0 {
		t.Errorf("registrations left %d entries of state", n)
	}
}

// authorizeURL builds an authorization request with PKCE S256 unless the
// caller overrides a parameter ("" deletes it).
func authorizeURL(base, clientID, redirect, verifier string, override map[string]string) string {
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect}, "state": {"xyz"},
		"code_challenge": {oauth2.S256ChallengeFromVerifier(verifier)}, "code_challenge_method": {"S256"},
		"resource": {base + "/mcp"}}
	for k, v := range override {
		if v == "" {
			q.Del(k)
		} else {
			q.Set(k, v)
		}
	}
	return base + PathAuthorize + "?" + q.Encode()
}

// TestOAuthAuthorizeRequest: every fault of an authorization request is
// shown on the page, never redirected, whatever the client registered: a
// redirect URI anyone can register proves nothing, and redirecting errors
// to it unasked makes an open redirector.
func TestOAuthAuthorizeRequest(t *testing.T) {
	s := New(t, Options{})
	id, redirect := asClientFor(t, s)
	evil := register(t, s.URL(), "https://evil.example/landing")
	verifier := oauth2.GenerateVerifier()
	for _, tt := range []struct {
		name     string
		client   string
		redirect string
		override map[string]string
		status   int
		page     string
	}{
		{"consent page", id, redirect, nil, 200, "Share data with"},
		{"unknown client", id, redirect, map[string]string{"client_id": "dcr_nope"}, 400, "Unknown client_id"},
		{"client id sealed under another key", "dcr_" + strings.Repeat("A", 60), redirect, nil, 400, "Unknown client_id"},
		{"unregistered redirect", id, "http://127.0.0.1:2/cb", nil, 400, "not one the client registered"},
		{"plain PKCE", id, redirect, map[string]string{"code_challenge_method": "plain"}, 400, "PKCE"},
		{"no PKCE", id, redirect, map[string]string{"code_challenge": "", "code_challenge_method": ""}, 400, "PKCE"},
		{"malformed challenge", id, redirect, map[string]string{"code_challenge": "short"}, 400, "PKCE"},
		{"implicit", id, redirect, map[string]string{"response_type": "token"}, 400, "response_type"},
		{"resource elsewhere", id, redirect, map[string]string{"resource": "https://other.example/mcp"}, 400, "does not serve"},
		{"open redirect through a registered https URI", evil, "https://evil.example/landing", map[string]string{"response_type": "x"}, 400, "response_type"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := asGet(t, authorizeURL(s.URL(), tt.client, tt.redirect, verifier, tt.override))
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status || !strings.Contains(string(b), tt.page) {
				t.Fatalf("status %d, want %d with %q: %.300s", resp.StatusCode, tt.status, tt.page, b)
			}
			if loc := resp.Header.Get("Location"); loc != "" {
				t.Errorf("redirected to %q; faults of the request are shown on the page", loc)
			}
			if strings.Contains(string(b), "<script") || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") {
				t.Errorf("the page may run scripts: CSP %q", resp.Header.Get("Content-Security-Policy"))
			}
		})
	}
}

// consentFlow drives the consent page of one authorization server for one
// registered client.
type consentFlow struct {
	t        *testing.T
	base     string
	id       string
	redirect string
	cfg      *oauth2.Config
}

func newConsentFlow(t *testing.T, base, id, redirect string) *consentFlow {
	return &consentFlow{t: t, base: base, id: id, redirect: redirect, cfg: &oauth2.Config{ClientID: id, RedirectURL: redirect,
		Endpoint: oauth2.Endpoint{AuthURL: base + PathAuthorize, TokenURL: base + PathToken, AuthStyle: oauth2.AuthStyleInParams}}}
}

var (
	hiddenRE = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)
	sourceRE = regexp.MustCompile(`name="source" value="([^"]+)"`)
)

// formOf reads the consent form of page, ticking its first n sources.
func formOf(page string, n int, decision string) url.Values {
	form := url.Values{"decision": {decision}}
	for _, m := range hiddenRE.FindAllStringSubmatch(page, -1) {
		form.Set(m[1], strings.ReplaceAll(m[2], "&amp;", "&"))
	}
	for i, m := range sourceRE.FindAllStringSubmatch(page, -1) {
		if i < n {
			form.Add("source", m[1])
		}
	}
	return form
}

// answer shows the consent page and posts the form with the first n
// sources and the decision; mutate may change the form first.
func (f *consentFlow) answer(verifier string, n int, decision string, mutate func(url.Values)) (*http.Response, url.Values) {
	f.t.Helper()
	resp := asGet(f.t, authorizeURL(f.base, f.id, f.redirect, verifier, nil))
	page, _ := io.ReadAll(resp.Body)
	form := formOf(string(page), n, decision)
	if mutate != nil {
		mutate(form)
	}
	return f.post(form), form
}

func (f *consentFlow) post(form url.Values) *http.Response {
	f.t.Helper()
	r, err := noRedirect.PostForm(f.base+PathAuthorize, form)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { r.Body.Close() })
	return r
}

// code approves one or more sources and returns the code.
func (f *consentFlow) code(verifier string, n int) string {
	f.t.Helper()
	r, _ := f.answer(verifier, n, "approve", nil)
	c := location(r).Get("code")
	if r.StatusCode != http.StatusFound || c == "" {
		f.t.Fatalf("approve: %d %q", r.StatusCode, r.Header.Get("Location"))
	}
	return c
}

func location(r *http.Response) url.Values {
	loc, _ := url.Parse(r.Header.Get("Location"))
	if loc == nil {
		return url.Values{}
	}
	return loc.Query()
}

// tokenError is the status and error code of a refused token request.
func tokenError(err error) (int, string) {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return 0, fmt.Sprint(err)
	}
	return re.Response.StatusCode, re.ErrorCode
}

func TestOAuthConsentAndTokens(t *testing.T) {
	s := New(t, Options{})
	id, redirect := asClientFor(t, s)
	f := newConsentFlow(t, s.URL(), id, redirect)
	ctx := t.Context()

	t.Run("deny goes back with the issuer", func(t *testing.T) {
		r, _ := f.answer(oauth2.GenerateVerifier(), 1, "deny", nil)
		q := location(r)
		if r.StatusCode != 302 || q.Get("error") != "access_denied" || q.Get("state") != "xyz" || q.Get("iss") != s.URL() {
			t.Errorf("%d %q; want a redirect with error=access_denied, the state and iss=%s", r.StatusCode, r.Header.Get("Location"), s.URL())
		}
	})
	t.Run("approve goes back with the issuer", func(t *testing.T) {
		r, _ := f.answer(oauth2.GenerateVerifier(), 1, "approve", nil)
		if q := location(r); r.StatusCode != 302 || q.Get("code") == "" || q.Get("iss") != s.URL() || q.Get("state") != "xyz" {
			t.Errorf("%d %q; want a redirect with a code, the state and iss=%s", r.StatusCode, r.Header.Get("Location"), s.URL())
		}
	})
	t.Run("allow without a source asks again", func(t *testing.T) {
		v := oauth2.GenerateVerifier()
		r, _ := f.answer(v, 0, "approve", nil)
		page, _ := io.ReadAll(r.Body)
		if r.StatusCode != http.StatusBadRequest || r.Header.Get("Location") != "" || !strings.Contains(string(page), "No source was ticked") {
			t.Fatalf("%d %q; want the consent page again with the reason:\n%.500s", r.StatusCode, r.Header.Get("Location"), page)
		}
		if strings.Contains(string(page), "<script") {
			t.Error("the page has a script")
		}
		// The page shown again is a working form.
		again := f.post(formOf(string(page), 1, "approve"))
		if again.StatusCode != 302 || location(again).Get("code") == "" {
			t.Errorf("answering the page shown again: %d %q", again.StatusCode, again.Header.Get("Location"))
		}
	})
	t.Run("nonce is single-use and tied to its request", func(t *testing.T) {
		r, form := f.answer(oauth2.GenerateVerifier(), 1, "approve", nil)
		if r.StatusCode != 302 || location(r).Get("code") == "" {
			t.Fatalf("first answer: %d %q", r.StatusCode, r.Header.Get("Location"))
		}
		if r2 := f.post(form); r2.StatusCode != 400 || r2.Header.Get("Location") != "" {
			t.Errorf("replayed consent: %d, want 400", r2.StatusCode)
		}
		r3, _ := f.answer(oauth2.GenerateVerifier(), 1, "approve", func(v url.Values) {
			v.Set("code_challenge", oauth2.S256ChallengeFromVerifier("x"+oauth2.GenerateVerifier()))
		})
		if r3.StatusCode != 400 {
			t.Errorf("consent for a changed request: %d, want 400", r3.StatusCode)
		}
	})
	t.Run("wrong verifier is 400 invalid_grant", func(t *testing.T) {
		_, err := f.cfg.Exchange(ctx, f.code(oauth2.GenerateVerifier(), 1), oauth2.VerifierOption(oauth2.GenerateVerifier()))
		if status, code := tokenError(err); status != 400 || code != "invalid_grant" {
			t.Errorf("exchange with another verifier: %d %s; want 400 invalid_grant", status, code)
		}
	})
	t.Run("another client's code is 400 invalid_grant", func(t *testing.T) {
		other := newConsentFlow(t, s.URL(), register(t, s.URL(), redirect), redirect)
		v := oauth2.GenerateVerifier()
		_, err := other.cfg.Exchange(ctx, f.code(v, 1), oauth2.VerifierOption(v))
		if status, code := tokenError(err); status != 400 || code != "invalid_grant" {
			t.Errorf("exchange by another client: %d %s; want 400 invalid_grant", status, code)
		}
	})
	t.Run("unknown client is 401 invalid_client", func(t *testing.T) {
		bad := newConsentFlow(t, s.URL(), "dcr_unknown", redirect)
		v := oauth2.GenerateVerifier()
		_, err := bad.cfg.Exchange(ctx, f.code(v, 1), oauth2.VerifierOption(v))
		if status, code := tokenError(err); status != 401 || code != "invalid_client" {
			t.Errorf("exchange by an unknown client: %d %s; want 401 invalid_client", status, code)
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
			tok, err := f.cfg.Exchange(ctx, f.code(v, tt.sources), oauth2.VerifierOption(v))
			if err != nil {
				t.Fatal(err)
			}
			in := introspect(t, s, tok.AccessToken)
			if in["active"] != true || in["pdpp_token_kind"] != tt.kind || in["aud"] != s.URL()+"/mcp" {
				t.Errorf("introspection %v; want active %s with aud %s/mcp", in, tt.kind, s.URL())
			}
			fresh, err := f.cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
			if err != nil {
				t.Fatal(err)
			}
			if in := introspect(t, s, fresh.AccessToken); in["active"] != true || in["pdpp_token_kind"] != tt.kind {
				t.Errorf("refreshed token: %v", in)
			}
			if in := introspect(t, s, tok.AccessToken); in["active"] != false {
				t.Errorf("the access token a refresh replaced is still active: %v", in)
			}
			if tt.kind == "mcp_package" {
				_, members, err := s.PackageMembers(fresh.AccessToken)
				if err != nil || len(members) != tt.sources {
					t.Fatalf("package members: %v %v", members, err)
				}
				if in := introspect(t, s, members[0].Token); in["active"] != true || in["pdpp_token_kind"] != "client" {
					t.Errorf("package child: %v", in)
				}
			}
		})
	}
}

// TestOAuthReplayRevokesTheFamily: a code or a rotated refresh token used
// a second time is refused, and so is every token issued from the same
// approval (RFC 6749 section 4.1.2, RFC 9700 section 4.14.2). A refresh
// token is honoured only for the client it was issued to.
func TestOAuthReplayRevokesTheFamily(t *testing.T) {
	s := New(t, Options{})
	id, redirect := asClientFor(t, s)
	f := newConsentFlow(t, s.URL(), id, redirect)
	ctx := t.Context()
	issue := func(t *testing.T) (*oauth2.Token, string, string) {
		t.Helper()
		v := oauth2.GenerateVerifier()
		c := f.code(v, 1)
		tok, err := f.cfg.Exchange(ctx, c, oauth2.VerifierOption(v))
		if err != nil {
			t.Fatal(err)
		}
		return tok, c, v
	}
	refresh := func(cfg *oauth2.Config, rt string) (*oauth2.Token, error) {
		return cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: rt}).Token()
	}
	dead := func(t *testing.T, what string, toks ...*oauth2.Token) {
		t.Helper()
		for _, tok := range toks {
			if in := introspect(t, s, tok.AccessToken); in["active"] != false {
				t.Errorf("%s: an access token of the family is still active: %v", what, in)
			}
			if _, err := refresh(f.cfg, tok.RefreshToken); err == nil {
				t.Errorf("%s: a refresh token of the family still works", what)
			}
		}
	}

	t.Run("code used twice", func(t *testing.T) {
		tok, c, v := issue(t)
		_, err := f.cfg.Exchange(ctx, c, oauth2.VerifierOption(v))
		if status, code := tokenError(err); status != 400 || code != "invalid_grant" {
			t.Fatalf("second exchange: %d %s; want 400 invalid_grant", status, code)
		}
		dead(t, "after the code was replayed", tok)
	})
	t.Run("rotated refresh token replayed", func(t *testing.T) {
		tok, _, _ := issue(t)
		fresh, err := refresh(f.cfg, tok.RefreshToken)
		if err != nil {
			t.Fatal(err)
		}
		_, err = refresh(f.cfg, tok.RefreshToken)
		if status, code := tokenError(err); status != 400 || code != "invalid_grant" {
			t.Fatalf("replayed refresh: %d %s; want 400 invalid_grant", status, code)
		}
		dead(t, "after the refresh token was replayed", fresh)
	})
	t.Run("refresh token of another client", func(t *testing.T) {
		tok, _, _ := issue(t)
		other := newConsentFlow(t, s.URL(), register(t, s.URL(), redirect), redirect)
		_, err := refresh(other.cfg, tok.RefreshToken)
		if status, code := tokenError(err); status != 400 || code != "invalid_grant" {
			t.Fatalf("refresh by another client: %d %s; want 400 invalid_grant", status, code)
		}
		if _, err := refresh(f.cfg, tok.RefreshToken); err != nil {
			t.Errorf("the client it was issued to: %v", err)
		}
	})
}

// TestOAuthRestart: a second server with the same seed (the demo started
// again) knows the first one's clients, codes and tokens: a host that kept
// its registration and tokens goes on without a new sign-in.
func TestOAuthRestart(t *testing.T) {
	clk := newClock()
	opts := Options{TokenSeed: "seed", AuthClock: clk.Now}
	a := New(t, opts)
	id, redirect := asClientFor(t, a)
	fa := newConsentFlow(t, a.URL(), id, redirect)
	ctx := t.Context()
	v := oauth2.GenerateVerifier()
	tok, err := fa.cfg.Exchange(ctx, fa.code(v, 1), oauth2.VerifierOption(v))
	if err != nil {
		t.Fatal(err)
	}
	pendingVerifier := oauth2.GenerateVerifier()
	pendingCode := fa.code(pendingVerifier, 2)
	spent, err := fa.cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	if err != nil {
		t.Fatal(err)
	}
	a.Close()

	clk.advance(time.Minute)
	b := New(t, opts)
	fb := newConsentFlow(t, b.URL(), id, redirect)
	// A client registered before the restart authorizes after it.
	if resp := asGet(t, authorizeURL(b.URL(), id, redirect, oauth2.GenerateVerifier(), nil)); resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("consent page for a client registered before the restart: %d %.300s", resp.StatusCode, b)
	}
	// The access token issued before it is still served (the audience
	// names the first server's port, as a restart on the same port would).
	if in := introspect(t, b, spent.AccessToken); in["active"] != true {
		t.Errorf("access token after the restart: %v", in)
	}
	// A code issued before it is exchanged after it.
	if _, err := fb.cfg.Exchange(ctx, pendingCode, oauth2.VerifierOption(pendingVerifier),
		oauth2.SetAuthURLParam("resource", a.URL()+"/mcp")); err != nil {
		t.Errorf("code issued before the restart: %v", err)
	}
	// The refresh token issued before it rotates after it, and the new
	// server remembers the rotation.
	fresh, err := fb.cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: spent.RefreshToken}).Token()
	if err != nil {
		t.Fatalf("refresh after the restart: %v", err)
	}
	if in := introspect(t, b, fresh.AccessToken); in["active"] != true {
		t.Errorf("refreshed after the restart: %v", in)
	}
	if _, err := fb.cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: spent.RefreshToken}).Token(); err == nil {
		t.Error("a refresh token spent after the restart still works")
	}
	// Another seed is another server: nothing carries over.
	c := New(t, Options{TokenSeed: "other", AuthClock: clk.Now})
	if resp := asGet(t, authorizeURL(c.URL(), id, redirect, oauth2.GenerateVerifier(), nil)); resp.StatusCode != 400 {
		t.Errorf("a client of another seed: %d, want 400", resp.StatusCode)
	}
	if in := introspect(t, c, fresh.AccessToken); in["active"] != false {
		t.Errorf("a token of another seed: %v", in)
	}
}

// TestOAuthStateIsBounded: consent pages and approvals keep bounded state
// whoever floods them, and what has expired is swept. The bounds are
// lowered so the test floods quickly.
func TestOAuthStateIsBounded(t *testing.T) {
	clk := newClock()
	s := New(t, Options{AuthClock: clk.Now})
	const limit, budget = 20, 20 * 400
	s.as.pending = newExpiring[string](consentTTL, limit, budget)
	s.as.families = newExpiring[family](refreshTokenTTL, limit, budget)
	id, redirect := asClientFor(t, s)
	f := newConsentFlow(t, s.URL(), id, redirect)
	ctx := t.Context()
	v := oauth2.GenerateVerifier()
	first, err := f.cfg.Exchange(ctx, f.code(v, 1), oauth2.VerifierOption(v))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 * limit {
		f.code(oauth2.GenerateVerifier(), 1)
		asGet(t, authorizeURL(s.URL(), id, redirect, oauth2.GenerateVerifier(), nil))
	}
	s.as.mu.Lock()
	for name, m := range map[string]interface{ len() int }{"pending": s.as.pending, "families": s.as.families} {
		size := map[string]int{"pending": s.as.pending.size, "families": s.as.families.size}[name]
		if m.len() > limit || size > budget {
			t.Errorf("%s: %d entries, %d bytes; bounds %d and %d", name, m.len(), size, limit, budget)
		}
	}
	s.as.mu.Unlock()
	// The approval pushed out is refused, never silently trusted.
	if in := introspect(t, s, first.AccessToken); in["active"] != false {
		t.Errorf("a token whose approval was dropped: %v", in)
	}
	if _, err := f.cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: first.RefreshToken}).Token(); err == nil {
		t.Error("a refresh token whose approval was dropped still works")
	}
	// Everything expires.
	clk.advance(refreshTokenTTL + time.Second)
	asGet(t, s.URL()+PathASMetadata)
	s.as.mu.Lock()
	s.as.pending.sweep(clk.Now())
	s.as.families.sweep(clk.Now())
	if n, size := s.as.pending.len()+s.as.families.len(), s.as.pending.size+s.as.families.size; n != 0 || size != 0 {
		t.Errorf("after every lifetime: %d entries, %d bytes left", n, size)
	}
	s.as.mu.Unlock()
}

func TestExpiring(t *testing.T) {
	now := time.Unix(1000, 0)
	m := newExpiring[int](time.Minute, 3, 3*(entryOverhead+2))
	for i, k := range []string{"a", "b", "c", "d"} {
		m.put(now.Add(time.Duration(i)*time.Second), k, i, 0)
	}
	if _, ok := m.get(now, "a"); ok || m.len() != 3 {
		t.Errorf("the oldest entry survived a full map: len %d", m.len())
	}
	if dropped := m.put(now, "e", 9, 2); dropped != 1 || m.size > m.maxSize {
		t.Errorf("a larger entry: dropped %d, size %d of %d", dropped, m.size, m.maxSize)
	}
	if v, ok := m.take(now, "d"); !ok || v != 3 {
		t.Errorf("take d = %d %t", v, ok)
	}
	if _, ok := m.get(now.Add(time.Minute+3*time.Second), "e"); ok || m.len() != 0 || m.size != 0 {
		t.Errorf("after ttl: len %d size %d", m.len(), m.size)
	}
}

// TestOAuthHostRule: on the double's own listener the authorization server
// answers only for this machine's names: a page on another site, or one
// that rebinds its own name here, cannot register, read the consent page,
// answer it or get a token.
func TestOAuthHostRule(t *testing.T) {
	s := New(t, Options{})
	id, redirect := asClientFor(t, s)
	consent := authorizeURL(s.URL(), id, redirect, oauth2.GenerateVerifier(), map[string]string{"resource": ""})
	for _, tt := range []struct {
		name, method, url, body string
		header                  map[string]string
		status                  int
	}{
		{"metadata, foreign Host", "GET", s.URL() + PathASMetadata, "", map[string]string{"Host": "evil.example"}, 421},
		{"registration, foreign Host", "POST", s.URL() + PathRegister, `{"redirect_uris":["http://127.0.0.1:1/cb"]}`, map[string]string{"Host": "evil.example:80"}, 421},
		{"registration, foreign Origin", "POST", s.URL() + PathRegister, `{"redirect_uris":["http://127.0.0.1:1/cb"]}`, map[string]string{"Origin": "https://evil.example"}, 403},
		{"registration, Origin null", "POST", s.URL() + PathRegister, `{"redirect_uris":["http://127.0.0.1:1/cb"]}`, map[string]string{"Origin": "null"}, 403},
		{"consent page, foreign Host", "GET", consent, "", map[string]string{"Host": "evil.example"}, 421},
		{"consent answer, foreign Origin", "POST", s.URL() + PathAuthorize, "decision=approve", map[string]string{"Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"}, 403},
		{"token, foreign Host", "POST", s.URL() + PathToken, "grant_type=refresh_token", map[string]string{"Host": "evil.example", "Content-Type": "application/x-www-form-urlencoded"}, 421},
		{"registration, loopback Origin", "POST", s.URL() + PathRegister, `{"redirect_uris":["http://127.0.0.1:1/cb"]}`, map[string]string{"Origin": "http://localhost:6274"}, 201},
		{"consent page, localhost", "GET", consent, "", map[string]string{"Host": "localhost"}, 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, tt.url, strings.NewReader(tt.body))
			for k, v := range tt.header {
				if k == "Host" {
					req.Host = v
				} else {
					req.Header.Set(k, v)
				}
			}
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("%d, want %d: %.200s", resp.StatusCode, tt.status, b)
			}
			if tt.status >= 400 && strings.Contains(string(b), "evil.example/") {
				t.Errorf("the refusal names the foreign host as an endpoint: %s", b)
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

// FuzzSealedOpen: whatever a client sends where a sealed value goes, open
// refuses it without a panic unless seal made it.
func FuzzSealedOpen(f *testing.F) {
	s := newSealer([]byte("fuzz"))
	f.Add(s.seal(prefixRefresh, tokenClaims{Gen: 1}))
	f.Add(prefixClient + "AAAA")
	f.Add("rt_" + strings.Repeat("_", 100))
	f.Fuzz(func(t *testing.T, v string) {
		var c tokenClaims
		if s.open(prefixRefresh, v, &c) && s.seal(prefixRefresh, c) != v {
			t.Errorf("opened a value seal did not make: %q", v)
		}
	})
}
