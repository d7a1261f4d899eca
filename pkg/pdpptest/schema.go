package pdpptest

import (
	"bytes"
	"net/http"
	"slices"
	"strings"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// GET /v1/schema: the caller's connectors and streams with
// grant-aware capabilities, full or compact (view=compact), scoped by stream
// and connection_id (scoping never errors; no match gives connectors: []).
// detail=full needs a stream and a single source.

// description is a stream as the discovery surfaces describe it to the
// caller: the manifest declaration, or for a grant issued against a legacy
// connector projection, that projection.
type description struct {
	name             string
	primaryKey       []string
	cursorField      string
	consentTimeField string
	semantics        string
	properties       []dataset.Property
	query            dataset.Query
	relationships    []dataset.Relationship
	schemaRaw        []byte
	queryRaw         []byte
	relationshipsRaw []byte
	viewsRaw         []byte
	selectionRaw     []byte
}

func (c *call) describe(sc *streamScope) *description {
	d := sc.decl
	if sc.grant != nil && c.who.client() && c.who.grant.LegacyProjection() {
		return legacyDescription(d, sc.grant)
	}
	return &description{
		name: d.Name, primaryKey: d.PrimaryKey, cursorField: d.CursorField, consentTimeField: d.ConsentTimeField,
		semantics: d.Semantics, properties: d.Properties, query: d.Query, relationships: d.Relationships,
		schemaRaw: d.SchemaRaw, queryRaw: d.QueryRaw, relationshipsRaw: d.RelationshipsRaw,
		viewsRaw: d.ViewsRaw, selectionRaw: d.SelectionRaw,
	}
}

// legacyDescription is the reference's synthesized "legacy connector
// projection": the granted fields with empty property schemas, and no keys,
// query declarations, relationships or views.
func legacyDescription(d *dataset.StreamDecl, gs *dataset.GrantStream) *description {
	fields := gs.Fields
	if fields == nil {
		for _, p := range d.Properties {
			fields = append(fields, p.Name)
		}
	}
	props := &object{}
	out := &description{name: d.Name, primaryKey: []string{}}
	for _, f := range fields {
		props.set(f, rawJSON("{}"))
		out.properties = append(out.properties, dataset.Property{Name: f, Raw: []byte("{}")})
	}
	schema, _ := marshal(obj("additionalProperties", false, "properties", props, "type", "object"))
	out.schemaRaw = schema
	return out
}

// Aggregation kinds in the order capabilities list them.
var aggKinds = []string{"count_distinct", "group_by", "group_by_time", "max", "min", "sum"}

func aggFields(a *dataset.Aggregations, kind string) []string {
	if a == nil {
		return nil
	}
	switch kind {
	case "count_distinct":
		return a.CountDistinct
	case "group_by":
		return a.GroupBy
	case "group_by_time":
		return a.GroupByTime
	case "max":
		return a.Max
	case "min":
		return a.Min
	case "sum":
		return a.Sum
	}
	return nil
}

// capability is one declared/usable pair: usable = declared && granted.
type capability struct {
	declared, granted bool
}

func (k capability) usable() bool { return k.declared && k.granted }

func (k capability) full() *object {
	o := obj("declared", k.declared, "usable", k.usable())
	o.setIf(k.declared && !k.granted, "reason", "field_not_granted")
	return o
}

// fieldCaps are a field's capabilities for the caller. exact and rng are
// computed for the owner only: client grants cannot filter.
type fieldCaps struct {
	prop     dataset.Property
	granted  bool
	lex, sem capability
	agg      []capability // in aggKinds order
	exact    *capability
	rng      *capability
	ops      []string
}

func (c *call) capsOf(sc *streamScope, d *description) []fieldCaps {
	var out []fieldCaps
	for _, p := range d.properties {
		g := sc.granted(p.Name)
		fc := fieldCaps{
			prop: p, granted: g,
			lex: capability{slices.Contains(d.query.LexicalFields, p.Name), g},
			sem: capability{slices.Contains(d.query.SemanticFields, p.Name), g},
		}
		for _, k := range aggKinds {
			fc.agg = append(fc.agg, capability{slices.Contains(aggFields(d.query.Aggregations, k), p.Name), g})
		}
		if c.who.owner() {
			fc.exact = &capability{p.Scalar(), g}
			ops, ok := d.query.RangeFilters[p.Name]
			fc.rng = &capability{ok, g}
			fc.ops = ops
		}
		out = append(out, fc)
	}
	return out
}

// fieldCapabilities is the full view's field_capabilities.
func (c *call) fieldCapabilities(sc *streamScope, d *description) *object {
	out := &object{}
	for _, fc := range c.capsOf(sc, d) {
		o := &object{}
		o.setIf(fc.prop.XType != "", "type", fc.prop.XType)
		o.setIf(fc.prop.XRole != "", "role", fc.prop.XRole)
		agg := &object{}
		for i, k := range aggKinds {
			agg.set(k, fc.agg[i].full())
		}
		o.set("aggregation", agg)
		o.set("granted", fc.granted)
		o.set("lexical_search", fc.lex.full())
		o.set("schema", rawOr(fc.prop.Raw, "{}"))
		o.set("semantic_search", fc.sem.full())
		if fc.exact != nil {
			o.set("exact_filter", fc.exact.full())
		}
		if fc.rng != nil {
			r := obj("declared", fc.rng.declared, "usable", fc.rng.usable())
			r.setIf(fc.rng.declared && len(fc.ops) > 0, "operators", fc.ops)
			r.setIf(fc.rng.declared && !fc.rng.granted, "reason", "field_not_granted")
			o.set("range_filter", r)
		}
		out.set(fc.prop.Name, o)
	}
	return out
}

// compactFlags is the compact view's flag string for one field: t=, role=, g=false, eq, r=, lex, sem, a= in that order, or
// "declared" when no token applies.
func compactFlags(fc fieldCaps) string {
	var toks []string
	t := fc.prop.XType
	if t == "" {
		t = strings.Join(fc.prop.Types, "|")
	}
	if t != "" {
		toks = append(toks, "t="+flagValue(t))
	}
	if fc.prop.XRole != "" {
		toks = append(toks, "role="+flagValue(fc.prop.XRole))
	}
	if !fc.granted {
		toks = append(toks, "g=false")
	}
	unusable := func(name string, k capability) {
		switch {
		case k.usable():
			toks = append(toks, name)
		case k.declared:
			toks = append(toks, name+"=unusable:field_not_granted")
		}
	}
	if fc.exact != nil {
		unusable("eq", *fc.exact)
	}
	if fc.rng != nil && fc.rng.declared {
		switch {
		case !fc.rng.usable():
			toks = append(toks, "r=unusable:field_not_granted")
		case len(fc.ops) > 0:
			toks = append(toks, "r="+flagValue(strings.Join(fc.ops, "|")))
		default:
			toks = append(toks, "r")
		}
	}
	unusable("lex", fc.lex)
	unusable("sem", fc.sem)
	var kinds []string
	for i, k := range aggKinds {
		if fc.agg[i].usable() {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) > 0 {
		toks = append(toks, "a="+strings.Join(kinds, "|"))
	}
	if len(toks) == 0 {
		return "declared"
	}
	return strings.Join(toks, ",")
}

// flagValue keeps a flag value parseable: the grammar's separators become _.
func flagValue(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ',', ';', '[', ']', '{', '}', '=', ' ', '\t', '\n', '\r':
			return '_'
		}
		return r
	}, s)
}

