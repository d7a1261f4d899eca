package pdpptest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// GET /v1/streams/{stream}/records and /records/{id}.

const (
	recordsDefaultLimit = 25
	recordsMaxLimit     = 100
)

// recordsParams is the records list allowlist; anything else is 400.
var recordsParams = set("limit", "cursor", "order", "sort", "fields", "view", "filter", "expand", "expand_limit",
	"changes_since", "count", "window", "connection_id", "connector_instance_id", "connector_id", "subject_id")

// listRequest is a validated records list request.
type listRequest struct {
	fields  []string // projection; nil: the default (grant order, else authored)
	limit   int
	desc    bool
	cursor  string
	changes string // the changes_since value, "" when absent
	count   bool
	window  bool
	filters []filterSpec
	expand  []expandSpec
	// warnings collected while validating, in emission order.
	warnings []any
}

func (s *Server) handleRecords(c *call) error {
	sc, aerr := c.streamScope(c.r.PathValue("stream"), scopeOptions{ownerNeedsSource: true})
	if aerr != nil {
		return aerr
	}
	if aerr := clientBan(c.who, c.q); aerr != nil {
		return aerr
	}
	req, aerr := c.parseList(sc)
	if aerr != nil {
		return aerr
	}
	if req.changes != "" || isChangesCursor(req.cursor) {
		return c.listChanges(sc, req)
	}
	return c.listRecords(sc, req)
}

// parseList validates a records list request in the reference's order: view
// and fields shape, unknown fields, unknown parameters, count/window/order/sort,
// changes_since combinations, fields outside the grant, then filters, expand,
// limit and cursor.
func (c *call) parseList(sc *streamScope) (*listRequest, *apiError) {
	req := &listRequest{}
	fields, aerr := c.requestedFields(sc, true)
	if aerr != nil {
		return nil, aerr
	}
	req.fields = fields
	if unk := c.q.unknown(recordsParams); len(unk) > 0 {
		return nil, badRequest("Unsupported query parameter: %s", strings.Join(unk, ", ")).param(unk[0])
	}
	count, _, aerr := c.q.single("count")
	if aerr != nil {
		return nil, aerr
	}
	switch count {
	case "", "none":
	case "exact", "estimated":
		req.count = true
	default:
		return nil, badRequest("count must be one of none, estimated, exact").param("count")
	}
	window, _, aerr := c.q.single("window")
	if aerr != nil {
		return nil, aerr
	}
	switch window {
	case "", "none":
	case "exact":
		req.window = true
	default:
		return nil, badRequest("window must be one of none, exact").param("window")
	}
	req.desc, aerr = c.direction(sc)
	if aerr != nil {
		return nil, aerr
	}
	changes, hasChanges, aerr := c.q.single("changes_since")
	if aerr != nil {
		return nil, aerr
	}
	if hasChanges {
		if changes == "" {
			return nil, errf(http.StatusBadRequest, "invalid_cursor", "changes_since is empty; pass `beginning` to bootstrap or the `next_changes_since` value from a previous page").param("changes_since")
		}
		for _, k := range []string{"sort", "count", "order", "window"} {
			if c.q.has(k) {
				return nil, badRequest("changes_since cannot be combined with %s", k).param(k)
			}
		}
		if c.q.has("expand") {
			return nil, errf(http.StatusBadRequest, "invalid_expand", "expand cannot be combined with changes_since").param("expand")
		}
		req.changes = changes
	}
	for _, f := range req.fields {
		if !sc.granted(f) {
			return nil, errf(http.StatusForbidden, "field_not_granted", "Field '%s' is not granted", f).param("fields")
		}
	}
	if req.filters, aerr = parseFilters(sc, c.q); aerr != nil {
		return nil, aerr
	}
	if req.expand, aerr = parseExpand(sc, c.q); aerr != nil {
		return nil, aerr
	}
	if sc.aliasUsed {
		req.warnings = append(req.warnings, aliasWarning())
	}
	req.limit = recordsDefaultLimit
	if v, _, aerr := c.q.single("limit"); aerr != nil {
		return nil, aerr
	} else if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
		// Non-positive or unparseable values fall back to the default, as in
		// the reference.
		req.limit = n
	}
	if req.limit > recordsMaxLimit {
		req.warnings = append(req.warnings, limitClampedWarning("limit", req.limit, recordsMaxLimit,
			"Requested limit="+strconv.Itoa(req.limit)+" exceeds the maximum page size of 100; returned 100 records per page. Page forward with the returned cursor."))
		req.limit = recordsMaxLimit
	}
	if cur, _, aerr := c.q.single("cursor"); aerr != nil {
		return nil, aerr
	} else if cur != "" {
		if _, ok := pageCursorKind(cur); !ok {
			return nil, errf(http.StatusBadRequest, "invalid_cursor", "Malformed cursor")
		}
		req.cursor = cur
	}
	return req, nil
}

