package pdpptest

import (
	"encoding/json"
	"net/url"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// GET /v1/streams/{stream}/records and /records/{id} (rs-contract §2.3, §2.4).

func (s *Server) handleRecords(c *call) error { return notImplemented(c) }
func (s *Server) handleRecord(c *call) error  { return notImplemented(c) }

// project returns the record's data restricted to fields, in that order; nil
// fields means every field in authored order. Absent fields are skipped.
func project(r *storedRecord, fields []string) *object {
	if fields == nil {
		return r.data.clone()
	}
	out := &object{}
	for _, f := range fields {
		if v, ok := r.data.get(f); ok {
			out.set(f, v)
		}
	}
	return out
}

// injectFetchURL adds blob_ref.fetch_url, which the reference adds at read time
// on lists, detail and expanded children.
func injectFetchURL(data *object) {
	v, ok := data.get("blob_ref")
	if !ok {
		return
	}
	raw, ok := v.(json.RawMessage)
	if !ok {
		return
	}
	ref, err := decodeObject(raw)
	if err != nil {
		return // null or not an object: nothing to fetch
	}
	idv, ok := ref.get("blob_id")
	if !ok {
		return
	}
	var id string
	if json.Unmarshal(idv.(json.RawMessage), &id) != nil || id == "" {
		return
	}
	ref.set("fetch_url", "/v1/blobs/"+url.PathEscape(id))
	data.set("blob_ref", ref)
}

// wrapRecord builds the record wrapper of a list, detail or expanded child:
// data (projected to fields), emitted_at, id, object, stream, then the
// connection identity (connection_id, its deprecated alias, display_name).
func (c *call) wrapRecord(sc *streamScope, conn dataset.Connection, r *storedRecord, fields []string) *object {
	data := project(r, fields)
	injectFetchURL(data)
	w := obj("data", data, "emitted_at", r.emittedAt, "id", r.key, "object", "record", "stream", sc.decl.Name)
	addConnection(w, conn)
	return w
}

// addConnection appends connection_id, connector_instance_id and display_name.
func addConnection(o *object, conn dataset.Connection) {
	o.set("connection_id", conn.ID)
	o.set("connector_instance_id", conn.ID)
	o.setIf(conn.DisplayName != "", "display_name", conn.DisplayName)
}
