package evidence

import (
	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/resultid"
)

// Scope is what a caller knows about records beyond what they carry: the
// stream the request named and the connection it was scoped to (the
// connection_id argument, or the grant's only connection). Records that carry
// their own stream or connection_id override it.
type Scope struct {
	Stream       string
	ConnectionID string
}

// Identity returns the id of a record wrapper or search hit: the record key is
// the wrapper's record-level "id" (a search hit's "record_key"), never a key
// inside "data"; the stream and connection come from the record, else from
// scope. It reports false when no valid id can be formed; it never drops a
// connection the record names to produce a legacy id.
func Identity(rec gjson.Result, scope Scope) (resultid.ID, bool) {
	if !rec.IsObject() {
		return resultid.ID{}, false
	}
	keyOrder := [...]string{"id", "record_key", "record_id"}
	if rec.Get("object").Str == "search_result" {
		keyOrder = [...]string{"record_key", "record_id", "id"}
	}
	key := ""
	for _, k := range keyOrder {
		if v := rec.Get(k); v.Type == gjson.String && v.Str != "" {
			key = v.Str
			break
		}
	}
	stream := firstString(rec, "stream", "stream_name")
	if stream == "" {
		stream = scope.Stream
	}
	conn := firstString(rec, "connection_id", "connector_instance_id")
	if conn == "" {
		conn = scope.ConnectionID
	}
	id, err := resultid.New(conn, stream, key)
	return id, err == nil
}

// payload returns the record's field object: "data" when it is an object (the
// RS record wrapper), else the record itself.
func payload(rec gjson.Result) gjson.Result {
	if d := rec.Get("data"); d.IsObject() {
		return d
	}
	return rec
}

// firstString returns the first non-empty string member among keys.
func firstString(v gjson.Result, keys ...string) string {
	for _, k := range keys {
		if f := v.Get(gjson.Escape(k)); f.Type == gjson.String && f.Str != "" {
			return f.Str
		}
	}
	return ""
}

// rows returns the records of a list body: a bare array, "data", "records" or
// "data.records".
func rows(doc gjson.Result) gjson.Result {
	if doc.IsArray() {
		return doc
	}
	for _, p := range [...]string{"data", "records", "data.records"} {
		if v := doc.Get(p); v.IsArray() {
			return v
		}
	}
	return gjson.Result{}
}
