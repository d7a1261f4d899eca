package pdpptest

import "net/http"

// Protected-resource metadata (RFC 9728): GET
// /.well-known/oauth-protected-resource and its /mcp variant (rs-contract §9).
// No bearer needed. Stub: answers 501 until implemented.

func (s *Server) mountMetadata(m *http.ServeMux) {
	m.HandleFunc("GET /.well-known/oauth-protected-resource", s.public(s.handleResourceMetadata))
	m.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", s.public(s.handleResourceMetadataMCP))
}

func (s *Server) handleResourceMetadata(c *call) error    { return notImplemented(c) }
func (s *Server) handleResourceMetadataMCP(c *call) error { return notImplemented(c) }
