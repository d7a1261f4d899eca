package pdpptest

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// TokenKind names one of the bearer tokens the double issues at start.
type TokenKind string

const (
	TokenOwner   TokenKind = "owner"
	TokenClient  TokenKind = "client"      // the dataset grant named "client"
	TokenPackage TokenKind = "mcp_package" // rejected on /v1/*
	TokenRevoked TokenKind = "revoked"     // 403 grant_revoked
	TokenExpired TokenKind = "expired"     // 403 grant_expired
	TokenUnknown TokenKind = "unknown"     // an unregistered token: 401
)

// tokenKinds lists every kind in a stable order.
var tokenKinds = []TokenKind{TokenOwner, TokenClient, TokenPackage, TokenRevoked, TokenExpired, TokenUnknown}

// TokenKinds returns every token kind the double issues at start, in a stable
// order.
func TokenKinds() []TokenKind { return append([]TokenKind(nil), tokenKinds...) }

// introspection is what the double knows about a token, shaped like an RFC 7662
// answer with the PDPP extensions (PDPP core).
type introspection struct {
	kind TokenKind // owner, client or mcp_package (pdpp_token_kind)
	// inactiveReason is empty for an active token; otherwise grant_revoked,
	// grant_expired or token_revoked.
	inactiveReason string
	grantName      string
	grant          *dataset.Grant // client tokens
	subjectID      string
	clientID       string
	exp            time.Time // zero: never expires
	// packageID and members describe an mcp_package token's children.
	packageID string
	members   []PackageMember
	// audience is the resource the token was issued for (RFC 8707), as
	// the authorization server recorded it; empty for the tokens issued at
	// start and by the Issue methods.
	audience string
	// expChecked says exp was decided by the authorization server's own
	// clock, which is not the dataset's (the demo's is frozen).
	expChecked bool
}

// tokenTable maps opaque bearer strings to introspection results.
type tokenTable struct {
	mu     sync.RWMutex
	byTok  map[string]*introspection
	byKind map[TokenKind]string
	// seed, when set, derives the tokens issued at start (see
	// Options.TokenSeed).
	seed []byte
	// fallback answers for tokens not in the table: the authorization
	// server's, which carry their own content.
	fallback func(tok string) (introspection, bool)
}

func newTokenTable(seed string) *tokenTable {
	t := &tokenTable{byTok: map[string]*introspection{}, byKind: map[TokenKind]string{}}
	if seed != "" {
		t.seed = []byte(seed)
	}
	return t
}

// startToken is the token issued at start under label: derived from the
// seed when there is one, else random.
func (t *tokenTable) startToken(label string) string {
	if t.seed == nil {
		return newToken()
	}
	m := hmac.New(sha256.New, t.seed)
	m.Write([]byte(label))
	return "pdpp_" + hex.EncodeToString(m.Sum(nil)[:20])
}

// newToken returns an opaque random string; nothing about it reveals its kind.
func newToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // crypto/rand never fails on supported platforms
	return "pdpp_" + hex.EncodeToString(b)
}

func (t *tokenTable) add(in *introspection) string {
	return t.addAs(newToken(), in)
}

func (t *tokenTable) addAs(tok string, in *introspection) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.byTok[tok] = in
	return tok
}

func (t *tokenTable) lookup(tok string) (introspection, bool) {
	t.mu.RLock()
	in, ok := t.byTok[tok]
	var cp introspection
	if ok {
		cp = *in
	}
	t.mu.RUnlock()
	if !ok && t.fallback != nil {
		return t.fallback(tok)
	}
	return cp, ok
}

func (t *tokenTable) revoke(tok string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if in, ok := t.byTok[tok]; ok {
		in.inactiveReason = "token_revoked"
	}
}

// issueStandardTokens registers one token of every kind.
func (s *Server) issueStandardTokens() error {
	client := s.ds.Grants["client"]
	if client == nil {
		return fmt.Errorf("dataset %q has no grant named %q", s.ds.Name, "client")
	}
	sub := s.ds.SubjectID
	kinds := map[TokenKind]*introspection{
		TokenOwner:   {kind: TokenOwner, subjectID: sub},
		TokenClient:  {kind: TokenClient, grantName: "client", grant: client, subjectID: sub, clientID: client.ClientID},
		TokenPackage: {kind: TokenPackage, subjectID: sub, clientID: client.ClientID, packageID: "gpk_pdpptest"},
		TokenRevoked: {kind: TokenClient, grantName: "client", grant: client, subjectID: sub, clientID: client.ClientID, inactiveReason: "grant_revoked"},
		TokenExpired: {kind: TokenClient, grantName: "client", grant: client, subjectID: sub, clientID: client.ClientID, inactiveReason: "grant_expired"},
	}
	for _, ch := range s.defaultPackageChildren() {
		m := s.issueChild(ch, s.tokens.startToken("mcp_package/"+ch.ConnectionID), "")
		kinds[TokenPackage].members = append(kinds[TokenPackage].members, m)
	}
	for _, k := range tokenKinds {
		tok := s.tokens.startToken(string(k))
		if k == TokenUnknown {
			// Never registered: the table cannot answer for it.
			s.tokens.byKind[k] = tok
			continue
		}
		s.tokens.byKind[k] = s.tokens.addAs(tok, kinds[k])
	}
	return nil
}

