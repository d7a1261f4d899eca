package tools

import (
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/evidence"
)

// This file projects /v1/schema documents the way the RS's own
// view=compact does, for two cases: an RS that rejects view=compact (the
// full document is compacted locally), and global discovery, which is kept
// an index (per-stream field and expand capabilities are left out).

// streamKeys are the stream members a compact projection keeps.
var streamKeys = map[string]bool{
	"name": true, "stream": true, "stream_name": true, "connector_key": true, "connector_id": true,
	"connector_display_name": true, "display_name": true, "connection_display_name": true,
	"connection_id": true, "record_count": true, "granted": true, "primary_key": true,
	"cursor_field": true, "source": true,
}

// expandKeys are the expand_capabilities members a compact projection keeps.
var expandKeys = map[string]bool{
	"name": true, "relation": true, "stream": true, "target_stream": true, "cardinality": true,
	"granted": true, "usable": true, "foreign_key": true, "max_limit": true, "default_limit": true,
	"reason": true,
}

// aggregationKinds is the order of aggregation kinds in a flag string.
var aggregationKinds = []string{"count_distinct", "group_by", "group_by_time", "max", "min", "sum"}

// unwrapSchema returns the schema document of an RS answer: the body itself,
// or its data member when the body wraps the document ({"data": {…}}).
func unwrapSchema(body []byte) gjson.Result {
	doc := evidence.ParseBody(body)
	if d := doc.Get("data"); d.IsObject() &&
		(d.Get("connectors").IsArray() || d.Get("streams").IsArray() ||
			d.Get("granted_connections").IsArray() || d.Get("object").String() == "schema") {
		return d
	}
	return doc
}

// withoutDuplicateStreams drops a top-level streams array that repeats the
// connector-nested rows, which some servers add next to connectors[].
func withoutDuplicateStreams(doc gjson.Result) string {
	if !doc.Get("connectors").IsArray() || !doc.Get("streams").Exists() {
		return doc.Raw
	}
	var w jsonWriter
	w.beginObject()
	doc.ForEach(func(k, v gjson.Result) bool {
		if k.String() != "streams" {
			w.member(k.String(), v.Raw)
		}
		return true
	})
	w.endObject()
	return string(w.bytes())
}

// projectSchema returns the compact projection of doc. With fields, each
// stream keeps compacted field_capabilities and expand_capabilities;
// without, the result is an index of streams and connections.
func projectSchema(doc gjson.Result, fields bool) string {
	connectors := doc.Get("connectors")
	var w jsonWriter
	w.beginObject()
	sawDetail := false
	doc.ForEach(func(k, v gjson.Result) bool {
		key := k.String()
		switch {
		case key == "connectors" && v.IsArray():
			w.key(key)
			w.beginArray()
			v.ForEach(func(_, c gjson.Result) bool {
				if c.IsObject() {
					projectConnector(&w, c, fields)
				} else {
					w.raw(c.Raw)
				}
				return true
			})
			w.endArray()
		case key == "streams" && connectors.IsArray():
			// Duplicate of the connector-nested rows.
		case key == "streams" && v.IsArray():
			w.key(key)
			w.beginArray()
			v.ForEach(func(_, s gjson.Result) bool {
				if s.IsObject() {
					projectStream(&w, s, "", fields)
				} else {
					w.raw(s.Raw)
				}
				return true
			})
			w.endArray()
		case key == "detail":
			sawDetail = true
			w.member(key, `"compact"`)
		default:
			w.member(key, v.Raw)
		}
		return true
	})
	if !sawDetail {
		w.key("detail")
		w.str("compact")
	}
	w.endObject()
	return string(w.bytes())
}

// projectConnector writes one connector: every member kept, streams
// projected, and the most common per-stream connection set lifted to
// connector.granted_connections (unless the connector already has one).
func projectConnector(w *jsonWriter, c gjson.Result, fields bool) {
	lifted, liftedSig := c.Get("granted_connections"), ""
	if lifted.IsArray() {
		liftedSig = connectionSignature(lifted)
	} else {
		lifted, liftedSig = mostCommonConnections(c.Get("streams"))
	}
	w.beginObject()
	c.ForEach(func(k, v gjson.Result) bool {
		key := k.String()
		switch {
		case key == "streams" && v.IsArray():
			w.key(key)
			w.beginArray()
			v.ForEach(func(_, s gjson.Result) bool {
				if s.IsObject() {
					projectStream(w, s, liftedSig, fields)
				} else {
					w.raw(s.Raw)
				}
				return true
			})
			w.endArray()
		case key == "granted_connections":
			w.key(key)
			writeConnections(w, v)
		default:
			w.member(key, v.Raw)
		}
		return true
	})
	if !c.Get("granted_connections").Exists() && lifted.Exists() {
		w.key("granted_connections")
		writeConnections(w, lifted)
	}
	w.endObject()
}

