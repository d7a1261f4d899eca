package pdpptest

import (
	"encoding/json"
	"mime"
	"net/http"
	"strconv"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// Blobs: GET /v1/blobs/{blob_id}. A blob id grants
// nothing by itself: the bytes are served only when a record the caller can
// read (stream and connection in scope, visible under the grant, blob_ref
// granted) references the blob. fetch_url injection on record reads lives in
// records.go.

func (s *Server) mountBlobs(m *http.ServeMux) {
	m.HandleFunc("GET /v1/blobs/{blob_id}", s.read(s.handleBlob))
}

// inlineSafeTypes are the media types the reference lets a browser render
// in place; everything else is sent as an attachment.
var inlineSafeTypes = set("application/pdf", "image/avif", "image/bmp", "image/gif", "image/jpeg",
	"image/png", "image/tiff", "image/webp", "image/x-icon")

func (s *Server) handleBlob(c *call) error {
	id := c.r.PathValue("blob_id")
	connID, alias, aerr := c.connectionParam()
	if aerr != nil {
		return aerr
	}
	scopes, aerr := c.readableStreams(connID, "")
	if aerr != nil {
		return aerr
	}
	blob, ok := s.ds.Blobs[id]
	if !ok {
		return blobNotFound()
	}
	// One match per connection: the first readable record that references
	// the blob there.
	var conns []dataset.Connection
	seen := map[string]bool{}
	for _, sc := range scopes {
		if !sc.granted("blob_ref") {
			continue
		}
		for _, conn := range sc.conns {
			if seen[conn.ID] {
				continue
			}
			for _, r := range c.rows(sc, conn.ID) {
				if blobIDOf(r) == id {
					seen[conn.ID] = true
					conns = append(conns, conn)
					break
				}
			}
		}
	}
	switch {
	case len(conns) == 0:
		return blobNotFound()
	case len(conns) > 1 && connID == "":
		return errf(http.StatusConflict, "ambiguous_connection",
			"Blob '%s' is exposed by records under more than one connection. Retry with `connection_id`.", id).
			with("available_connections", availableConnections(conns)).
			with("retry_with", "connection_id")
	}
	ctype := blob.MIMEType
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	h := c.w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Length", strconv.Itoa(len(blob.Bytes)))
	h.Set("Cache-Control", "private, no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	if mt, _, err := mime.ParseMediaType(ctype); err != nil || !inlineSafeTypes[mt] {
		h.Set("Content-Disposition", "attachment")
	}
	if alias {
		// Raw bytes have no meta.warnings; the reference says it in a header.
		h.Set("PDPP-Warning", "deprecated_alias_used: connector_instance_id")
	}
	c.w.WriteHeader(http.StatusOK)
	_, _ = c.w.Write(blob.Bytes)
	return nil
}

func blobNotFound() *apiError {
	return errf(http.StatusNotFound, "blob_not_found", "Blob not found")
}

// blobIDOf returns data.blob_ref.blob_id, or "".
func blobIDOf(r *storedRecord) string {
	raw, ok := r.raw("blob_ref")
	if !ok {
		return ""
	}
	var ref struct {
		BlobID string `json:"blob_id"`
	}
	if json.Unmarshal(raw, &ref) != nil {
		return ""
	}
	return ref.BlobID
}