// expandCap is a query.expand entry that has a matching relationship,
// with whether the caller can read the target stream.
type expandCap struct {
	rel     dataset.Relationship
	decl    dataset.ExpandDecl
	granted bool
	reason  string
}

func (c *call) expandCapsOf(sc *streamScope, d *description) []expandCap {
	var out []expandCap
	for _, e := range d.query.Expand {
		var rel *dataset.Relationship
		for i := range d.relationships {
			if d.relationships[i].Name == e.Name {
				rel = &d.relationships[i]
			}
		}
		if rel == nil {
			continue
		}
		ec := expandCap{rel: *rel, decl: e, granted: true}
		switch {
		case sc.conn.manifest.Stream(rel.Stream) == nil:
			ec.granted, ec.reason = false, "related_stream_unknown"
		case c.who.client() && c.who.grant.Stream(rel.Stream) == nil:
			ec.granted, ec.reason = false, "related_stream_not_granted"
		}
		out = append(out, ec)
	}
	return out
}

func (c *call) expandCapabilities(sc *streamScope, d *description) []any {
	out := []any{}
	for _, ec := range c.expandCapsOf(sc, d) {
		o := obj("cardinality", ec.rel.Cardinality, "granted", ec.granted, "name", ec.rel.Name,
			"stream", ec.rel.Stream, "target_stream", ec.rel.Stream, "usable", ec.granted,
			"child_parent_key_field", ec.rel.ForeignKey, "foreign_key", ec.rel.ForeignKey)
		o.setIf(ec.decl.DefaultLimit > 0, "default_limit", ec.decl.DefaultLimit)
		o.setIf(ec.decl.MaxLimit > 0, "max_limit", ec.decl.MaxLimit)
		o.setIf(ec.reason != "", "reason", ec.reason)
		out = append(out, o)
	}
	return out
}

