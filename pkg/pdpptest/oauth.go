package pdpptest

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-oauth2/oauth2/v4"
	oautherrors "github.com/go-oauth2/oauth2/v4/errors"
	"github.com/go-oauth2/oauth2/v4/manage"
	"github.com/go-oauth2/oauth2/v4/models"
	"github.com/go-oauth2/oauth2/v4/server"
	"github.com/pdpp-mcp/pdpp-mcp/internal/loopback"
)

// The double's authorization server: what an MCP host needs to obtain a
// token for the double's data without a person pasting one. RFC 8414
// metadata, RFC 7591 dynamic registration of public clients, the
// authorization code grant with PKCE (S256 only), a consent page that
// lists the dataset's connections, and refresh tokens. go-oauth2 runs the
// grant (codes, PKCE verification, token endpoint, refresh rotation); this
// file adds registration, the consent page and the link to the double's
// token table: one picked connection gets a grant-scoped client token for
// that connection, several get an mcp_package token over one child grant
// each. Every token's audience (RFC 8707) is the MCP resource, issuer+/mcp
// unless the client names another resource on the same origin.
//
// Registrations, codes and tokens live in memory: a restart forgets them,
// and hosts authorize again.

// Paths of the authorization server.
const (
	PathASMetadata = "/.well-known/oauth-authorization-server"
	PathRegister   = "/oauth/register"
	PathAuthorize  = "/oauth/authorize"
	PathToken      = "/oauth/token"
)

// Bounds on what a client may send the authorization server.
const (
	maxRegistrationBytes = 16 << 10
	maxRedirectURIs      = 8
	maxClients           = 10000
	maxPendingConsents   = 10000
	consentTTL           = 10 * time.Minute
	accessTokenTTL       = time.Hour
	refreshTokenTTL      = 30 * 24 * time.Hour
)

// MountAuthorizationServer routes the authorization server's paths on mux
// to the double, for a gateway that serves it on its own origin.
func (s *Server) MountAuthorizationServer(mux *http.ServeMux) {
	mux.Handle(PathASMetadata, s)
	mux.Handle("/oauth/", s)
}

// authServer is the double's authorization server.
type authServer struct {
	s   *Server
	srv *server.Server

	mu       sync.Mutex
	clients  map[string]*asClient
	pending  map[string]pendingConsent // by nonce
	consents map[string]consent        // by id, the go-oauth2 user id
	tokens   map[string]*models.Token  // by code, access and refresh
}

type asClient struct {
	models.Client
	name         string
	redirectURIs []string
}

// pendingConsent is a consent page shown and not yet answered: the nonce in
// its form is good once, for the request it was shown for.
type pendingConsent struct {
	request string // digest of the authorization request
	expires time.Time
}

// consent is what the person approved: the connections and the audience.
type consent struct {
	connections []string
	audience    string
}

func (s *Server) mountAuthorizationServer(m *http.ServeMux) {
	as := &authServer{s: s, clients: map[string]*asClient{}, pending: map[string]pendingConsent{},
		consents: map[string]consent{}, tokens: map[string]*models.Token{}}
	mgr := manage.NewManager()
	mgr.MapClientStorage(as)
	mgr.MapTokenStorage(as)
	mgr.MapAuthorizeGenerate(as)
	mgr.MapAccessGenerate(as.accessGen())
	mgr.SetAuthorizeCodeExp(consentTTL)
	mgr.SetAuthorizeCodeTokenCfg(&manage.Config{AccessTokenExp: accessTokenTTL, RefreshTokenExp: refreshTokenTTL, IsGenerateRefresh: true})
	mgr.SetRefreshTokenCfg(&manage.RefreshingConfig{AccessTokenExp: accessTokenTTL, RefreshTokenExp: refreshTokenTTL,
		IsGenerateRefresh: true, IsRemoveAccess: true, IsRemoveRefreshing: true})
	mgr.SetValidateURIHandler(as.validateRedirect)
	cfg := &server.Config{
		TokenType:                   "Bearer",
		AllowedResponseTypes:        []oauth2.ResponseType{oauth2.Code},
		AllowedGrantTypes:           []oauth2.GrantType{oauth2.AuthorizationCode, oauth2.Refreshing},
		AllowedCodeChallengeMethods: []oauth2.CodeChallengeMethod{oauth2.CodeChallengeS256},
		ForcePKCE:                   true,
	}
	as.srv = server.NewServer(cfg, mgr)
	as.srv.SetClientInfoHandler(publicClientInfo)
	as.srv.SetUserAuthorizationHandler(as.decide)
	as.srv.SetInternalErrorHandler(func(err error) *oautherrors.Response {
		s.log.Warn("pdpptest: authorization server", "err", err)
		return nil
	})

	m.HandleFunc("GET "+PathASMetadata, cors(as.handleMetadata))
	m.HandleFunc("POST "+PathRegister, cors(as.handleRegister))
	m.HandleFunc("GET "+PathAuthorize, as.handleConsentPage)
	m.HandleFunc("POST "+PathAuthorize, as.handleDecision)
	m.HandleFunc("POST "+PathToken, cors(as.handleToken))
	for _, p := range []string{PathASMetadata, PathRegister, PathToken} {
		m.HandleFunc("OPTIONS "+p, cors(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	}
}

// cors lets browser-based MCP clients (the Inspector, say) read the
// metadata and call registration and the token endpoint, which carry no
// ambient credentials; the consent page gets no such header.
func cors(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		if r.Method == http.MethodOptions {
			w.Header().Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
			w.Header().Set("Access-Control-Allow-Headers", "Content-Type, Authorization, MCP-Protocol-Version")
			w.Header().Set("Access-Control-Max-Age", "600")
		}
		h(w, r)
	}
}

// issuer is the authorization server's identifier as the client reached it.
func (as *authServer) issuer(r *http.Request) string {
	if as.s.opts.Issuer != "" {
		return strings.TrimRight(as.s.opts.Issuer, "/")
	}
	return "http://" + r.Host
}

func (as *authServer) handleMetadata(w http.ResponseWriter, r *http.Request) {
	iss := as.issuer(r)
	writeJSON(w, http.StatusOK, obj(
		"issuer", iss,
		"authorization_endpoint", iss+PathAuthorize,
		"token_endpoint", iss+PathToken,
		"registration_endpoint", iss+PathRegister,
		"response_types_supported", []string{"code"},
		"grant_types_supported", []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported", []string{"S256"},
		"token_endpoint_auth_methods_supported", []string{"none"},
		"scopes_supported", []string{},
	))
}

// oauthError answers an RFC 6749 error object.
func oauthError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, obj("error", code, "error_description", desc))
}

// handleRegister is RFC 7591 registration of a public client: the client
// gets an id and no secret, whatever authentication method it asked for.
func (as *authServer) handleRegister(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
		ClientName   string   `json:"client_name"`
		GrantTypes   []string `json:"grant_types"`
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRegistrationBytes))
	if err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", fmt.Sprintf("registration body unreadable or larger than %d bytes", maxRegistrationBytes))
		return
	}
	if err := json.Unmarshal(body, &req); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "registration body is not a JSON object")
		return
	}
	if len(req.RedirectURIs) == 0 || len(req.RedirectURIs) > maxRedirectURIs {
		oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", fmt.Sprintf("give 1 to %d redirect_uris", maxRedirectURIs))
		return
	}
	for _, u := range req.RedirectURIs {
		if err := checkRedirectURI(u); err != nil {
			oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", err.Error())
			return
		}
	}
	for _, g := range req.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "grant_types: only authorization_code and refresh_token are supported")
			return
		}
	}
	name := req.ClientName
	if len(name) > 200 || !isPrintableText(name) {
		name = ""
	}
	id := "dcr_" + newToken()[len("pdpp_"):][:32]
	c := &asClient{Client: models.Client{ID: id, Public: true}, name: name, redirectURIs: slices.Clone(req.RedirectURIs)}
	as.mu.Lock()
	if len(as.clients) >= maxClients {
		as.mu.Unlock()
		oauthError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "too many registered clients; restart the double")
		return
	}
	as.clients[id] = c
	as.mu.Unlock()
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, obj(
		"client_id", id,
		"client_id_issued_at", time.Now().Unix(),
		"client_name", name,
		"redirect_uris", req.RedirectURIs,
		"grant_types", []string{"authorization_code", "refresh_token"},
		"response_types", []string{"code"},
		"token_endpoint_auth_method", "none",
	))
}

// checkRedirectURI accepts an absolute URI without a fragment: https, http
// on a loopback host, or a private-use scheme (RFC 8252).
func checkRedirectURI(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || !u.IsAbs() || len(raw) > 2000:
		return fmt.Errorf("redirect_uri %q is not an absolute URI", truncate(raw, 100))
	case u.Fragment != "":
		return fmt.Errorf("redirect_uri %q has a fragment", truncate(raw, 100))
	case u.Scheme == "http":
		if !loopback.Host(u.Hostname()) {
			return fmt.Errorf("redirect_uri %q: plain http is allowed on loopback only", truncate(raw, 100))
		}
	case u.Scheme == "javascript" || u.Scheme == "data":
		return fmt.Errorf("redirect_uri scheme %q is not allowed", u.Scheme)
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func isPrintableText(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// validateRedirect is go-oauth2's redirect check, made exact: base is the
// client's registered URIs, one per line.
func (as *authServer) validateRedirect(base, redirect string) error {
	if slices.Contains(strings.Split(base, "\n"), redirect) {
		return nil
	}
	return oautherrors.ErrInvalidRedirectURI
}

// GetByID is go-oauth2's client store.
func (as *authServer) GetByID(_ context.Context, id string) (oauth2.ClientInfo, error) {
	as.mu.Lock()
	defer as.mu.Unlock()
	c := as.clients[id]
	if c == nil {
		return nil, oautherrors.ErrInvalidClient
	}
	mc := c.Client
	mc.Domain = strings.Join(c.redirectURIs, "\n")
	return &mc, nil
}

// publicClientInfo reads the client id of a public client from the form
// (or from Basic authentication with an empty secret).
func publicClientInfo(r *http.Request) (string, string, error) {
	if id, secret, ok := r.BasicAuth(); ok {
		return id, secret, nil
	}
	return server.ClientFormHandler(r)
}

// authRequest is an authorization request the consent page was shown for.
type authRequest struct {
	client                                       *asClient
	redirectURI, state, challenge, resource, iss string
}

// checkAuthRequest validates what must be right before anything is
// redirected back: the client and its redirect URI. Errors after that go
// back to the client as an error redirect.
func (as *authServer) checkAuthRequest(r *http.Request) (ar *authRequest, refusal, code string) {
	q := r.Form
	as.mu.Lock()
	c := as.clients[q.Get("client_id")]
	as.mu.Unlock()
	if c == nil {
		return nil, "Unknown client_id: the MCP client must register first. Start the connection from your MCP host again.", ""
	}
	ru := q.Get("redirect_uri")
	if !slices.Contains(c.redirectURIs, ru) {
		return nil, "The redirect_uri is not one the client registered.", ""
	}
	ar = &authRequest{client: c, redirectURI: ru, state: q.Get("state"), challenge: q.Get("code_challenge"), iss: as.issuer(r)}
	switch {
	case q.Get("response_type") != "code":
		return ar, "", "unsupported_response_type"
	case ar.challenge == "" || q.Get("code_challenge_method") != "S256":
		return ar, "", "invalid_request"
	}
	ar.resource = as.audience(r, q.Get("resource"))
	if ar.resource == "" {
		return ar, "", "invalid_target"
	}
	return ar, "", ""
}

// audience is the resource a token is for: the one requested when it is
// on this issuer's origin, else the MCP resource; "" when the requested
// one is elsewhere.
func (as *authServer) audience(r *http.Request, requested string) string {
	iss := as.issuer(r)
	if requested == "" {
		return iss + "/mcp"
	}
	requested = strings.TrimRight(requested, "/")
	if requested == iss || strings.HasPrefix(requested, iss+"/") {
		return requested
	}
	return ""
}

// redirectError sends an error back to the client's redirect URI.
func redirectError(w http.ResponseWriter, r *http.Request, ar *authRequest, code string) {
	u, _ := url.Parse(ar.redirectURI)
	q := u.Query()
	q.Set("error", code)
	if ar.state != "" {
		q.Set("state", ar.state)
	}
	q.Set("iss", ar.iss)
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

// requestDigest ties a consent nonce to the request it was shown for.
func requestDigest(q url.Values) string {
	h := sha256.New()
	for _, k := range []string{"client_id", "redirect_uri", "state", "code_challenge", "code_challenge_method", "resource", "scope"} {
		fmt.Fprintf(h, "%s=%q\n", k, q.Get(k))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// admitAuthRequest checks r's authorization request and, when it is refused,
// answers: on the page itself when the client or its redirect URI is wrong
// (nothing may be redirected there), else with an error redirect to the
// client.
func (as *authServer) admitAuthRequest(w http.ResponseWriter, r *http.Request) (*authRequest, bool) {
	ar, refusal, code := as.checkAuthRequest(r)
	switch {
	case refusal != "":
		writeConsentError(w, refusal)
		return nil, false
	case code != "":
		redirectError(w, r, ar, code)
		return nil, false
	}
	return ar, true
}

// consentHeaders keep the page from being framed or running scripts.
func consentHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
}

func (as *authServer) handleConsentPage(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	ar, ok := as.admitAuthRequest(w, r)
	if !ok {
		return
	}
	nonce := newToken()
	as.mu.Lock()
	now := time.Now()
	for k, p := range as.pending {
		if now.After(p.expires) {
			delete(as.pending, k)
		}
	}
	full := len(as.pending) >= maxPendingConsents
	if !full {
		as.pending[nonce] = pendingConsent{request: requestDigest(r.Form), expires: now.Add(consentTTL)}
	}
	as.mu.Unlock()
	if full {
		writeConsentError(w, "Too many consent pages are open; try again in a few minutes.")
		return
	}
	page := consentPage{Client: ar.client.name, ClientID: ar.client.ID, RedirectHost: redirectHost(ar.redirectURI),
		Provider: as.s.ds.Provider, Resource: ar.resource, Nonce: nonce, Action: PathAuthorize}
	for _, k := range []string{"client_id", "redirect_uri", "response_type", "state", "code_challenge", "code_challenge_method", "resource", "scope"} {
		if v := r.Form.Get(k); v != "" {
			page.Hidden = append(page.Hidden, hiddenField{k, v})
		}
	}
	for _, c := range as.s.ds.Connectors {
		for _, conn := range c.Connections {
			label := conn.DisplayName
			if label == "" {
				label = conn.ID
			}
			page.Sources = append(page.Sources, consentSource{ID: conn.ID, Label: label, Connector: c.DisplayName})
		}
	}
	consentHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := consentTmpl.Execute(w, page); err != nil {
		as.s.log.Warn("pdpptest: consent page", "err", err)
	}
}

func redirectHost(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Scheme + "://" + u.Host
	}
	return truncate(raw, 100)
}

// handleDecision takes the person's answer on the consent page.
func (as *authServer) handleDecision(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		writeConsentError(w, "The form could not be read.")
		return
	}
	ar, ok := as.admitAuthRequest(w, r)
	if !ok {
		return
	}
	nonce := r.PostForm.Get("consent_nonce")
	as.mu.Lock()
	p, ok := as.pending[nonce]
	delete(as.pending, nonce)
	as.mu.Unlock()
	if !ok || time.Now().After(p.expires) || subtle.ConstantTimeCompare([]byte(p.request), []byte(requestDigest(r.Form))) != 1 {
		writeConsentError(w, "This consent form has expired or was already answered. Start the connection from your MCP host again.")
		return
	}
	if r.PostForm.Get("decision") != "approve" {
		redirectError(w, r, ar, "access_denied")
		return
	}
	// go-oauth2 makes the code and redirects; decide names the consent.
	if err := as.srv.HandleAuthorizeRequest(w, r); err != nil {
		as.s.log.Warn("pdpptest: authorize", "err", err)
	}
}

// decide is go-oauth2's user authorization: it records the approved
// connections and returns the consent's id, which go-oauth2 carries as the
// user id through the code and every refresh.
func (as *authServer) decide(w http.ResponseWriter, r *http.Request) (string, error) {
	picked := r.PostForm["source"]
	var conns []string
	for _, id := range picked {
		if as.s.store.byConn[id] == nil {
			return "", oautherrors.ErrInvalidRequest
		}
		if !slices.Contains(conns, id) {
			conns = append(conns, id)
		}
	}
	if len(conns) == 0 {
		return "", oautherrors.ErrAccessDenied
	}
	id := "consent_" + newToken()[len("pdpp_"):][:24]
	as.mu.Lock()
	as.consents[id] = consent{connections: conns, audience: as.audience(r, r.Form.Get("resource"))}
	as.mu.Unlock()
	return id, nil
}

// Token is go-oauth2's authorization code generator.
func (as *authServer) Token(context.Context, *oauth2.GenerateBasic) (string, error) {
	return "code_" + newToken()[len("pdpp_"):], nil
}

// accessGenerator issues the access tokens into the double's token table.
type accessGenerator struct{ as *authServer }

func (as *authServer) accessGen() oauth2.AccessGenerate { return accessGenerator{as} }

// Token issues a client token (one connection) or a package token
// (several) for the consent the grant carries, and an opaque refresh
// token.
func (g accessGenerator) Token(_ context.Context, data *oauth2.GenerateBasic, genRefresh bool) (string, string, error) {
	g.as.mu.Lock()
	c, ok := g.as.consents[data.UserID]
	g.as.mu.Unlock()
	if !ok {
		return "", "", oautherrors.ErrInvalidGrant
	}
	var access string
	if len(c.connections) == 1 {
		access = g.as.s.issueChild(PackageChild{ConnectionID: c.connections[0]}, newToken(), c.audience).Token
	} else {
		children := make([]PackageChild, len(c.connections))
		for i, id := range c.connections {
			children[i] = PackageChild{ConnectionID: id}
		}
		access, _ = g.as.s.issuePackage(c.audience, children...)
	}
	var refresh string
	if genRefresh {
		refresh = "rt_" + newToken()[len("pdpp_"):]
	}
	return access, refresh, nil
}

// The token store: go-oauth2 keeps codes and token pairs here.

func (as *authServer) Create(_ context.Context, info oauth2.TokenInfo) error {
	t, ok := info.(*models.Token)
	if !ok {
		return errors.New("pdpptest: unexpected token info type")
	}
	as.mu.Lock()
	defer as.mu.Unlock()
	for _, k := range []string{t.Code, t.Access, t.Refresh} {
		if k != "" {
			as.tokens[k] = t
		}
	}
	return nil
}

func (as *authServer) remove(k string) {
	as.mu.Lock()
	defer as.mu.Unlock()
	delete(as.tokens, k)
}

func (as *authServer) RemoveByCode(_ context.Context, code string) error {
	as.remove(code)
	return nil
}

// RemoveByAccess also revokes the access token at the resource server: a
// refresh replaces it.
func (as *authServer) RemoveByAccess(_ context.Context, access string) error {
	as.remove(access)
	as.s.tokens.revoke(access)
	return nil
}

func (as *authServer) RemoveByRefresh(_ context.Context, refresh string) error {
	as.remove(refresh)
	return nil
}

func (as *authServer) get(k string, match func(*models.Token) bool) (oauth2.TokenInfo, error) {
	as.mu.Lock()
	defer as.mu.Unlock()
	t := as.tokens[k]
	if t == nil || !match(t) {
		return nil, nil
	}
	cp := *t
	return &cp, nil
}

func (as *authServer) GetByCode(_ context.Context, code string) (oauth2.TokenInfo, error) {
	return as.get(code, func(t *models.Token) bool { return t.Code == code })
}

func (as *authServer) GetByAccess(_ context.Context, access string) (oauth2.TokenInfo, error) {
	return as.get(access, func(t *models.Token) bool { return t.Access == access })
}

func (as *authServer) GetByRefresh(_ context.Context, refresh string) (oauth2.TokenInfo, error) {
	return as.get(refresh, func(t *models.Token) bool { return t.Refresh == refresh })
}

func (as *authServer) handleToken(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the form could not be read")
		return
	}
	if res := r.PostForm.Get("resource"); res != "" && as.audience(r, res) == "" {
		oauthError(w, http.StatusBadRequest, "invalid_target", "resource is not served by this authorization server")
		return
	}
	if err := as.srv.HandleTokenRequest(w, r); err != nil {
		as.s.log.Warn("pdpptest: token", "err", err)
	}
}

// The consent page: plain HTML, no scripts.

type consentPage struct {
	Client, ClientID, RedirectHost, Provider, Resource, Nonce, Action string
	Hidden                                                            []hiddenField
	Sources                                                           []consentSource
}

type hiddenField struct{ Name, Value string }

type consentSource struct{ ID, Label, Connector string }

var consentTmpl = template.Must(template.New("consent").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Share data with {{if .Client}}{{.Client}}{{else}}an MCP client{{end}}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36em;margin:2em auto;padding:0 1em}fieldset{border:1px solid #ccc;padding:.5em 1em}label{display:block;margin:.3em 0}button{font:inherit;margin:1em .5em 0 0;padding:.4em 1em}small{color:#555}</style>
</head><body>
<h1>Share data with {{if .Client}}“{{.Client}}”{{else}}an MCP client{{end}}?</h1>
<p>The client <code>{{.ClientID}}</code> asks to read data from <strong>{{.Provider}}</strong> through the MCP endpoint <code>{{.Resource}}</code>. It gets read-only access to the sources you tick, and nothing else. After you answer, your browser goes back to <code>{{.RedirectHost}}</code>.</p>
<p><small>This is the pdpp-mcp demo: the data is a synthetic sample, served on this machine.</small></p>
<form method="post" action="{{.Action}}">
{{range .Hidden}}<input type="hidden" name="{{.Name}}" value="{{.Value}}">
{{end}}<input type="hidden" name="consent_nonce" value="{{.Nonce}}">
<fieldset><legend>Sources to share (one gives a single-grant token; several give a package)</legend>
{{range .Sources}}<label><input type="checkbox" name="source" value="{{.ID}}"> {{.Label}} <small>({{.Connector}})</small></label>
{{end}}</fieldset>
<button type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>
</body></html>
`))

var consentErrTmpl = template.Must(template.New("consent-error").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Authorization request refused</title></head><body>
<h1>Authorization request refused</h1><p>{{.}}</p></body></html>
`))

func writeConsentError(w http.ResponseWriter, msg string) {
	consentHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusBadRequest)
	_ = consentErrTmpl.Execute(w, msg)
}
