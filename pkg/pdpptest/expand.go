package pdpptest

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// Owner expansion: one hop along a relation declared in both
// relationships and query.expand. has_one gives the child record or null;
// has_many gives {data, has_more, object:"list"} capped by expand_limit[rel]
// (default: the declared default_limit, else 10; above max_limit, else 50, is
// rejected, never clamped).

const (
	expandDefaultLimit = 10
	expandMaxLimit     = 50
)

type expandSpec struct {
	rel   dataset.Relationship
	child *dataset.StreamDecl
	limit int
}

// parseExpand validates expand/expand[] and expand_limit[rel]. Client tokens
// never get here: clientBan rejects them first.
func parseExpand(sc *streamScope, q *query) ([]expandSpec, *apiError) {
	names := q.list("expand")
	if n := q.node("expand"); n != nil && n.nested() {
		return nil, errf(http.StatusBadRequest, "invalid_expand", "expand takes relation names: expand=<relation>").param("expand")
	}
	var out []expandSpec
	seen := map[string]bool{}
	for _, name := range names {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
			return nil, errf(http.StatusBadRequest, "invalid_expand", "expand needs a relation name").param("expand")
		case strings.Contains(name, "."):
			return nil, errf(http.StatusBadRequest, "invalid_expand", "Nested expand is not supported: '%s'; expand one hop only", name).param("expand")
		case seen[name]:
			continue
		}
		seen[name] = true
		rel := sc.decl.Relationship(name)
		decl := sc.decl.Query.ExpandItem(name)
		if rel == nil || decl == nil {
			return nil, errf(http.StatusBadRequest, "invalid_expand", "Unsupported expand relation '%s' on stream '%s'", name, sc.decl.Name).param("expand")
		}
		child := sc.conn.manifest.Stream(rel.Stream)
		if child == nil {
			return nil, errf(http.StatusForbidden, "insufficient_scope", "Expanding '%s' needs read access to stream '%s'", name, rel.Stream).param("expand")
		}
		limit := expandDefaultLimit
		if decl.DefaultLimit > 0 {
			limit = decl.DefaultLimit
		}
		out = append(out, expandSpec{rel: *rel, child: child, limit: limit})
	}

	ln := q.node("expand_limit")
	if ln == nil {
		return out, nil
	}
	if len(ln.vals) > 0 || !ln.nested() {
		return nil, errf(http.StatusBadRequest, "invalid_expand", "expand_limit must be sent as expand_limit[<relation>]=<n>").param("expand_limit")
	}
	for _, name := range ln.order {
		vn := ln.kids[name]
		i := -1
		for j := range out {
			if out[j].rel.Name == name {
				i = j
			}
		}
		if i < 0 {
			return nil, errf(http.StatusBadRequest, "invalid_expand", "expand_limit[%s] requires expand=%s", name, name).param("expand_limit")
		}
		if out[i].rel.Cardinality != "has_many" {
			return nil, errf(http.StatusBadRequest, "invalid_expand", "expand_limit[%s] applies only to has_many relations", name).param("expand_limit")
		}
		if vn.nested() || len(vn.vals) != 1 {
			return nil, errf(http.StatusBadRequest, "invalid_expand", "expand_limit[%s] must be a single value", name).param("expand_limit")
		}
		n, err := strconv.Atoi(vn.vals[0])
		if err != nil || n <= 0 {
			return nil, errf(http.StatusBadRequest, "invalid_expand", "expand_limit[%s] must be a positive integer", name).param("expand_limit")
		}
		maxLimit := expandMaxLimit
		if d := sc.decl.Query.ExpandItem(name); d != nil && d.MaxLimit > 0 {
			maxLimit = d.MaxLimit
		}
		if n > maxLimit {
			return nil, errf(http.StatusBadRequest, "invalid_expand", "expand_limit[%s]=%d exceeds max_limit %d; page the related stream instead", name, n, maxLimit).param("expand_limit")
		}
		out[i].limit = n
	}
	return out, nil
}

// expanded builds the "expanded" member of a parent record: children in the
// same connection whose foreign key holds the parent's primary key.
func (c *call) expanded(sc *streamScope, conn dataset.Connection, parent *storedRecord, specs []expandSpec) *object {
	pk := parent.key
	if len(sc.decl.PrimaryKey) == 1 {
		if v := parent.value(sc.decl.PrimaryKey[0]); v != nil {
			pk = stringForm(v)
		}
	}
	out := &object{}
	for _, sp := range specs {
		childScope := &streamScope{conn: sc.conn, decl: sp.child}
		var kids []*storedRecord
		for _, r := range c.s.store.current(conn.ID, sp.child.Name) {
			if v := r.value(sp.rel.ForeignKey); v != nil && stringForm(v) == pk {
				kids = append(kids, r)
			}
		}
		if sp.rel.Cardinality == "has_one" {
			if len(kids) == 0 {
				out.set(sp.rel.Name, nil)
			} else {
				out.set(sp.rel.Name, c.wrapRecord(childScope, conn, kids[0], nil))
			}
			continue
		}
		more := len(kids) > sp.limit
		if more {
			kids = kids[:sp.limit]
		}
		data := make([]any, 0, len(kids))
		for _, k := range kids {
			data = append(data, c.wrapRecord(childScope, conn, k, nil))
		}
		out.set(sp.rel.Name, obj("data", data, "has_more", more, "object", "list"))
	}
	return out
}
