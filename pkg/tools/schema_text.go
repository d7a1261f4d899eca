package tools

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// Bounds of the schema text. Every cut is announced in the text with the
// call that shows the rest.
const (
	maxStreamRows       = 50 // per-stream lines; more streams are still named in stream_index
	maxRowConnections   = 8  // connections per stream line
	maxFieldsTotal      = 96 // fields over all rows of one answer…
	minFieldsPerRow     = 16 // …but at least this many per row
	maxAggregatedFields = 12 // fields per aggregation kind
)

// legendLine explains the flag grammar; it is printed whenever field flags
// are.
const legendLine = "field_capability_legend t=declared_type eq=exact_filter r=range_filter_ops lex=lexical_search " +
	"sem=semantic_search a=aggregation_caps g=false=not_granted declared=no_query_capabilities; " +
	"filter only fields with eq or r; sort takes cursor_field or -cursor_field"

// legendJSON is the same legend for structuredContent.
const legendJSON = `{"t":"declared type","eq":"exact filter supported","r":"range filter operators",` +
	`"lex":"lexical search field","sem":"semantic search field","a":"aggregation capabilities",` +
	`"g=false":"field is not granted","declared":"no query capabilities"}`

const indexHint = "call schema(stream, connection_id?) for per-field capability flags (filter/sort/expand/fields/count/aggregate)"

// schemaRow is one stream row and the connector it is listed under.
type schemaRow struct {
	connector gjson.Result // zero when the document has no connectors[]
	stream    gjson.Result
}

// schemaRows collects a schema document's stream rows (with their
// connectors) and the names of streams listed without detail.
func schemaRows(doc gjson.Result) ([]schemaRow, []string) {
	connectors := doc.Get("connectors")
	var rows []schemaRow
	var bareNames []string
	if connectors.IsArray() {
		connectors.ForEach(func(_, c gjson.Result) bool {
			c.Get("streams").ForEach(func(_, s gjson.Result) bool {
				if s.IsObject() {
					rows = append(rows, schemaRow{connector: c, stream: s})
				}
				return true
			})
			return true
		})
	} else {
		doc.Get("streams").ForEach(func(_, s gjson.Result) bool {
			switch {
			case s.IsObject():
				rows = append(rows, schemaRow{stream: s})
			case s.Type == gjson.String:
				bareNames = append(bareNames, s.Str)
			}
			return true
		})
	}
	return rows, bareNames
}

// schemaText renders the model-visible summary of a schema document: enough
// to choose a stream and build filter, sort, fields, aggregate and
// connection arguments without structuredContent.
func schemaText(doc gjson.Result, stream, connectionID string) string {
	fieldDetail := stream != ""
	connectors := doc.Get("connectors")
	rows, bareNames := schemaRows(doc)

	nConnectors := int(doc.Get("connector_count").Int())
	if connectors.IsArray() {
		nConnectors = len(connectors.Array())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "PDPP schema: connectors=%d streams=%d", nConnectors, max(len(rows), len(bareNames)))
	if kind := doc.Get("bearer.token_kind").String(); kind != "" {
		b.WriteString("\nbearer token_kind=" + inline(kind))
	}
	for _, w := range sourceWarnings(doc.Get("meta")) {
		b.WriteString("\nwarning code=" + w.code + " message=" + shownJSON(w.message))
	}
	if len(rows) == 0 {
		for i, n := range bareNames {
			if i == maxStreamRows {
				fmt.Fprintf(&b, "\nmore_streams=%d (call schema(stream) with a name from structuredContent.data.streams)", len(bareNames)-i)
				break
			}
			b.WriteString("\nstream name=" + jsonString(n))
		}
		if len(bareNames) == 0 && stream != "" {
			b.WriteString("\nno granted stream matches " + jsonString(stream) + "; call schema() for the granted streams")
		}
		return b.String()
	}

	if fieldDetail {
		b.WriteString("\n" + legendLine)
	}
	if connectionID != "" {
		b.WriteString("\nschema_scope connection_id=" + jsonString(connectionID))
	}
	if len(rows) > maxStreamRows {
		writeStreamIndex(&b, rows)
	}
	fieldCap := max(minFieldsPerRow, maxFieldsTotal/max(1, min(len(rows), maxStreamRows)))
	fieldsCut := false
	for i, r := range rows {
		if i == maxStreamRows {
			fmt.Fprintf(&b, "\nmore_streams=%d (every stream is named in stream_index above; call schema(stream) for one)", len(rows)-i)
			break
		}
		b.WriteString("\n")
		if writeStreamLine(&b, r, fieldDetail, fieldCap) {
			fieldsCut = true
		}
	}
	if fieldsCut {
		b.WriteString("\nfields_cut: some stream lines end in more:N; the full field_capabilities are in structuredContent.data, " +
			"or call schema(stream, connection_id) for one source")
	}
	if !fieldDetail {
		b.WriteString("\n" + indexHint)
	}
	return b.String()
}

// writeStreamIndex names every stream, grouped by connector key in first-seen
// order, so no stream is hidden by the row cap.
func writeStreamIndex(b *strings.Builder, rows []schemaRow) {
	var keys []string
	names := map[string][]string{}
	seen := map[string]bool{}
	for _, r := range rows {
		k := connectorKey(r)
		if k == "" {
			k = "unknown"
		}
		if _, ok := names[k]; !ok {
			keys = append(keys, k)
			names[k] = nil
		}
		n := streamName(r.stream)
		if !seen[k+"\x00"+n] {
			seen[k+"\x00"+n] = true
			names[k] = append(names[k], inline(n))
		}
	}
	for _, k := range keys {
		fmt.Fprintf(b, "\nstream_index connector_key=%s stream_count=%d streams=%s",
			jsonString(k), len(names[k]), strings.Join(names[k], "|"))
	}
}

// writeStreamLine writes one stream row and reports whether its field list
// was cut.
func writeStreamLine(b *strings.Builder, r schemaRow, fieldDetail bool, fieldCap int) bool {
	b.WriteString("stream name=" + jsonString(streamName(r.stream)))
	b.WriteString(" connector_key=" + quotedOrNull(connectorKey(r)))
	// The connector's label is left out when the RS has none: "null" on
	// every row would cost tokens and say nothing.
	if dn := displayName(r); dn != "" {
		b.WriteString(" display_name=" + jsonString(dn))
	}
	b.WriteString(" connections=" + rowConnections(r, inline))
	if !fieldDetail {
		return false
	}
	s := r.stream
	if pk := joinStrings(s.Get("primary_key"), "|"); pk != "" {
		b.WriteString(" primary_key=" + pk)
	}
	if cf := s.Get("cursor_field").String(); cf != "" {
		b.WriteString(" cursor_field=" + inline(cf))
	}
	if n := s.Get("record_count"); n.Type == gjson.Number {
		b.WriteString(" record_count=" + n.Raw)
	}
	if ex := s.Get("expand_capabilities"); ex.Exists() {
		b.WriteString(" expand=" + expandSummary(ex))
	}
	if views := s.Get("views"); views.IsArray() && len(views.Array()) > 0 {
		var ids []string
		views.ForEach(func(_, v gjson.Result) bool {
			ids = append(ids, inline(v.Get("id").String()))
			return true
		})
		b.WriteString(" views=" + strings.Join(ids, "|"))
	}
	type field struct{ name, flags string }
	var fields []field
	caps := s.Get("field_capabilities")
	if caps.IsArray() {
		caps.ForEach(func(_, v gjson.Result) bool {
			fields = append(fields, field{v.Get("name").String(), visible.String(fieldFlags(v))})
			return true
		})
	} else {
		caps.ForEach(func(k, v gjson.Result) bool {
			fields = append(fields, field{k.String(), visible.String(fieldFlags(v))})
			return true
		})
	}
	cut := false
	if len(fields) == 0 {
		b.WriteString(" fields=none")
	} else {
		parts := make([]string, 0, min(len(fields), fieldCap)+1)
		for i, f := range fields {
			if i == fieldCap {
				parts = append(parts, "more:"+strconv.Itoa(len(fields)-i))
				cut = true
				break
			}
			parts = append(parts, inline(f.name)+"["+f.flags+"]")
		}
		b.WriteString(" fields=" + strings.Join(parts, ";"))
	}
	// Aggregations are summarised over every field, cut or not.
	byKind := map[string][]string{}
	var kinds []string
	for _, f := range fields {
		for _, flag := range strings.Split(f.flags, ",") {
			list, ok := strings.CutPrefix(flag, "a=")
			if !ok {
				continue
			}
			for _, k := range strings.Split(list, "|") {
				if _, seen := byKind[k]; !seen {
					kinds = append(kinds, k)
				}
				byKind[k] = append(byKind[k], inline(f.name))
			}
		}
	}
	if len(kinds) > 0 {
		ordered := make([]string, 0, len(kinds))
		for _, k := range []string{"count_distinct", "group_by", "group_by_time", "sum", "min", "max"} {
			if _, ok := byKind[k]; ok {
				ordered = append(ordered, k)
			}
		}
		for _, k := range kinds {
			if !strings.Contains(" count_distinct group_by group_by_time sum min max ", " "+k+" ") {
				ordered = append(ordered, k)
			}
		}
		parts := make([]string, len(ordered))
		for i, k := range ordered {
			names := byKind[k]
			if len(names) > maxAggregatedFields {
				names = append(names[:maxAggregatedFields:maxAggregatedFields], "more:"+strconv.Itoa(len(byKind[k])-maxAggregatedFields))
				cut = true
			}
			parts[i] = k + "=" + strings.Join(names, "|")
		}
		b.WriteString(" aggregations=" + strings.Join(parts, ";"))
	}
	return cut
}

