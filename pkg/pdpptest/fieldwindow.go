package pdpptest

import "net/http"

// Field window: GET /v1/streams/{stream}/records/{id}/field-window
// (rs-contract §6.2). Stub: answers 501 until implemented.

func (s *Server) mountFieldWindow(m *http.ServeMux) {
	m.HandleFunc("GET /v1/streams/{stream}/records/{id}/field-window", s.read(s.handleFieldWindow))
}

func (s *Server) handleFieldWindow(c *call) error { return notImplemented(c) }
