package main

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// TestHTTPDemoOAuth walks the OAuth journey a host without a configured
// header takes against `pdpp-mcp --demo --http`: the 401 challenge, the
// protected-resource and authorization-server metadata, dynamic
// registration, the consent page answered with PKCE, the code exchange, a
// served tool call, a refresh and a tool call with the refreshed token.
// Picking one source gives a client token; several give a package token
// served by fan-out.
func TestHTTPDemoOAuth(t *testing.T) {
	t.Setenv("PDPP_OWNER_TOKEN", "")
	t.Setenv("PDPP_OWNER_SESSION_COOKIE", "")
	stderr := &watchWriter{re: regexp.MustCompile(`serving hosted MCP at (\S+)/mcp `), match: make(chan []string, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{cmdName, "--demo", "--http", "127.0.0.1:0", "--log-level", "warn"}, strings.NewReader(""), io.Discard, stderr)
	}()
	defer func() {
		cancel()
		select {
		case c := <-code:
			if c != 0 {
				t.Errorf("exit %d after signal:\n%s", c, stderr)
			}
		case <-time.After(30 * time.Second):
			t.Error("did not stop after the signal")
		}
	}()
	var base string
	select {
	case m := <-stderr.match:
		base = m[1]
	case c := <-code:
		t.Fatalf("exited %d before serving:\n%s", c, stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("not serving after 30s:\n%s", stderr)
	}
	hc := &http.Client{Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	octx := context.WithValue(context.Background(), oauth2.HTTPClient, hc)

	// Discovery from the challenge, as a host does it.
	status, hdr, _ := mcpPost(t, hc, base, "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
	m := regexp.MustCompile(`resource_metadata="([^"]+)"`).FindStringSubmatch(hdr.Get("WWW-Authenticate"))
	if status != http.StatusUnauthorized || m == nil {
		t.Fatalf("no bearer: %d, WWW-Authenticate %q", status, hdr.Get("WWW-Authenticate"))
	}
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	getJSON(t, hc, m[1], &prm)
	if prm.Resource != base+"/mcp" || len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != base {
		t.Fatalf("protected-resource metadata: %+v; want resource %s/mcp and authorization server %s", prm, base, base)
	}
	var asm struct {
		Issuer        string   `json:"issuer"`
		Authorization string   `json:"authorization_endpoint"`
		Token         string   `json:"token_endpoint"`
		Registration  string   `json:"registration_endpoint"`
		Methods       []string `json:"code_challenge_methods_supported"`
		Iss           bool     `json:"authorization_response_iss_parameter_supported"`
	}
	getJSON(t, hc, base+"/.well-known/oauth-authorization-server", &asm)
	if asm.Issuer != base || asm.Registration == "" || strings.Join(asm.Methods, ",") != "S256" || !asm.Iss {
		t.Fatalf("authorization server metadata: %+v", asm)
	}
	authURL, tokenURL, regURL := asm.Authorization, asm.Token, asm.Registration

	const redirect = "http://127.0.0.1:1/callback"
	resp, err := hc.Post(regURL, "application/json", strings.NewReader(`{"redirect_uris":["`+redirect+`"],"client_name":"oauth test","token_endpoint_auth_method":"none"}`))
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		ClientID string `json:"client_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&reg); err != nil || resp.StatusCode != http.StatusCreated || reg.ClientID == "" {
		t.Fatalf("registration: %d %v %+v", resp.StatusCode, err, reg)
	}
	resp.Body.Close()
	cfg := &oauth2.Config{ClientID: reg.ClientID, RedirectURL: redirect,
		Endpoint: oauth2.Endpoint{AuthURL: authURL, TokenURL: tokenURL, AuthStyle: oauth2.AuthStyleInParams}}
	resource := oauth2.SetAuthURLParam("resource", prm.Resource)

	for _, tt := range []struct {
		name    string
		sources int
		tool    string
		want    string
	}{
		{"one source: client token", 1, `{"name":"schema","arguments":{}}`, `"structuredContent"`},
		{"several sources: package token", 3, `{"name":"search","arguments":{"q":"invoice"}}`, "source_mix="},
	} {
		t.Run(tt.name, func(t *testing.T) {
			verifier := oauth2.GenerateVerifier()
			page := getText(t, hc, cfg.AuthCodeURL("st-"+tt.name[:3], oauth2.S256ChallengeOption(verifier), resource))
			form := consentForm(t, page, tt.sources)
			form.Set("decision", "approve")
			resp, err := hc.PostForm(authURL, form)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			loc, _ := url.Parse(resp.Header.Get("Location"))
			if resp.StatusCode != http.StatusFound || loc == nil || loc.Query().Get("code") == "" || loc.Query().Get("state") != "st-"+tt.name[:3] ||
				loc.Query().Get("iss") != base {
				t.Fatalf("consent answer: %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
			}
			tok, err := cfg.Exchange(octx, loc.Query().Get("code"), oauth2.VerifierOption(verifier), resource)
			if err != nil || tok.RefreshToken == "" {
				t.Fatalf("exchange: %v (refresh token %t)", err, tok != nil && tok.RefreshToken != "")
			}
			call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":` + tt.tool + `}`
			if status, _, body := mcpPost(t, hc, base, tok.AccessToken, call); status != 200 || !strings.Contains(body, tt.want) || strings.Contains(body, `"isError":true`) {
				t.Fatalf("tools/call with the issued token: %d %.300s", status, body)
			}
			fresh, err := cfg.TokenSource(octx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
			if err != nil || fresh.AccessToken == tok.AccessToken || fresh.RefreshToken == tok.RefreshToken {
				t.Fatalf("refresh: %v (new access %t, rotated refresh %t)", err, fresh != nil && fresh.AccessToken != tok.AccessToken, fresh != nil && fresh.RefreshToken != tok.RefreshToken)
			}
			if status, _, body := mcpPost(t, hc, base, fresh.AccessToken, call); status != 200 || !strings.Contains(body, tt.want) {
				t.Fatalf("tools/call with the refreshed token: %d %.300s", status, body)
			}
			// The rotated-out refresh token is spent.
			if _, err := cfg.TokenSource(octx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); err == nil {
				t.Error("the replaced refresh token still works")
			} else if re := (*oauth2.RetrieveError)(nil); !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
				t.Errorf("replaced refresh token: %v; want invalid_grant", err)
			}
		})
	}
	// A page on another site, or one that rebinds its name to this
	// machine, gets nothing from the authorization server's routes.
	for _, tt := range []struct {
		name, method, path, body string
		header                   map[string]string
		status                   int
	}{
		{"metadata, foreign Host", "GET", "/.well-known/oauth-authorization-server", "", map[string]string{"Host": "evil.example"}, 421},
		{"registration, foreign Host", "POST", "/oauth/register", `{"redirect_uris":["` + redirect + `"]}`, map[string]string{"Host": "evil.example"}, 421},
		{"registration, foreign Origin", "POST", "/oauth/register", `{"redirect_uris":["` + redirect + `"]}`, map[string]string{"Origin": "https://evil.example"}, 403},
		{"consent page, foreign Host", "GET", strings.TrimPrefix(cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), base), "", map[string]string{"Host": "evil.example"}, 421},
		{"consent answer, foreign Origin", "POST", "/oauth/authorize", "decision=approve", map[string]string{"Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"}, 403},
		{"token, foreign Origin", "POST", "/oauth/token", "grant_type=refresh_token", map[string]string{"Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"}, 403},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, base+tt.path, strings.NewReader(tt.body))
			for k, v := range tt.header {
				if k == "Host" {
					req.Host = v
				} else {
					req.Header.Set(k, v)
				}
			}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || strings.Contains(string(b), "http://evil.example/") {
				t.Errorf("%d %.200s; want %d", resp.StatusCode, b, tt.status)
			}
		})
	}
}

// consentForm reads the consent page's form: its hidden fields and the
// first n source checkboxes, ticked.
func consentForm(t *testing.T, page string, n int) url.Values {
	t.Helper()
	form := url.Values{}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`).FindAllStringSubmatch(page, -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	sources := regexp.MustCompile(`<input type="checkbox" name="source" value="([^"]+)">`).FindAllStringSubmatch(page, -1)
	if form.Get("consent_nonce") == "" || len(sources) < n {
		t.Fatalf("consent page has no nonce or fewer than %d sources:\n%s", n, page)
	}
	for _, s := range sources[:n] {
		form.Add("source", s[1])
	}
	return form
}

func mcpPost(t *testing.T, hc *http.Client, base, token, body string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func getText(t *testing.T, hc *http.Client, u string) string {
	t.Helper()
	resp, err := hc.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %.300s", u, resp.StatusCode, b)
	}
	return string(b)
}

func getJSON(t *testing.T, hc *http.Client, u string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(getText(t, hc, u)), v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}
