package pdpptest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/internal/loopback"
)

// The double's authorization server: what an MCP host needs to obtain a
// token for the double's data without a person pasting one. RFC 8414
// metadata, RFC 7591 dynamic registration of public clients, the
// authorization code grant with PKCE (S256 only), a consent page that
// lists the dataset's connections, and rotating refresh tokens. One picked
// connection gets a grant-scoped client token for that connection, several
// get an mcp_package token over one child grant each. Every token's
// audience (RFC 8707) is the MCP resource, issuer+/mcp unless the client
// names another resource on the same origin. Every authorization response
// names the issuer (RFC 9207 iss).
//
// Client ids, codes and tokens carry their own content, sealed; the server
// keeps one small entry per approval (oauthstate.go), so a double started
// again with the same Options.TokenSeed honours what the previous one
// issued.

// Paths of the authorization server.
const (
	PathASMetadata = "/.well-known/oauth-authorization-server"
	PathRegister   = "/oauth/register"
	PathAuthorize  = "/oauth/authorize"
	PathToken      = "/oauth/token"
)

// Bounds and lifetimes.
const (
	maxRegistrationBytes = 16 << 10
	maxRedirectURIs      = 8
	// maxRedirectBytes bounds the redirect URIs of one registration
	// together: the client id carries them.
	maxRedirectBytes   = 2048
	maxClientNameBytes = 200
	maxFormBytes       = 64 << 10

	consentTTL      = 10 * time.Minute
	codeTTL         = 2 * time.Minute
	accessTokenTTL  = time.Hour
	refreshTokenTTL = 30 * 24 * time.Hour

	maxPendingConsents  = 10_000
	maxPendingBytes     = 4 << 20
	maxFamilies         = 10_000
	maxFamilyStateBytes = 4 << 20
)

// authServer is the double's authorization server.
type authServer struct {
	s     *Server
	seal  *sealer
	now   func() time.Time
	start time.Time // when this server started: older families are adopted

	mu sync.Mutex
	// pending are the consent pages shown and not yet answered, by nonce:
	// the digest of the request each was shown for. A nonce is good once.
	pending *expiring[string]
	// families is the state of each approval, by family id.
	families *expiring[family]
}

func (s *Server) mountAuthorizationServer(m *http.ServeMux) {
	now := s.opts.AuthClock
	if now == nil {
		now = time.Now
	}
	as := &authServer{s: s, seal: newSealer(s.tokens.seed), now: now, start: now(),
		pending:  newExpiring[string](consentTTL, maxPendingConsents, maxPendingBytes),
		families: newExpiring[family](refreshTokenTTL, maxFamilies, maxFamilyStateBytes)}
	s.as = as
	s.tokens.fallback = as.introspect

	m.HandleFunc("GET "+PathASMetadata, as.admit(cors(as.handleMetadata)))
	m.HandleFunc("POST "+PathRegister, as.admit(cors(as.handleRegister)))
	m.HandleFunc("GET "+PathAuthorize, as.admit(as.handleConsentPage))
	m.HandleFunc("POST "+PathAuthorize, as.admit(as.handleDecision))
	m.HandleFunc("POST "+PathToken, as.admit(cors(as.handleToken)))
	for _, p := range []string{PathASMetadata, PathRegister, PathToken} {
		m.HandleFunc("OPTIONS "+p, as.admit(cors(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })))
	}
}

// mountedKey marks a request that reached the authorization server through
// a gateway's mount; its value is the issuer the gateway resolved.
type mountedKey struct{}

// MountAuthorizationServer routes the authorization server's paths on mux
// to the double, for a gateway that serves it on its own origin. The
// gateway applies its own Host and Origin rules before mux routes a
// request here; issuer, when set, names the issuer for a request (the
// public origin the gateway resolved for it), else the double's rule
// applies (Options.Issuer, or http:// and the Host).
func (s *Server) MountAuthorizationServer(mux *http.ServeMux, issuer func(*http.Request) string) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		iss := ""
		if issuer != nil {
			iss = strings.TrimRight(issuer(r), "/")
		}
		s.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), mountedKey{}, iss)))
	})
	mux.Handle(PathASMetadata, h)
	mux.Handle("/oauth/", h)
}