// principal is the authenticated caller of a /v1 read.
type principal struct {
	kind      TokenKind // TokenOwner or TokenClient
	grant     *dataset.Grant
	subjectID string
	clientID  string
}

func (p *principal) owner() bool  { return p.kind == TokenOwner }
func (p *principal) client() bool { return p.kind == TokenClient }

// nextStepAdvice is the reference's advice on every 401.
const nextStepAdvice = "Fetch error.resource_metadata, then follow pdpp_agent_discovery.cli when token completion is available; otherwise request a scoped client grant without using an owner bearer token."

// unauthorized builds a 401 with the RFC 9728 challenge pointing at the
// protected-resource metadata of the host the client called.
func unauthorized(r *http.Request, code, message string) *apiError {
	prm := "http://" + r.Host + "/.well-known/oauth-protected-resource"
	e := errf(http.StatusUnauthorized, code, "%s", message).
		with("resource_metadata", prm).
		with("next_step", nextStepAdvice)
	e.header = http.Header{"Www-Authenticate": {`Bearer resource_metadata="` + prm + `"`}}
	return e
}

// failedClosed is the 401 the reference answers when token introspection (with
// its request context: stream, connection, token kind) rejects the call. The
// code says which check failed (context.active_false, context.stream_not_allowed,
// context.instance_mismatch, context.kind_mismatch).
func failedClosed(r *http.Request, code string) *apiError {
	return unauthorized(r, code, "Token introspection failed closed")
}

// authenticate resolves the bearer of r into a principal for a /v1 read.
func (s *Server) authenticate(r *http.Request) (*principal, *apiError) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	tok = strings.TrimSpace(tok)
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return nil, unauthorized(r, "authentication_error", "Missing Bearer token")
	}
	in, found := s.tokens.lookup(tok)
	if !found || in.inactiveReason == "token_revoked" || in.inactiveReason == "token_expired" ||
		(!in.expChecked && !in.exp.IsZero() && !s.now().Before(in.exp)) {
		return nil, failedClosed(r, "context.active_false")
	}
	if in.grant != nil && in.inactiveReason == "" {
		// A grant whose expires_at has passed is dead for every token on it.
		if exp, ok := asTime(in.grant.ExpiresAt); ok && !s.now().Before(exp) {
			in.inactiveReason = "grant_expired"
		}
	}
	switch in.inactiveReason {
	case "grant_revoked":
		return nil, errf(http.StatusForbidden, "grant_revoked", "Grant has been revoked")
	case "grant_expired":
		return nil, errf(http.StatusForbidden, "grant_expired", "Grant has expired")
	}
	switch in.kind {
	case TokenOwner:
		return &principal{kind: TokenOwner, subjectID: in.subjectID}, nil
	case TokenClient:
		return &principal{kind: TokenClient, grant: in.grant, subjectID: in.subjectID, clientID: in.clientID}, nil
	}
	// Package tokens are only meaningful at a hosted /mcp endpoint.
	return nil, failedClosed(r, "context.kind_mismatch")
}

// Token returns the bearer of the given kind issued at start.
func (s *Server) Token(k TokenKind) string {
	s.tokens.mu.RLock()
	defer s.tokens.mu.RUnlock()
	tok, ok := s.tokens.byKind[k]
	if !ok {
		panic(fmt.Sprintf("pdpptest: unknown token kind %q", k))
	}
	return tok
}

// IssueClientToken returns a fresh client token for the dataset grant with the
// given name. It panics when the dataset has no such grant: that is a mistake in
// the calling test.
func (s *Server) IssueClientToken(grantName string) string {
	g := s.ds.Grants[grantName]
	if g == nil {
		panic(fmt.Sprintf("pdpptest: dataset %q has no grant %q", s.ds.Name, grantName))
	}
	return s.tokens.add(&introspection{
		kind: TokenClient, grantName: grantName, grant: g,
		subjectID: s.ds.SubjectID, clientID: g.ClientID,
	})
}

// RevokeToken deactivates a token: later requests with it get 401.
// An access token of the authorization server revokes its whole approval.
func (s *Server) RevokeToken(token string) {
	if s.as != nil && s.as.revoke(token) {
		return
	}
	s.tokens.revoke(token)
}

// clientBan rejects what client (grant) tokens may never send on record,
// aggregate and search reads: filters, expansion and expansion limits. The
// reference checks this before anything else about the request.
func clientBan(p *principal, q *query) *apiError {
	if !p.client() {
		return nil
	}
	switch {
	case q.has("filter"):
		return badRequest("filter[...] is not supported for client-token reads in PDPP v0.1").param("filter")
	case q.has("expand"):
		return badRequest("expand[] is not supported for client-token reads in PDPP v0.1").param("expand")
	case q.has("expand_limit"):
		return badRequest("expand_limit[...] is not supported for client-token reads in PDPP v0.1").param("expand_limit")
	}
	return nil
}