func (c *call) compactExpandCapabilities(sc *streamScope, d *description) []any {
	out := []any{}
	for _, ec := range c.expandCapsOf(sc, d) {
		o := obj("name", ec.rel.Name, "stream", ec.rel.Stream, "target_stream", ec.rel.Stream,
			"cardinality", ec.rel.Cardinality, "granted", ec.granted, "usable", ec.granted,
			"foreign_key", ec.rel.ForeignKey)
		o.setIf(ec.decl.MaxLimit > 0, "max_limit", ec.decl.MaxLimit)
		o.setIf(ec.decl.DefaultLimit > 0, "default_limit", ec.decl.DefaultLimit)
		o.setIf(ec.reason != "", "reason", ec.reason)
		out = append(out, o)
	}
	return out
}

// schemaStream is one stream in the schema answer with the connections the
// caller may name for it (after connection_id scoping).
type schemaStream struct {
	sc      *streamScope
	granted []dataset.Connection
}

func (s *Server) handleSchema(c *call) error {
	view, _, aerr := c.q.single("view")
	if aerr != nil {
		return aerr
	}
	compact := strings.EqualFold(strings.TrimSpace(view), "compact")
	stream, hasStream, aerr := c.q.single("stream")
	if aerr != nil {
		return aerr
	}
	connID, _, aerr := c.q.single("connection_id")
	if aerr != nil {
		return aerr
	}
	connectorID, _, aerr := c.q.single("connector_id")
	if aerr != nil {
		return aerr
	}
	detail, _, aerr := c.q.single("detail")
	if aerr != nil {
		return aerr
	}
	full := strings.EqualFold(strings.TrimSpace(detail), "full")
	if full && stream == "" {
		return badRequest("schema detail \"full\" requires `stream`; call /v1/schema?view=compact for global discovery, then /v1/schema?stream=<name>&connection_id=<cin>&detail=full for exhaustive detail.").param("detail")
	}
	if full {
		compact = false
	}

	// Scoping never errors: gather everything readable, then narrow.
	all, aerr := c.readableStreams("", connectorID)
	if aerr != nil {
		return aerr
	}
	var picked []schemaStream
	for _, sc := range all {
		if hasStream && sc.decl.Name != stream {
			continue
		}
		ss := schemaStream{sc: sc}
		for _, conn := range sc.conns {
			if connID == "" || conn.ID == connID {
				ss.granted = append(ss.granted, conn)
			}
		}
		if connID != "" && len(ss.granted) == 0 {
			continue
		}
		picked = append(picked, ss)
	}
	if full {
		var sources []any
		for _, ss := range picked {
			for _, conn := range ss.granted {
				o := obj("connection_id", conn.ID, "connector_key", ss.sc.conn.key(), "stream", ss.sc.decl.Name)
				o.setIf(conn.DisplayName != "", "display_name", conn.DisplayName)
				sources = append(sources, o)
			}
		}
		if connID == "" && len(sources) > 1 {
			return errf(http.StatusConflict, "ambiguous_schema_detail",
				"schema detail \"full\" for stream %q matches %d sources; retry with connection_id to fetch one source's exhaustive schema.", stream, len(sources)).
				param("connection_id").
				with("available_connections", sources).
				with("retry_with", "connection_id")
		}
	}

	// One connector item per connector, in order of first appearance; a grant
	// spanning connectors may interleave their streams.
	var order []*connectorState
	groups := map[*connectorState][]schemaStream{}
	for _, ss := range picked {
		cs := ss.sc.conn
		if _, seen := groups[cs]; !seen {
			order = append(order, cs)
		}
		groups[cs] = append(groups[cs], ss)
	}
	connectors := []any{}
	for _, cs := range order {
		connectors = append(connectors, c.schemaConnector(cs, groups[cs], compact))
	}
	streamCount := len(picked)

	body := obj("bearer", c.bearer(), "connectors", connectors, "object", "schema")
	if compact {
		body.set("detail", "compact")
	}
	if compact || hasStream || connID != "" {
		body.set("connector_count", len(connectors)).set("stream_count", streamCount)
	}
	return c.ok(body)
}

