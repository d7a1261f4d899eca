package pdpptest

import (
	"net/http"
	"slices"
	"sort"
	"time"
)

// GET /v1/streams and GET /v1/streams/{stream}.

// defaultMaxStaleness applies when a manifest declares no refresh policy.
const defaultMaxStaleness = 24 * time.Hour

// handleStreams lists one row per (stream, connection) the caller can read,
// with grant-visible counts. It never paginates.
func (s *Server) handleStreams(c *call) error {
	connID, alias, aerr := c.connectionParam()
	if aerr != nil {
		return aerr
	}
	connectorID, _, aerr := c.q.single("connector_id")
	if aerr != nil {
		return aerr
	}
	scopes, aerr := c.readableStreams(connID, connectorID)
	if aerr != nil {
		return aerr
	}
	data := []any{}
	for _, sc := range scopes {
		for _, conn := range sc.conns {
			rows := c.rows(sc, conn.ID)
			last, fresh := c.s.freshness(sc.conn, rows)
			row := obj("last_updated", last, "name", sc.decl.Name, "object", "stream", "record_count", len(rows))
			if c.who.owner() {
				row.set("connector_id", sc.conn.key())
				row.set("source", obj("id", sc.conn.key(), "kind", "connector"))
			}
			addConnection(row, conn)
			row.set("freshness", fresh)
			data = append(data, row)
		}
	}
	body := obj("data", data, "has_more", false, "object", "list")
	if alias {
		body.set("meta", obj("warnings", []any{aliasWarning()}))
	}
	return c.ok(body)
}

// readableStreams returns a scope per stream the caller can read: for a client
// the grant's streams in grant order, for the owner every declared stream of
// every connector (optionally one connector). connID narrows each scope; a
// client naming a connection outside its grant fails closed, the owner gets 404.
func (c *call) readableStreams(connID, connectorID string) ([]*streamScope, *apiError) {
	var out []*streamScope
	if c.who.client() {
		g := c.who.grant
		known := connID == ""
		for i := range g.Streams {
			gs := &g.Streams[i]
			cs := c.s.connectorForGrantStream(g, gs)
			if cs == nil || cs.manifest.Stream(gs.Name) == nil {
				continue
			}
			sc := &streamScope{conn: cs, decl: cs.manifest.Stream(gs.Name), grant: gs, requested: connID}
			for _, conn := range cs.ds.Connections {
				if slices.Contains(gs.InstanceIDs, conn.ID) && (connID == "" || conn.ID == connID) {
					sc.conns = append(sc.conns, conn)
					known = true
				}
			}
			out = append(out, sc)
		}
		if !known {
			return nil, failedClosed(c.r, "context.instance_mismatch")
		}
		return out, nil
	}
	if connID != "" && c.s.store.byConn[connID] == nil {
		return nil, errf(http.StatusNotFound, "connection_not_found", "Connection '%s' is not addressable", connID).param("connection_id")
	}
	for _, cs := range c.s.store.connectors {
		if connectorID != "" && connectorID != cs.key() && connectorID != cs.ds.SourceID {
			continue
		}
		for _, decl := range cs.manifest.Streams {
			sc := &streamScope{conn: cs, decl: decl, requested: connID}
			for _, conn := range cs.ds.Connections {
				if connID == "" || conn.ID == connID {
					sc.conns = append(sc.conns, conn)
				}
			}
			if len(sc.conns) > 0 {
				out = append(out, sc)
			}
		}
	}
	return out, nil
}

// freshness returns last_updated (the latest emitted_at, or null) and the
// freshness object: current while the data is younger than the connector's
// declared maximum staleness, stale after, unknown without data.
func (s *Server) freshness(cs *connectorState, rows []*storedRecord) (lastUpdated any, fresh *object) {
	var last string
	var lastT time.Time
	for _, r := range rows {
		if t, ok := asTime(r.emittedAt); ok && (last == "" || t.After(lastT)) {
			last, lastT = r.emittedAt, t
		}
	}
	if last == "" {
		return nil, obj("status", "unknown")
	}
	maxAge := defaultMaxStaleness
	if n := cs.manifest.MaxStalenessSeconds; n > 0 {
		maxAge = time.Duration(n) * time.Second
	}
	status := "current"
	if s.now().Sub(lastT) > maxAge {
		status = "stale"
	}
	return last, obj("status", status, "captured_at", last)
}

// handleStreamMetadata describes one stream: its declaration (not projected by
// the grant) with grant-aware field and expand capabilities.
func (s *Server) handleStreamMetadata(c *call) error {
	sc, aerr := c.streamScope(c.r.PathValue("stream"), scopeOptions{})
	if aerr != nil {
		return aerr
	}
	var rows []*storedRecord
	for _, conn := range sc.conns {
		rows = append(rows, c.rows(sc, conn.ID)...)
	}
	_, fresh := c.s.freshness(sc.conn, rows)
	body := c.streamMetadata(sc, fresh)
	if sc.aliasUsed {
		body.set("meta", obj("warnings", []any{aliasWarning()}))
	}
	return c.ok(body)
}

// streamMetadata is the full stream entry shared by /v1/streams/{s} and the
// full /v1/schema view. The reference emits its keys in alphabetical order,
// then instance_ids for a client grant.
func (c *call) streamMetadata(sc *streamScope, fresh *object) *object {
	d := c.describe(sc)
	m := map[string]any{
		"expand_capabilities": c.expandCapabilities(sc, d),
		"field_capabilities":  c.fieldCapabilities(sc, d),
		"freshness":           fresh,
		"name":                d.name,
		"object":              "stream_metadata",
		"primary_key":         nonNil(d.primaryKey),
		"query":               rawOr(d.queryRaw, "{}"),
		"relationships":       rawOr(d.relationshipsRaw, "[]"),
		"schema":              rawOr(d.schemaRaw, "{}"),
		"views":               rawOr(d.viewsRaw, "[]"),
	}
	if d.cursorField != "" {
		m["cursor_field"] = d.cursorField
	}
	if d.consentTimeField != "" {
		m["consent_time_field"] = d.consentTimeField
	}
	if d.semantics != "" {
		m["semantics"] = d.semantics
	}
	if d.selectionRaw != nil {
		m["selection"] = rawJSON(d.selectionRaw)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	o := &object{}
	for _, k := range keys {
		o.set(k, m[k])
	}
	if sc.grant != nil {
		o.set("instance_ids", nonNil(sc.grant.InstanceIDs))
	}
	return o
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

func rawOr(raw []byte, def string) any {
	if len(raw) == 0 {
		return rawJSON(def)
	}
	return rawJSON(raw)
}

// rawJSON is JSON to emit verbatim.
type rawJSON []byte

func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }
