package pdpptest

import (
	"bytes"
	"net/http"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// Incremental sync on the records list.
//
// changes_since=beginning (version 0) or a next_changes_since token opens a
// session whose horizon is the stream's version at page 1; later pages send the
// page cursor alone, which carries {since_version, after_version,
// session_max_version}, so writes after page 1 wait for the next session. A
// record is returned (as its state at the horizon) only when its projected,
// grant-visible data differs from its state at since_version, so changes to
// hidden fields never surface; a record visible at since_version and gone at
// the horizon is a tombstone. Every page carries next_changes_since (the
// horizon). A token older than the retained history is 410 cursor_expired.

func isChangesCursor(cur string) bool {
	session, ok := pageCursorKind(cur)
	return ok && session == "changes"
}

func (c *call) listChanges(sc *streamScope, req *listRequest) error {
	if sc.multi() {
		return errf(http.StatusBadRequest, "invalid_argument",
			"changes_since reads one connection at a time; retry with `connection_id`").
			param("changes_since").
			with("retry_with", "connection_id").
			with("available_connections", availableConnections(sc.conns))
	}
	if len(sc.conns) == 0 {
		return errf(http.StatusNotFound, "connection_not_found", "No connection in scope for stream '%s'", sc.decl.Name).param("connection_id")
	}
	conn := sc.conns[0]
	var since, horizon, after int64
	switch {
	case req.changes != "":
		// A new session. A page cursor sent along is ignored, as in the
		// reference (which is why links.next must not be followed here).
		if req.changes != "beginning" {
			var tok changesToken
			if !decodeToken(req.changes, &tok) || tok.Kind != "changes_since" || tok.Version < 0 {
				return errf(http.StatusBadRequest, "invalid_cursor",
					"Malformed changes_since: pass `beginning` to bootstrap or the `next_changes_since` value from a previous page").param("changes_since")
			}
			since = tok.Version
		}
		horizon = c.s.store.maxVersion(conn.ID, sc.decl.Name)
		after = since
	default:
		var cur changesCursor
		if !decodeToken(req.cursor, &cur) || cur.SinceVersion < 0 || cur.AfterVersion < cur.SinceVersion || cur.SessionMaxVersion < 0 {
			return errf(http.StatusBadRequest, "invalid_cursor", "Malformed cursor")
		}
		since, horizon, after = cur.SinceVersion, cur.SessionMaxVersion, cur.AfterVersion
	}

	changes, ok := c.s.store.changesBetween(conn.ID, sc.decl.Name, since, horizon)
	if !ok {
		return errf(http.StatusGone, "cursor_expired", "changes_since cursor is too old; full re-sync required")
	}
	fields := c.projection(sc, req.fields)
	visible := func(r *storedRecord) bool {
		return sc.visible(r) && len(applyFilters([]*storedRecord{r}, req.filters)) == 1
	}
	data := []any{}
	hasMore := false
	var last int64
	for _, ch := range changes {
		if ch.version <= after {
			continue
		}
		beforeVis, afterVis := ch.before != nil && visible(ch.before), visible(ch.after)
		var item *object
		switch {
		case afterVis && (!beforeVis || !sameProjection(ch.before, ch.after, fields)):
			item = c.wrapRecord(sc, conn, ch.after, fields)
		case !afterVis && beforeVis:
			item = tombstone(sc, conn, ch.after)
		default:
			continue
		}
		if len(data) == req.limit {
			hasMore = true
			break
		}
		data = append(data, item)
		last = ch.version
	}

	body := obj("data", data, "has_more", hasMore, "object", "list")
	if hasMore {
		body.set("next_cursor", encodeToken(changesCursor{
			AfterVersion: last, Kind: "page", Session: "changes", SessionMaxVersion: horizon, SinceVersion: since,
		}))
	}
	body.set("next_changes_since", encodeToken(changesToken{Kind: "changes_since", Version: horizon}))
	if len(req.warnings) > 0 {
		body.set("meta", obj("warnings", req.warnings))
	}
	body.set("url", c.r.URL.EscapedPath())
	return c.ok(body)
}

// sameProjection compares what the caller can see of two revisions.
func sameProjection(a, b *storedRecord, fields []string) bool {
	x, err1 := marshal(project(a, fields))
	y, err2 := marshal(project(b, fields))
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// tombstone is a record deleted (or no longer visible under the grant) since
// the caller last saw it: no data, deleted:true and when.
func tombstone(sc *streamScope, conn dataset.Connection, r *storedRecord) *object {
	at := r.deletedAt
	if at == "" {
		at = r.emittedAt
	}
	o := obj("deleted", true, "deleted_at", at, "emitted_at", r.emittedAt, "id", r.key, "object", "record", "stream", sc.decl.Name)
	addConnection(o, conn)
	return o
}