// bearer describes the caller's token in the schema answer.
func (c *call) bearer() *object {
	if c.who.owner() {
		return obj("scope", "owner", "token_kind", "owner")
	}
	return obj("scope", "grant", "token_kind", "client", "grant_id", c.who.grant.GrantID, "client_id", c.who.grant.ClientID)
}

// schemaConnector builds one connector item. In the compact view the most
// common non-empty granted_connections set is lifted to the connector; a
// stream keeps its own copy only when its set differs.
func (c *call) schemaConnector(cs *connectorState, group []schemaStream, compact bool) *object {
	sourceID := cs.key()
	if c.who.client() && cs.ds.SourceID != "" {
		sourceID = cs.ds.SourceID
	}
	var lifted []any
	if compact {
		lifted = mostCommonConnections(group)
	}
	streams := make([]any, 0, len(group))
	for _, ss := range group {
		gc := availableConnections(ss.granted)
		if !compact {
			var rows []*storedRecord
			for _, conn := range ss.sc.conns {
				rows = append(rows, c.rows(ss.sc, conn.ID)...)
			}
			_, fresh := c.s.freshness(cs, rows)
			entry := c.streamMetadata(ss.sc, fresh)
			entry.set("granted_connections", gc)
			streams = append(streams, entry)
			continue
		}
		d := c.describe(ss.sc)
		entry := obj("name", d.name, "primary_key", nonNil(d.primaryKey))
		entry.setIf(d.cursorField != "", "cursor_field", d.cursorField)
		flags := &object{}
		for _, fc := range c.capsOf(ss.sc, d) {
			flags.set(fc.prop.Name, compactFlags(fc))
		}
		entry.set("field_capabilities", flags)
		entry.set("expand_capabilities", c.compactExpandCapabilities(ss.sc, d))
		if !sameConnections(gc, lifted) {
			entry.set("granted_connections", gc)
		}
		streams = append(streams, entry)
	}
	item := obj("object", "connector", "source", obj("id", sourceID, "kind", "connector"),
		"stream_count", len(group), "streams", streams, "connector_key", cs.key(), "connector_id", cs.key())
	if compact && lifted != nil {
		item.set("granted_connections", lifted)
	}
	return item
}

// mostCommonConnections picks the non-empty granted set shared by the most
// streams (the first one on a tie).
func mostCommonConnections(group []schemaStream) []any {
	type tally struct {
		set   []any
		count int
	}
	var tallies []*tally
	for _, ss := range group {
		if len(ss.granted) == 0 {
			continue
		}
		set := availableConnections(ss.granted)
		found := false
		for _, t := range tallies {
			if sameConnections(t.set, set) {
				t.count++
				found = true
				break
			}
		}
		if !found {
			tallies = append(tallies, &tally{set, 1})
		}
	}
	var best *tally
	for _, t := range tallies {
		if best == nil || t.count > best.count {
			best = t
		}
	}
	if best == nil {
		return nil
	}
	return best.set
}

func sameConnections(a, b []any) bool {
	if a == nil || b == nil {
		return false
	}
	x, err1 := marshal(a)
	y, err2 := marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