// projectStream writes the compact form of one stream row. Its own
// granted_connections are kept only when they differ from the connector's.
func projectStream(w *jsonWriter, s gjson.Result, connectorSig string, fields bool) {
	w.beginObject()
	s.ForEach(func(k, v gjson.Result) bool {
		key := k.String()
		switch {
		case streamKeys[key]:
			w.member(key, v.Raw)
		case key == "granted_connections" && v.IsArray():
			if connectorSig == "" || connectionSignature(v) != connectorSig {
				w.key(key)
				writeConnections(w, v)
			}
		case key == "field_capabilities" && fields:
			w.key(key)
			writeFieldFlags(w, v)
		case key == "expand_capabilities" && fields && v.IsArray():
			w.key(key)
			writeExpand(w, v)
		}
		return true
	})
	w.endObject()
}

// writeConnections copies a connection list without the deprecated
// connector_instance_id alias.
func writeConnections(w *jsonWriter, list gjson.Result) {
	if !list.IsArray() {
		w.raw(list.Raw)
		return
	}
	w.beginArray()
	list.ForEach(func(_, c gjson.Result) bool {
		if !c.IsObject() {
			w.raw(c.Raw)
			return true
		}
		w.beginObject()
		c.ForEach(func(k, v gjson.Result) bool {
			if k.String() != "connector_instance_id" {
				w.member(k.String(), v.Raw)
			}
			return true
		})
		w.endObject()
		return true
	})
	w.endArray()
}

// connectionSignature identifies a connection set regardless of order.
func connectionSignature(list gjson.Result) string {
	var parts []string
	list.ForEach(func(_, c gjson.Result) bool {
		parts = append(parts, c.Get("connection_id").String()+"\x00"+c.Get("display_name").String())
		return true
	})
	slices.Sort(parts)
	return strings.Join(parts, "\x01")
}

// mostCommonConnections picks the non-empty per-stream connection set shared
// by the most streams (the first seen wins a tie).
func mostCommonConnections(streams gjson.Result) (gjson.Result, string) {
	var best gjson.Result
	bestSig, bestN := "", 0
	counts := map[string]int{}
	var order []string
	first := map[string]gjson.Result{}
	streams.ForEach(func(_, s gjson.Result) bool {
		gc := s.Get("granted_connections")
		if !gc.IsArray() || len(gc.Array()) == 0 {
			return true
		}
		sig := connectionSignature(gc)
		if _, ok := first[sig]; !ok {
			first[sig] = gc
			order = append(order, sig)
		}
		counts[sig]++
		return true
	})
	for _, sig := range order {
		if counts[sig] > bestN {
			best, bestSig, bestN = first[sig], sig, counts[sig]
		}
	}
	return best, bestSig
}

// writeFieldFlags writes field_capabilities in compact form: a map of field
// to flag string, or for the array form a list of {name, flags}.
func writeFieldFlags(w *jsonWriter, caps gjson.Result) {
	switch {
	case caps.IsObject():
		w.beginObject()
		caps.ForEach(func(k, v gjson.Result) bool {
			w.key(k.String())
			w.str(fieldFlags(v))
			return true
		})
		w.endObject()
	case caps.IsArray():
		w.beginArray()
		caps.ForEach(func(_, v gjson.Result) bool {
			w.beginObject()
			w.member("name", v.Get("name").Raw)
			w.key("flags")
			w.str(fieldFlags(v))
			w.endObject()
			return true
		})
		w.endArray()
	default:
		w.raw(caps.Raw)
	}
}

