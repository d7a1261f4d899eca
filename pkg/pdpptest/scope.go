package pdpptest

import (
	"net/http"
	"slices"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// streamScope is what the caller may read of one stream: the connector that
// declares it, the connections in scope (after connection_id narrowing), and for
// a client the grant's entry (fields, time constraint, resources).
type streamScope struct {
	conn  *connectorState
	decl  *dataset.StreamDecl
	grant *dataset.GrantStream // nil for the owner
	// conns are the connections in scope, in registration order.
	conns []dataset.Connection
	// requested is the connection the caller named ("" when none).
	requested string
	// aliasUsed is set when the caller named it with the deprecated
	// connector_instance_id.
	aliasUsed bool
}

// multi reports a multi-connection fan-in (no connection named, several in scope).
func (sc *streamScope) multi() bool { return sc.requested == "" && len(sc.conns) > 1 }

// granted reports whether a top-level field is inside the grant's fields.
func (sc *streamScope) granted(field string) bool {
	if sc.grant == nil || sc.grant.Fields == nil {
		return true
	}
	return slices.Contains(sc.grant.Fields, field)
}

// defaultFields is the projection when the caller names no fields: the grant's
// field list in grant order (what the reference emits), or nil for "all, in
// authored order".
func (sc *streamScope) defaultFields() []string {
	if sc.grant == nil {
		return nil
	}
	return sc.grant.Fields
}

// visible applies the grant's resources allowlist and time constraint (since
// inclusive, until exclusive; records without a parseable value are invisible).
func (sc *streamScope) visible(r *storedRecord) bool {
	if r == nil || r.deleted {
		return false
	}
	if sc.grant == nil {
		return true
	}
	if sc.grant.Resources != nil && !slices.Contains(sc.grant.Resources, r.key) {
		return false
	}
	if tc := sc.grant.TimeConstraint; tc != nil {
		t, ok := asTime(r.value(tc.Field))
		if !ok {
			return false
		}
		if since, ok := asTime(tc.Since); ok && t.Before(since) {
			return false
		}
		if until, ok := asTime(tc.Until); ok && !t.Before(until) {
			return false
		}
	}
	return true
}

// rows returns the visible live records of one connection in storage order.
func (c *call) rows(sc *streamScope, connID string) []*storedRecord {
	all := c.s.store.current(connID, sc.decl.Name)
	out := all[:0:0]
	for _, r := range all {
		if sc.visible(r) {
			out = append(out, r)
		}
	}
	return out
}

// connectionParam reads connection_id and its deprecated alias
// connector_instance_id. Naming two different connections is 400
// invalid_argument.
func (c *call) connectionParam() (id string, aliasUsed bool, err *apiError) {
	cid, _, err := c.q.single("connection_id")
	if err != nil {
		return "", false, err
	}
	alias, hasAlias, err := c.q.single("connector_instance_id")
	if err != nil {
		return "", false, err
	}
	if hasAlias && cid != "" && alias != cid {
		return "", false, errf(http.StatusBadRequest, "invalid_argument",
			"connection_id and connector_instance_id name different connections; send only connection_id").param("connector_instance_id")
	}
	if cid == "" && hasAlias {
		return alias, true, nil
	}
	return cid, false, nil
}

// aliasWarning is the deprecated_alias_used warning.
func aliasWarning() *object {
	return warning("deprecated_alias_used",
		"connector_instance_id is a deprecated alias of connection_id; send connection_id instead.",
		"connector_instance_id", nil)
}

// scopeOptions tunes stream resolution per route.
type scopeOptions struct {
	// ownerNeedsSource makes owner reads name a connector_id or connection_id,
	// as the reference's multi-connector ("polyfill") owner reads do.
	ownerNeedsSource bool
}

// streamScope resolves a stream for the caller.
//
// A client's request context is checked the way the reference's introspection
// does it: a stream outside the grant, or a connection outside the stream's
// instance_ids, fails closed with 401 (context.stream_not_allowed,
// context.instance_mismatch). For the owner an unknown stream is 404 not_found
// and an unknown connection 404 connection_not_found.
func (c *call) streamScope(name string, opt scopeOptions) (*streamScope, *apiError) {
	connID, alias, aerr := c.connectionParam()
	if aerr != nil {
		return nil, aerr
	}
	if c.who.client() {
		return c.clientScope(name, connID, alias)
	}
	return c.ownerScope(name, connID, alias, opt)
}

func (c *call) clientScope(name, connID string, alias bool) (*streamScope, *apiError) {
	g := c.who.grant
	gs := g.Stream(name)
	if gs == nil {
		return nil, failedClosed(c.r, "context.stream_not_allowed")
	}
	cs := c.s.connectorForGrantStream(g, gs)
	if cs == nil || cs.manifest.Stream(name) == nil {
		// The reference has no status for a granted stream its source does not
		// declare; it surfaces as a 500.
		return nil, errf(http.StatusInternalServerError, "invalid_stream", "Stream '%s' is granted but not declared by its source", name)
	}
	if connID != "" && (!slices.Contains(gs.InstanceIDs, connID) || cs.connection(connID) == nil) {
		return nil, failedClosed(c.r, "context.instance_mismatch")
	}
	sc := &streamScope{conn: cs, decl: cs.manifest.Stream(name), grant: gs, requested: connID, aliasUsed: alias}
	for _, conn := range cs.ds.Connections {
		if slices.Contains(gs.InstanceIDs, conn.ID) && (connID == "" || conn.ID == connID) {
			sc.conns = append(sc.conns, conn)
		}
	}
	return sc, nil
}

func (c *call) ownerScope(name, connID string, alias bool, opt scopeOptions) (*streamScope, *apiError) {
	connectorID, _, aerr := c.q.single("connector_id")
	if aerr != nil {
		return nil, aerr
	}
	if opt.ownerNeedsSource && connectorID == "" && connID == "" {
		return nil, badRequest("connector_id must be a single non-empty string for polyfill owner access").param("connector_id")
	}
	var byConn *connectorState
	if connID != "" {
		byConn = c.s.store.byConn[connID]
		if byConn == nil {
			return nil, errf(http.StatusNotFound, "connection_not_found", "Connection '%s' is not addressable", connID).param("connection_id")
		}
	}
	for _, cs := range c.s.store.connectors {
		if connectorID != "" && connectorID != cs.key() && connectorID != cs.ds.SourceID {
			continue
		}
		if byConn != nil && byConn != cs {
			continue
		}
		decl := cs.manifest.Stream(name)
		if decl == nil {
			continue
		}
		sc := &streamScope{conn: cs, decl: decl, requested: connID, aliasUsed: alias}
		for _, conn := range cs.ds.Connections {
			if connID == "" || conn.ID == connID {
				sc.conns = append(sc.conns, conn)
			}
		}
		return sc, nil
	}
	if byConn != nil && connectorID != "" && connectorID != byConn.key() && connectorID != byConn.ds.SourceID {
		return nil, errf(http.StatusNotFound, "connection_not_found", "Connection '%s' does not belong to connector '%s'", connID, connectorID).param("connection_id")
	}
	return nil, notFound("Stream '%s' not found", name)
}

// connectorForGrantStream resolves a grant stream to the connector that holds
// it: through its instance_ids (every connection belongs to one connector),
// else the grant's source, else the only connector declaring the stream. This
// is how one client grant can span several connectors (see the package doc).
func (s *Server) connectorForGrantStream(g *dataset.Grant, gs *dataset.GrantStream) *connectorState {
	for _, id := range gs.InstanceIDs {
		if cs := s.store.byConn[id]; cs != nil {
			return cs
		}
	}
	var found *connectorState
	for _, cs := range s.store.connectors {
		if cs.manifest.Stream(gs.Name) == nil {
			continue
		}
		if g.SourceID != "" && (g.SourceID == cs.ds.SourceID || g.SourceID == cs.key()) {
			return cs
		}
		if found == nil {
			found = cs
		}
	}
	return found
}

// availableConnections lists connections for ambiguity errors and retries.
func availableConnections(conns []dataset.Connection) []any {
	out := make([]any, 0, len(conns))
	for _, conn := range conns {
		o := obj("connection_id", conn.ID)
		o.setIf(conn.DisplayName != "", "display_name", conn.DisplayName)
		out = append(out, o)
	}
	return out
}
