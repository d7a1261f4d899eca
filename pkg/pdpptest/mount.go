package pdpptest

import (
	"crypto/subtle"
	"net/http"
)

// Hosted MCP on the double: the reference serves /mcp next to /v1, so the
// double can too. The MCP handler is passed in (pkg/hosted builds it on top
// of packages whose tests use this double, so the double cannot build it
// itself), and POST /introspect lets a hosted gateway ask the double about
// bearers the way a separated resource server asks its authorization server.

// Introspection client credentials the double accepts (HTTP Basic).
const (
	IntrospectionClientID     = "pdpp-mcp-gateway"
	IntrospectionClientSecret = "pdpptest-introspection-secret"
)

// MountMCP serves h at /mcp and /icon.svg. Call it once, before clients use
// those paths.
func (s *Server) MountMCP(h http.Handler) {
	s.mux.Handle("/mcp", h)
	s.mux.Handle("GET /icon.svg", h)
}

// IntrospectionURL is the double's RFC 7662 endpoint.
func (s *Server) IntrospectionURL() string { return s.url + "/introspect" }

func (s *Server) mountIntrospection(m *http.ServeMux) {
	m.HandleFunc("POST /introspect", s.public(s.handleIntrospect))
}

// handleIntrospect answers RFC 7662 with the PDPP extensions:
// active, pdpp_token_kind, ids, exp, inactive_reason.
func (s *Server) handleIntrospect(c *call) error {
	id, secret, ok := c.r.BasicAuth()
	if !ok || subtle.ConstantTimeCompare([]byte(id), []byte(IntrospectionClientID)) != 1 ||
		subtle.ConstantTimeCompare([]byte(secret), []byte(IntrospectionClientSecret)) != 1 {
		e := errf(http.StatusUnauthorized, "context.authentication_failed", "Introspection client authentication failed")
		e.header = http.Header{"Www-Authenticate": {`Basic realm="introspection"`}}
		return e
	}
	if err := c.r.ParseForm(); err != nil || c.r.PostForm.Get("token") == "" {
		return errf(http.StatusBadRequest, "invalid_request", "Missing token parameter")
	}
	in, found := s.tokens.lookup(c.r.PostForm.Get("token"))
	if !found {
		writeJSON(c.w, http.StatusOK, obj("active", false))
		return nil
	}
	reason := in.inactiveReason
	if reason == "" && !in.expChecked && !in.exp.IsZero() && !s.now().Before(in.exp) {
		reason = "token_expired"
	}
	if reason == "" && in.grant != nil {
		if exp, ok := asTime(in.grant.ExpiresAt); ok && !s.now().Before(exp) {
			reason = "grant_expired"
		}
	}
	if reason != "" {
		writeJSON(c.w, http.StatusOK, obj("active", false, "inactive_reason", reason))
		return nil
	}
	out := obj("active", true, "pdpp_token_kind", string(in.kind), "subject_id", in.subjectID)
	if in.clientID != "" {
		out.set("client_id", in.clientID)
	}
	if in.grant != nil {
		out.set("grant_id", in.grant.GrantID)
	}
	if in.audience != "" {
		out.set("aud", in.audience)
	}
	if in.kind == TokenPackage {
		out.set("grant_package_id", in.packageID)
		out.set("package", packageIntrospection(&in, s.tokens.lookup))
	}
	if !in.exp.IsZero() {
		out.set("exp", in.exp.Unix())
	}
	writeJSON(c.w, http.StatusOK, out)
	return nil
}
