package pdpptest

import "net/http"

// Search routes: /v1/search (lexical), /v1/search/semantic and
// /v1/search/hybrid (rs-contract §5). Stub: answers 501 until implemented.

// mountSearch registers the search routes. Semantic and hybrid are unmounted
// (plain 404) when switched off, as the reference does without a backend.
func (s *Server) mountSearch(m *http.ServeMux) {
	m.HandleFunc("GET /v1/search", s.read(s.handleSearch))
	if !s.opts.DisableSemantic {
		m.HandleFunc("GET /v1/search/semantic", s.read(s.handleSearchSemantic))
		if !s.opts.DisableHybrid {
			m.HandleFunc("GET /v1/search/hybrid", s.read(s.handleSearchHybrid))
		}
	}
}

func (s *Server) handleSearch(c *call) error         { return notImplemented(c) }
func (s *Server) handleSearchSemantic(c *call) error { return notImplemented(c) }
func (s *Server) handleSearchHybrid(c *call) error   { return notImplemented(c) }
