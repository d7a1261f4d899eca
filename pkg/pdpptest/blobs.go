package pdpptest

import "net/http"

// Blobs: GET /v1/blobs/{blob_id} (rs-contract §6.1). Stub: answers 501 until
// implemented. fetch_url injection on record reads lives in records.go.

func (s *Server) mountBlobs(m *http.ServeMux) {
	m.HandleFunc("GET /v1/blobs/{blob_id}", s.read(s.handleBlob))
}

func (s *Server) handleBlob(c *call) error { return notImplemented(c) }
