package evidence

import (
	"cmp"
	"slices"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/resultid"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
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
	return identityOf(rec, scope, nil)
}

// identityOf is Identity. When firstConn is set, the same pass over rec's
// members also stores there what rec.Get("connection_id").Str would return:
// the first member of that name, "" when it is not a string.
func identityOf(rec gjson.Result, scope Scope, firstConn *string) (resultid.ID, bool) {
	if !rec.IsObject() {
		return resultid.ID{}, false
	}
	// One pass over the members: records can be large and every Get rescans.
	var object, id, recordKey, recordID, stream, streamName, conn, alias string
	connSeen := firstConn == nil
	rec.ForEach(func(k, v gjson.Result) bool {
		if !connSeen && k.Str == "connection_id" {
			*firstConn, connSeen = v.Str, true
		}
		if v.Type != gjson.String {
			return true
		}
		switch k.Str {
		case "object":
			object = v.Str
		case "id":
			id = v.Str
		case "record_key":
			recordKey = v.Str
		case "record_id":
			recordID = v.Str
		case "stream":
			stream = v.Str
		case "stream_name":
			streamName = v.Str
		case "connection_id":
			conn = v.Str
		case "connector_instance_id":
			alias = v.Str
		}
		return true
	})
	key := cmp.Or(id, recordKey, recordID)
	if object == "search_result" {
		key = cmp.Or(recordKey, recordID, id)
	}
	id2, err := resultid.New(cmp.Or(conn, alias, scope.ConnectionID), cmp.Or(stream, streamName, scope.Stream), key)
	return id2, err == nil
}

// firstString returns the first non-empty string member among keys (in the
// order of keys); with a single key, the first member of that name when it is
// a string, empty or not. One pass over v's members serves any number of
// keys: a per-key Get would rescan the object each time.
func firstString(v gjson.Result, keys ...string) string {
	if len(keys) == 1 {
		if f := v.Get(gjson.Escape(keys[0])); f.Type == gjson.String {
			return f.Str
		}
		return ""
	}
	best, out := len(keys), ""
	v.ForEach(func(k, f gjson.Result) bool {
		if f.Type != gjson.String || f.Str == "" {
			return true
		}
		for i := range best {
			if keys[i] == k.Str {
				best, out = i, f.Str
				break
			}
		}
		return best > 0
	})
	return out
}

// members are an object's members in authored order, read in one pass, for
// code that looks up many keys of the same object.
type members []keyValue

type keyValue struct {
	key   string
	value gjson.Result
}

// readMembers reads the members of v into buf's array (while they fit);
// anything but an object has none.
func readMembers(buf members, v gjson.Result) members {
	m := buf[:0]
	if !v.IsObject() {
		return m
	}
	v.ForEach(func(k, f gjson.Result) bool {
		m = append(m, keyValue{k.Str, f})
		return true
	})
	return m
}

// get returns the first member named key, as gjson's Get does.
func (m members) get(key string) gjson.Result {
	for _, kv := range m {
		if kv.key == key {
			return kv.value
		}
	}
	return gjson.Result{}
}

// firstString is the package-level firstString over members already read.
func (m members) firstString(keys ...string) string {
	if len(keys) == 1 {
		if f := m.get(keys[0]); f.Type == gjson.String {
			return f.Str
		}
		return ""
	}
	best, out := len(keys), ""
	for _, kv := range m {
		if kv.value.Type != gjson.String || kv.value.Str == "" {
			continue
		}
		for i := range best {
			if keys[i] == kv.key {
				best, out = i, kv.value.Str
				break
			}
		}
		if best == 0 {
			break
		}
	}
	return out
}

// envelope is what a list body holds: its rows and the handles a model needs
// for the next step.
type envelope struct {
	rows    gjson.Result
	handles handles
}

// handles are the paging, change and count handles of a list envelope.
type handles struct {
	hasMore      bool
	cursor       string
	changesSince string
	count        string
	warnings     []string
	// cursorPages: a smaller limit from the same cursor pages on to the
	// records after it (Preview sets it).
	cursorPages bool
}

// readEnvelope reads a list body in one pass over its top level. Rows are a
// bare array, "data", "records" or "data.records".
func readEnvelope(doc gjson.Result) envelope {
	var e envelope
	if doc.IsArray() {
		e.rows = doc
		return e
	}
	var data, records, count, meta gjson.Result
	doc.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "data":
			data = v
		case "records":
			records = v
		case "has_more":
			e.handles.hasMore = v.Type == gjson.True
		case "next_cursor":
			if v.Type == gjson.String {
				e.handles.cursor = v.Str
			}
		case "next_changes_since":
			if v.Type == gjson.String {
				e.handles.changesSince = v.Str
			}
		case "count":
			count = v
		case "meta":
			meta = v
		}
		return true
	})
	switch {
	case data.IsArray():
		e.rows = data
	case records.IsArray():
		e.rows = records
	case data.IsObject():
		if r := data.Get("records"); r.IsArray() {
			e.rows = r
		}
	}
	h := &e.handles
	if h.cursor == "" {
		h.cursor = firstString(meta, "next_cursor")
	}
	if h.changesSince == "" {
		h.changesSince = firstString(meta, "next_changes_since")
	}
	if !count.Exists() {
		count = meta.Get("count")
	}
	switch {
	case count.Type == gjson.Number:
		h.count = count.Raw
	case count.IsObject():
		kind, value := count.Get("kind"), count.Get("value")
		if kind.Type == gjson.String && value.Type == gjson.Number && kind.Str != "none" {
			k, _ := visible.Cut(oneLine(kind.Str), 24)
			h.count = k + ":" + value.Raw
		}
	}
	meta.Get("warnings").ForEach(func(_, w gjson.Result) bool {
		code := w.Get("code")
		if code.Type == gjson.String && code.Str != "" && !slices.Contains(h.warnings, code.Str) {
			if len(h.warnings) == 5 {
				h.warnings = append(h.warnings, "…")
				return false
			}
			c, _ := visible.Cut(oneLine(code.Str), 40)
			h.warnings = append(h.warnings, c)
		}
		return true
	})
	return e
}