// admit is the Host and Origin rule of the authorization server on the
// double's own listener, the gateway's rule for a loopback server: the
// Host must be a loopback name or the configured issuer's, and a browser
// Origin must be one of those too, so a page on another site, or one that
// rebinds its own name to this machine, cannot register, read the consent
// page or answer it. A request through a gateway's mount was admitted
// there.
func (as *authServer) admit(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, ok := r.Context().Value(mountedKey{}).(string); ok {
			h(w, r)
			return
		}
		if !as.localHost(r.Host) {
			oauthError(w, http.StatusMisdirectedRequest, "invalid_request", "this authorization server does not answer for the host "+truncate(r.Host, 100))
			return
		}
		if o := r.Header.Get("Origin"); o != "" {
			u, err := url.Parse(o)
			if err != nil || u.Host == "" || !as.localHost(u.Host) {
				oauthError(w, http.StatusForbidden, "invalid_request", "requests from the origin "+truncate(o, 100)+" are not allowed")
				return
			}
		}
		h(w, r)
	}
}

// localHost reports whether hostport names this machine or the issuer.
func (as *authServer) localHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if loopback.Host(host) {
		return true
	}
	if iss := as.s.opts.Issuer; iss != "" {
		if u, err := url.Parse(iss); err == nil && strings.EqualFold(u.Host, hostport) {
			return true
		}
	}
	return false
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
	if iss, _ := r.Context().Value(mountedKey{}).(string); iss != "" {
		return iss
	}
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
		"authorization_response_iss_parameter_supported", true,
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
// The id is the registration, sealed: nothing is kept.
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
	total := 0
	for _, u := range req.RedirectURIs {
		total += len(u)
	}
	if len(req.RedirectURIs) == 0 || len(req.RedirectURIs) > maxRedirectURIs || total > maxRedirectBytes {
		oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", fmt.Sprintf("give 1 to %d redirect_uris of at most %d bytes together", maxRedirectURIs, maxRedirectBytes))
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
	if len(req.ClientName) > maxClientNameBytes || !isPrintableText(req.ClientName) {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", fmt.Sprintf("client_name: at most %d bytes of printable text", maxClientNameBytes))
		return
	}
	reg := registration{ID: newFamilyID(), RedirectURIs: req.RedirectURIs, Name: req.ClientName, IssuedAt: as.now().Unix()}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, obj(
		"client_id", as.seal.seal(prefixClient, reg),
		"client_id_issued_at", reg.IssuedAt,
		"client_name", reg.Name,
		"redirect_uris", reg.RedirectURIs,
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
		return strings.ToValidUTF8(s[:n], "") + "..."
	}
	return s
}

func isPrintableText(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == 0xfffd {
			return false
		}
	}
	return true
}

// authRequest is an authorization request whose client and redirect URI
// are valid.
type authRequest struct {
	clientID, clientName          string
	redirectURI, state, challenge string
	resource, iss                 string
}

// checkAuthRequest validates an authorization request. A request whose
// client or redirect URI is not valid is refused on the page. So is any
// other fault found before the person has answered: redirect URIs are
// registered by anyone, so sending an error there unasked would make this
// server an open redirector (RFC 9700 section 4.11.1). Only the person's
// answer goes back to the client.
func (as *authServer) checkAuthRequest(r *http.Request) (*authRequest, string) {
	q := r.Form
	var reg registration
	if !as.seal.open(prefixClient, q.Get("client_id"), &reg) {
		return nil, "Unknown client_id: this server did not register it. Remove the server's sign-in from your MCP host (it will register again), then connect again."
	}
	ar := &authRequest{clientID: q.Get("client_id"), clientName: reg.Name, redirectURI: q.Get("redirect_uri"),
		state: q.Get("state"), challenge: q.Get("code_challenge"), iss: as.issuer(r)}
	switch {
	case !slices.Contains(reg.RedirectURIs, ar.redirectURI):
		return nil, "The redirect_uri is not one the client registered."
	case q.Get("response_type") != "code":
		return nil, "The MCP client asked for response_type " + fmt.Sprintf("%q", truncate(q.Get("response_type"), 40)) + "; this server supports only the authorization code flow (code)."
	case q.Get("code_challenge_method") != "S256" || !validChallenge(ar.challenge):
		return nil, "The MCP client sent no PKCE S256 code_challenge; this server requires one."
	}
	if ar.resource = as.audience(r, q.Get("resource")); ar.resource == "" {
		return nil, "The MCP client asked for a resource this server does not serve: " + truncate(q.Get("resource"), 200)
	}
	return ar, ""
}

// validChallenge: an S256 challenge is the unpadded base64url of 32 bytes.
func validChallenge(c string) bool {
	b, err := base64.RawURLEncoding.DecodeString(c)
	return err == nil && len(b) == sha256.Size
}

// validVerifier: 43 to 128 unreserved characters (RFC 7636 section 4.1).
func validVerifier(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
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

// redirectTo sends the person back to the client with params, the state
// and the issuer (RFC 9207).
func redirectTo(w http.ResponseWriter, r *http.Request, ar *authRequest, params url.Values) {
	u, _ := url.Parse(ar.redirectURI) // checked at registration
	q := u.Query()
	for k, vs := range params {
		q[k] = vs
	}
	if ar.state != "" {
		q.Set("state", ar.state)
	}
	q.Set("iss", ar.iss)
	u.RawQuery = q.Encode()
	w.Header().Set("Cache-Control", "no-store")
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

// consentHeaders keep the page from being framed or running scripts. The
// referrer goes to this origin only: the form's POST then carries its
// Origin (a page that sends no referrer posts Origin: null), and the
// redirect to the client carries nothing of the request.
func consentHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "same-origin")
}

func (as *authServer) handleConsentPage(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	ar, refusal := as.checkAuthRequest(r)
	if refusal != "" {
		writeConsentError(w, refusal)
		return
	}
	as.showConsent(w, r, ar, "")
}

// showConsent renders the consent page for ar with a new nonce, and why it
// is shown again when reason is set.
func (as *authServer) showConsent(w http.ResponseWriter, r *http.Request, ar *authRequest, reason string) {
	nonce := newToken()
	as.mu.Lock()
	dropped := as.pending.put(as.now(), nonce, requestDigest(r.Form), 64)
	as.mu.Unlock()
	if dropped > 0 {
		as.s.log.Warn("pdpptest: authorization server: too many open consent pages; the oldest no longer accept an answer", "dropped", dropped)
	}
	page := consentPage{Client: ar.clientName, ClientID: truncate(ar.clientID, 24), RedirectHost: redirectHost(ar.redirectURI),
		Provider: as.s.ds.Provider, Resource: ar.resource, Nonce: nonce, Action: PathAuthorize, Reason: reason}
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
	if reason != "" {
		w.WriteHeader(http.StatusBadRequest)
	}
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
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		writeConsentError(w, "The form could not be read.")
		return
	}
	ar, refusal := as.checkAuthRequest(r)
	if refusal != "" {
		writeConsentError(w, refusal)
		return
	}
	now := as.now()
	as.mu.Lock()
	want, ok := as.pending.take(now, r.PostForm.Get("consent_nonce"))
	as.mu.Unlock()
	if !ok || subtle.ConstantTimeCompare([]byte(want), []byte(requestDigest(r.Form))) != 1 {
		writeConsentError(w, "This consent form has expired or was already answered. Start the connection from your MCP host again.")
		return
	}
	if r.PostForm.Get("decision") != "approve" {
		redirectTo(w, r, ar, url.Values{"error": {"access_denied"}, "error_description": {"the person denied access"}})
		return
	}
	var conns []string
	for _, id := range r.PostForm["source"] {
		if as.s.store.byConn[id] == nil {
			as.showConsent(w, r, ar, "One of the ticked sources is not one this server offers. Tick sources from the list below.")
			return
		}
		if !slices.Contains(conns, id) {
			conns = append(conns, id)
		}
	}
	if len(conns) == 0 {
		as.showConsent(w, r, ar, "No source was ticked. Tick at least one source to share, or press Deny.")
		return
	}
	a := approval{Family: newFamilyID(), Born: now.Unix(), Client: digest(ar.clientID), Connections: conns, Audience: ar.resource}
	as.mu.Lock()
	dropped := as.families.put(now, a.Family, family{}, 0)
	as.mu.Unlock()
	as.logDropped(dropped)
	code := as.seal.seal(prefixCode, codeClaims{approval: a, Redirect: digest(ar.redirectURI), Challenge: ar.challenge,
		Expires: now.Add(codeTTL).Unix()})
	redirectTo(w, r, ar, url.Values{"code": {code}})
}