// expandSummary renders expand relations: name(cardinality,max_limit=N) when
// usable, name(unusable:reason) otherwise, or none.
func expandSummary(ex gjson.Result) string {
	var parts []string
	ex.ForEach(func(_, e gjson.Result) bool {
		name := e.Get("name").String()
		if name == "" {
			name = e.Get("relation").String()
		}
		if name == "" {
			return true
		}
		var attrs []string
		if e.Get("usable").Type == gjson.False || e.Get("granted").Type == gjson.False {
			u := "unusable"
			if r := e.Get("reason").String(); r != "" {
				u += ":" + inline(r)
			}
			attrs = append(attrs, u)
		} else {
			if c := e.Get("cardinality").String(); c != "" {
				attrs = append(attrs, inline(c))
			}
			if m := e.Get("max_limit"); m.Type == gjson.Number {
				attrs = append(attrs, "max_limit="+m.Raw)
			}
		}
		p := inline(name)
		if len(attrs) > 0 {
			p += "(" + strings.Join(attrs, ",") + ")"
		}
		parts = append(parts, p)
		return true
	})
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "|")
}

// rowConnections lists the connections a stream row can be read from: its
// own set, else its connector's, else the single connection it names. q
// writes each value (see connectionItem).
func rowConnections(r schemaRow, q func(string) string) string {
	list := r.stream.Get("granted_connections")
	if !list.IsArray() || len(list.Array()) == 0 {
		list = r.connector.Get("granted_connections")
	}
	var parts []string
	if list.IsArray() {
		all := list.Array()
		for i, c := range all {
			if i == maxRowConnections {
				parts = append(parts, "more:"+strconv.Itoa(len(all)-i))
				break
			}
			parts = append(parts, connectionItem(q, c.Get("connection_id").String(), c.Get("display_name").String(),
				c.Get("connector_key").String()))
		}
	}
	if len(parts) == 0 {
		id := first(r.stream, "connection_id", "connector_instance_id", "source.connection_id").String()
		if id == "" {
			return "none"
		}
		return connectionItem(q, id, "", "")
	}
	return strings.Join(parts, "|")
}

func streamName(s gjson.Result) string {
	return first(s, "name", "stream", "stream_name").String()
}

func connectorKey(r schemaRow) string {
	if v := first(r.stream, "connector_key", "connector_id", "source.connector_key", "source.connector_id", "source.id"); v.Exists() {
		return v.String()
	}
	return first(r.connector, "connector_key", "connector_id", "source.connector_key", "source.connector_id", "source.id").String()
}

func displayName(r schemaRow) string {
	if v := first(r.stream, "display_name", "connection_display_name", "source.display_name"); v.Exists() {
		return v.String()
	}
	if v := first(r.connector, "display_name", "source.display_name", "connector_display_name"); v.Exists() {
		return v.String()
	}
	return first(r.stream, "connector_display_name").String()
}

// first returns the first of paths that holds a non-empty, non-null value.
func first(r gjson.Result, paths ...string) gjson.Result {
	for _, p := range paths {
		if v := r.Get(p); v.Exists() && v.Type != gjson.Null && v.String() != "" {
			return v
		}
	}
	return gjson.Result{}
}

func quotedOrNull(s string) string {
	if s == "" {
		return "null"
	}
	return jsonString(s)
}

func joinStrings(list gjson.Result, sep string) string {
	var parts []string
	list.ForEach(func(_, v gjson.Result) bool {
		parts = append(parts, inline(v.String()))
		return true
	})
	return strings.Join(parts, sep)
}