// requestedFields reads view and fields. On lists a client view is refused
// (grants resolve views when issued) and view+fields is an error; unknown
// fields are 400 unknown_field. Grant checks come later.
func (c *call) requestedFields(sc *streamScope, list bool) ([]string, *apiError) {
	view, hasView, aerr := c.q.single("view")
	if aerr != nil {
		return nil, aerr
	}
	if list && hasView {
		if c.who.client() {
			return nil, badRequest("Client record reads must use explicit fields; views are resolved when the grant is issued")
		}
		if c.q.has("fields") {
			return nil, badRequest("view and fields cannot be combined; send one of them").param("view")
		}
		v := sc.decl.View(view)
		if v == nil {
			return nil, badRequest("Unknown view: %s", view).param("view")
		}
		return v.Fields, nil
	}
	if !c.q.has("fields") {
		return nil, nil
	}
	fields := c.q.csv("fields")
	if len(fields) == 0 {
		return nil, badRequest("fields must name at least one field").param("fields")
	}
	var unknown []string
	for _, f := range fields {
		if sc.decl.Property(f) == nil {
			unknown = append(unknown, f)
		}
	}
	if len(unknown) > 0 {
		return nil, errf(http.StatusBadRequest, "unknown_field", "Unknown field: %s", strings.Join(unknown, ", "))
	}
	return dedupe(fields), nil
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	out := xs[:0:0]
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// direction reads order and sort. Only the stream's cursor_field is sortable;
// sort and order must agree. The default is descending.
func (c *call) direction(sc *streamScope) (desc bool, err *apiError) {
	desc = true
	order, hasOrder, aerr := c.q.single("order")
	if aerr != nil {
		return false, aerr
	}
	if hasOrder {
		switch strings.ToLower(order) {
		case "asc":
			desc = false
		case "desc":
		default:
			return false, badRequest("order must be asc or desc").param("order")
		}
	}
	if !c.q.has("sort") {
		return desc, nil
	}
	invalid := func(format string, args ...any) *apiError {
		return errf(http.StatusBadRequest, "invalid_sort", format, args...).param("sort")
	}
	var dir string
	for _, v := range c.q.list("sort") {
		for _, part := range strings.Split(v, ",") {
			part = strings.TrimSpace(part)
			d := "asc"
			if strings.HasPrefix(part, "-") {
				d, part = "desc", part[1:]
			} else {
				part = strings.TrimPrefix(part, "+")
			}
			switch {
			case part == "":
				return false, invalid("sort names an empty field")
			case sc.decl.CursorField == "":
				return false, invalid("Stream '%s' has no cursor field; it is ordered by primary key only", sc.decl.Name)
			case part != sc.decl.CursorField:
				return false, invalid("Only the cursor field '%s' is sortable", sc.decl.CursorField)
			case dir != "" && dir != d:
				return false, invalid("sort gives conflicting directions for '%s'", part)
			}
			dir = d
		}
	}
	if hasOrder && strings.ToLower(order) != dir {
		return false, invalid("sort and order disagree; send one of them")
	}
	return dir == "desc", nil
}

// listRecords answers a records page: keyset-paged per connection; under a
// multi-connection fan-in each connection contributes one page, and since
// per-connection cursors cannot be merged there is no next_cursor.
func (c *call) listRecords(sc *streamScope, req *listRequest) error {
	keys := streamKeys{cursorField: sc.decl.CursorField, primaryKey: sc.decl.PrimaryKey}
	var after *sortKey
	if req.cursor != "" {
		var cur recordsCursor
		if !decodeToken(req.cursor, &cur) || cur.Kind != "page" || cur.Session != "records" {
			return errf(http.StatusBadRequest, "invalid_cursor", "Malformed cursor")
		}
		want := "ASC"
		if req.desc {
			want = "DESC"
		}
		if !strings.EqualFold(cur.Order, want) {
			return errf(http.StatusBadRequest, "invalid_cursor", "Cursor order does not match request order")
		}
		k := sortKey{pk: cur.PrimaryKey}
		if !nullish(cur.CursorValue) {
			k.cursor = cur.CursorValue
		}
		after = &k
	}

	data := []any{}
	hasMore, total := false, 0
	var nextCursor string
	var windowRows []*storedRecord
	for _, conn := range sc.conns {
		rows := applyFilters(c.rows(sc, conn.ID), req.filters)
		total += len(rows)
		if req.window {
			windowRows = append(windowRows, rows...)
		}
		page := keyset(rows, keys, req.desc, after)
		more := len(page) > req.limit
		if more {
			page = page[:req.limit]
			hasMore = true
			nextCursor = cursorFor(keys, page[len(page)-1], req.desc)
		}
		for _, r := range page {
			w := c.wrapRecord(sc, conn, r, c.projection(sc, req.fields))
			if len(req.expand) > 0 {
				w.set("expanded", c.expanded(sc, conn, r, req.expand))
			}
			data = append(data, w)
		}
	}

	warnings := req.warnings
	if sc.multi() {
		nextCursor = ""
		if hasMore {
			warnings = append(warnings, warning("partial_results",
				"has_more=true and next_cursor is not emitted under multi-connection fan-in. Retry with `connection_id` to page a single connection.",
				"connection_id", nil))
		}
	}
	body := obj("data", data, "has_more", hasMore, "object", "list")
	body.setIf(nextCursor != "", "next_cursor", nextCursor)
	meta := &object{}
	if req.count {
		meta.set("count", obj("kind", "exact", "value", total))
	}
	if len(warnings) > 0 {
		meta.set("warnings", warnings)
	}
	if req.window {
		meta.set("window", windowOf(sc.decl.ConsentTimeField, windowRows))
	}
	body.setIf(meta.len() > 0, "meta", meta)
	body.set("url", c.r.URL.EscapedPath())
	return c.ok(body)
}

// projection is the field list a read emits: the requested fields (already
// checked against the grant on lists), else the grant's fields.
func (c *call) projection(sc *streamScope, requested []string) []string {
	if requested != nil {
		return requested
	}
	return sc.defaultFields()
}

// windowOf is meta.window: the filtered total and, when the stream has a
// consent_time_field, the earliest and latest instants (both or neither).
func windowOf(field string, rows []*storedRecord) *object {
	w := obj("total", len(rows))
	if field == "" {
		return w
	}
	var lo, hi any
	for _, r := range rows {
		v := r.value(field)
		if _, ok := asTime(v); !ok {
			continue
		}
		if lo == nil || compareValues(v, lo) < 0 {
			lo = v
		}
		if hi == nil || compareValues(v, hi) > 0 {
			hi = v
		}
	}
	if lo != nil {
		w.set("earliest_at", lo).set("latest_at", hi)
	}
	return w
}

// handleRecord answers one record. fields outside the grant are dropped
// silently here (lists answer 403), and a key present under several
// connections without connection_id is 409 ambiguous_connection.
func (s *Server) handleRecord(c *call) error {
	sc, aerr := c.streamScope(c.r.PathValue("stream"), scopeOptions{ownerNeedsSource: true})
	if aerr != nil {
		return aerr
	}
	if aerr := clientBan(c.who, c.q); aerr != nil {
		return aerr
	}
	fields, aerr := c.requestedFields(sc, false)
	if aerr != nil {
		return aerr
	}
	if fields != nil {
		kept := fields[:0:0]
		for _, f := range fields {
			if sc.granted(f) {
				kept = append(kept, f)
			}
		}
		fields = kept
	}
	specs, aerr := parseExpand(sc, c.q)
	if aerr != nil {
		return aerr
	}
	conn, rec, aerr := c.findRecord(sc, c.r.PathValue("id"))
	if aerr != nil {
		return aerr
	}
	body := obj("connector_key", connectorKeyFor(c.who, sc.conn))
	if sc.requested != "" {
		body.set("connection_id", conn.ID)
	}
	for _, m := range c.wrapRecord(sc, conn, rec, c.projection(sc, fields)).members {
		body.set(m.key, m.val)
	}
	if len(specs) > 0 {
		body.set("expanded", c.expanded(sc, conn, rec, specs))
	}
	body.set("record_json_bytes", rec.jsonBytes)
	if sc.aliasUsed {
		body.set("meta", obj("warnings", []any{aliasWarning()}))
	}
	return c.ok(body)
}

// findRecord looks a key up in every connection in scope: one hit is served,
// none is 404, several are 409 ambiguous_connection.
func (c *call) findRecord(sc *streamScope, key string) (dataset.Connection, *storedRecord, *apiError) {
	var hits []dataset.Connection
	var recs []*storedRecord
	for _, conn := range sc.conns {
		if r := c.s.store.get(conn.ID, sc.decl.Name, key); sc.visible(r) {
			hits = append(hits, conn)
			recs = append(recs, r)
		}
	}
	switch len(hits) {
	case 0:
		return dataset.Connection{}, nil, notFound("Record not found")
	case 1:
		return hits[0], recs[0], nil
	}
	return dataset.Connection{}, nil, ambiguousConnection(key, hits)
}

// ambiguousConnection is the 409 for a record present under several connections.
func ambiguousConnection(key string, conns []dataset.Connection) *apiError {
	return errf(http.StatusConflict, "ambiguous_connection",
		"Record '%s' is present under more than one connection. Retry with `connection_id`.", key).
		with("available_connections", availableConnections(conns)).
		with("retry_with", "connection_id")
}

// connectorKeyFor is connector_key on record detail: for a client the source
// id the grant names (the connector's SourceID), for the owner the storage key.
func connectorKeyFor(p *principal, cs *connectorState) string {
	if p.client() && cs.ds.SourceID != "" {
		return cs.ds.SourceID
	}
	return cs.key()
}

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