// newFamilyID is a random id for an approval or a registration.
func newFamilyID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (as *authServer) logDropped(n int) {
	if n > 0 {
		as.s.log.Warn("pdpptest: authorization server: too many approvals to remember; those whose tokens were refreshed longest ago are refused from now on", "dropped", n)
	}
}

// bornBefore reports whether an approval predates this server: its state
// was kept by a previous one.
func (as *authServer) bornBefore(a *approval) bool { return a.Born < as.start.Unix() }

// handleToken is the token endpoint: the code exchange and refresh.
// Refusals of the grant are 400 invalid_grant (RFC 6749 section 5.2); only
// an unknown client is 401.
func (as *authServer) handleToken(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the form could not be read")
		return
	}
	f := r.PostForm
	clientID := f.Get("client_id")
	if id, _, ok := r.BasicAuth(); ok {
		if clientID != "" && clientID != id {
			oauthError(w, http.StatusBadRequest, "invalid_request", "client_id differs between the form and the Authorization header")
			return
		}
		clientID = id
	}
	var reg registration
	if !as.seal.open(prefixClient, clientID, &reg) {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "unknown client_id: register again")
		return
	}
	now := as.now()
	var a approval
	var gen uint32
	var refusal string
	switch f.Get("grant_type") {
	case "authorization_code":
		a, refusal = as.exchange(now, clientID, f)
		gen = 1
	case "refresh_token":
		a, gen, refusal = as.refresh(now, clientID, f)
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token")
		return
	}
	switch {
	case refusal != "":
		oauthError(w, http.StatusBadRequest, "invalid_grant", refusal)
		return
	case f.Get("resource") != "" && strings.TrimRight(f.Get("resource"), "/") != a.Audience:
		oauthError(w, http.StatusBadRequest, "invalid_target", "resource differs from the one the person approved: "+a.Audience)
		return
	}
	access := as.seal.seal(prefixAccess, tokenClaims{approval: a, Gen: gen, Expires: now.Add(accessTokenTTL).Unix()})
	refresh := as.seal.seal(prefixRefresh, tokenClaims{approval: a, Gen: gen, Expires: now.Add(refreshTokenTTL).Unix()})
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, http.StatusOK, obj("access_token", access, "token_type", "Bearer",
		"expires_in", int(accessTokenTTL/time.Second), "refresh_token", refresh))
}

// exchange spends an authorization code. A code spent twice revokes every
// token issued from it (RFC 6749 section 4.1.2).
func (as *authServer) exchange(now time.Time, clientID string, f url.Values) (approval, string) {
	var c codeClaims
	switch {
	case !as.seal.open(prefixCode, f.Get("code"), &c):
		return approval{}, "the code is not one this server issued"
	case now.Unix() >= c.Expires:
		return approval{}, "the code has expired; authorize again"
	case c.Client != digest(clientID):
		return approval{}, "the code was issued to another client"
	case c.Redirect != digest(f.Get("redirect_uri")):
		return approval{}, "redirect_uri differs from the one of the authorization request"
	}
	v := f.Get("code_verifier")
	sum := sha256.Sum256([]byte(v))
	if !validVerifier(v) || subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(c.Challenge)) != 1 {
		return approval{}, "code_verifier does not match the code_challenge"
	}
	as.mu.Lock()
	defer as.mu.Unlock()
	st, known := as.families.get(now, c.Family)
	switch {
	case !known && !as.bornBefore(&c.approval):
		return approval{}, "this authorization is no longer remembered (too many since); authorize again"
	case known && st.revoked:
		return approval{}, "this authorization was revoked; authorize again"
	case known && st.gen != 0:
		as.families.update(now, c.Family, family{gen: st.gen, revoked: true})
		return approval{}, "the code was already used; every token issued from it is now revoked"
	}
	as.logDropped(as.families.put(now, c.Family, family{gen: 1}, 0))
	return c.approval, ""
}

// refresh spends a refresh token for the next generation. A spent one
// replayed revokes the whole approval (RFC 9700 section 4.14.2).
func (as *authServer) refresh(now time.Time, clientID string, f url.Values) (approval, uint32, string) {
	var t tokenClaims
	switch {
	case !as.seal.open(prefixRefresh, f.Get("refresh_token"), &t) || t.Child != "":
		return approval{}, 0, "the refresh token is not one this server issued"
	case now.Unix() >= t.Expires:
		return approval{}, 0, "the refresh token has expired; authorize again"
	case t.Client != digest(clientID):
		return approval{}, 0, "the refresh token was issued to another client"
	}
	as.mu.Lock()
	defer as.mu.Unlock()
	st, known := as.families.get(now, t.Family)
	switch {
	case !known && !as.bornBefore(&t.approval):
		return approval{}, 0, "this authorization is no longer remembered (too many since); authorize again"
	case known && st.revoked:
		return approval{}, 0, "this authorization was revoked; authorize again"
	case known && st.gen != t.Gen:
		as.families.update(now, t.Family, family{gen: st.gen, revoked: true})
		return approval{}, 0, "the refresh token was already used; every token of this authorization is now revoked"
	}
	as.logDropped(as.families.put(now, t.Family, family{gen: t.Gen + 1}, 0))
	return t.approval, t.Gen + 1, ""
}

// introspect is the token table's answer for access tokens this server
// issued: a client token for one connection (or one child of a package),
// a package token for several.
func (as *authServer) introspect(tok string) (introspection, bool) {
	var t tokenClaims
	if !as.seal.open(prefixAccess, tok, &t) {
		return introspection{}, false
	}
	var in introspection
	if conns := t.Connections; t.Child != "" || len(conns) == 1 {
		conn := t.Child
		if conn == "" {
			conn = conns[0]
		}
		c, _, err := as.s.childIntrospection(PackageChild{ConnectionID: conn}, t.Audience)
		if err != nil {
			return introspection{}, false
		}
		in = *c
	} else {
		in = introspection{kind: TokenPackage, subjectID: as.s.ds.SubjectID, clientID: as.s.ds.Grants["client"].ClientID,
			packageID: "gpk_" + digest(t.Family), audience: t.Audience}
		for _, conn := range conns {
			child := t
			child.Child = conn
			_, m, err := as.s.childIntrospection(PackageChild{ConnectionID: conn}, t.Audience)
			if err != nil {
				return introspection{}, false
			}
			m.Token = as.seal.seal(prefixAccess, child)
			in.members = append(in.members, m)
		}
	}
	in.exp, in.expChecked = time.Unix(t.Expires, 0), true
	now := as.now()
	if now.Unix() >= t.Expires {
		in.inactiveReason = "token_expired"
		return in, true
	}
	as.mu.Lock()
	st, known := as.families.get(now, t.Family)
	as.mu.Unlock()
	if (!known && !as.bornBefore(&t.approval)) || known && (st.revoked || st.gen != t.Gen) {
		in.inactiveReason = "token_revoked"
	}
	return in, true
}

// revoke revokes the approval behind an access token this server issued;
// false for any other token.
func (as *authServer) revoke(tok string) bool {
	var t tokenClaims
	if !as.seal.open(prefixAccess, tok, &t) {
		return false
	}
	now := as.now()
	as.mu.Lock()
	defer as.mu.Unlock()
	if !as.families.update(now, t.Family, family{gen: t.Gen, revoked: true}) {
		as.logDropped(as.families.put(now, t.Family, family{gen: t.Gen, revoked: true}, 0))
	}
	return true
}

// The consent page: plain HTML, no scripts.

type consentPage struct {
	Client, ClientID, RedirectHost, Provider, Resource, Nonce, Action, Reason string
	Hidden                                                                    []hiddenField
	Sources                                                                   []consentSource
}

type hiddenField struct{ Name, Value string }

type consentSource struct{ ID, Label, Connector string }

var consentTmpl = template.Must(template.New("consent").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Share data with {{if .Client}}{{.Client}}{{else}}an MCP client{{end}}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36em;margin:2em auto;padding:0 1em}fieldset{border:1px solid #ccc;padding:.5em 1em}label{display:block;margin:.3em 0}button{font:inherit;margin:1em .5em 0 0;padding:.4em 1em}small{color:#555}.reason{border-left:4px solid #b00;padding:.3em .8em;background:#fee}</style>
</head><body>
<h1>Share data with {{if .Client}}“{{.Client}}”{{else}}an MCP client{{end}}?</h1>
{{if .Reason}}<p class="reason" role="alert">{{.Reason}}</p>
{{end}}<p>The client <code>{{.ClientID}}</code> asks to read data from <strong>{{.Provider}}</strong> through the MCP endpoint <code>{{.Resource}}</code>. It gets read-only access to the sources you tick, and nothing else. After you answer, your browser goes back to <code>{{.RedirectHost}}</code>.</p>
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