// writeExpand keeps the compact members of each expand capability.
func writeExpand(w *jsonWriter, list gjson.Result) {
	w.beginArray()
	list.ForEach(func(_, e gjson.Result) bool {
		kept := false
		e.ForEach(func(k, _ gjson.Result) bool {
			kept = expandKeys[k.String()]
			return !kept
		})
		if !e.IsObject() || !kept {
			w.raw(e.Raw)
			return true
		}
		w.beginObject()
		e.ForEach(func(k, v gjson.Result) bool {
			if expandKeys[k.String()] {
				w.member(k.String(), v.Raw)
			}
			return true
		})
		w.endObject()
		return true
	})
	w.endArray()
}

// fieldFlags returns the compact flag string of one field capability: the
// value itself when it already is one, else the RS grammar
// t=<type>,role=<role>,g=false,eq,r=<ops>,lex,sem,a=<kinds>, or "declared".
func fieldFlags(c gjson.Result) string {
	if c.Type == gjson.String {
		return c.String()
	}
	if f := c.Get("flags"); f.Type == gjson.String {
		return f.String()
	}
	var flags []string
	if t := fieldType(c); t != "" {
		flags = append(flags, "t="+flagValue(t))
	}
	role := c.Get("role")
	if !role.Exists() {
		role = c.Get("schema.x_pdpp_role")
	}
	if role.String() != "" {
		flags = append(flags, "role="+flagValue(role.String()))
	}
	if c.Get("granted").Type == gjson.False {
		flags = append(flags, "g=false")
	}
	if f := capabilityFlag("eq", c.Get("exact_filter"), ""); f != "" {
		flags = append(flags, f)
	}
	var ops []string
	c.Get("range_filter.operators").ForEach(func(_, op gjson.Result) bool {
		ops = append(ops, flagValue(op.String()))
		return true
	})
	if f := capabilityFlag("r", c.Get("range_filter"), strings.Join(ops, "|")); f != "" {
		flags = append(flags, f)
	}
	if f := capabilityFlag("lex", c.Get("lexical_search"), ""); f != "" {
		flags = append(flags, f)
	}
	if f := capabilityFlag("sem", c.Get("semantic_search"), ""); f != "" {
		flags = append(flags, f)
	}
	if kinds := usableAggregations(c.Get("aggregation")); len(kinds) > 0 {
		flags = append(flags, "a="+strings.Join(kinds, "|"))
	}
	if len(flags) == 0 {
		return "declared"
	}
	return strings.Join(flags, ",")
}

func fieldType(c gjson.Result) string {
	for _, p := range []string{"type", "schema.x_pdpp_type", "schema.type"} {
		v := c.Get(p)
		switch {
		case v.Type == gjson.String && v.Str != "":
			return v.Str
		case v.IsArray():
			var ts []string
			v.ForEach(func(_, t gjson.Result) bool {
				ts = append(ts, t.String())
				return true
			})
			if len(ts) > 0 {
				return strings.Join(ts, "|")
			}
		}
	}
	return ""
}

// capabilityFlag renders one {declared, usable, reason} capability: the bare
// flag (or flag=value) when usable, flag=unusable[:reason] when declared but
// unusable, nothing otherwise.
func capabilityFlag(flag string, c gjson.Result, value string) string {
	if !c.IsObject() {
		return ""
	}
	switch {
	case c.Get("usable").Bool():
		if value != "" {
			return flag + "=" + value
		}
		return flag
	case c.Get("declared").Bool():
		s := flag + "=unusable"
		if r := c.Get("reason").String(); r != "" {
			s += ":" + flagValue(r)
		}
		return s
	}
	return ""
}

// usableAggregations lists the usable aggregation kinds in grammar order,
// then unknown kinds in document order.
func usableAggregations(agg gjson.Result) []string {
	var kinds []string
	for _, k := range aggregationKinds {
		if agg.Get(k + ".usable").Bool() {
			kinds = append(kinds, k)
		}
	}
	agg.ForEach(func(k, v gjson.Result) bool {
		if !slices.Contains(aggregationKinds, k.String()) && v.Get("usable").Bool() {
			kinds = append(kinds, flagValue(k.String()))
		}
		return true
	})
	return kinds
}

// flagValue keeps a value from breaking the flag grammar, as the RS does.
func flagValue(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ',', ';', '[', ']', '{', '}', '=', ' ', '\t', '\n', '\r':
			return '_'
		}
		return r
	}, s)
}
