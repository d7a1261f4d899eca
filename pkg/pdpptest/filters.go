package pdpptest

import (
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Owner filters on records lists and aggregates:
// filter[f]=v is an exact match on a top-level scalar field, compared as
// strings; filter[f][op]=v (op in gte, gt, lte, lt) is a range filter on a
// field and operator declared in query.range_filters, coerced by type. Several
// filters are ANDed.

type filterKind int

const (
	filterExact filterKind = iota
	filterNumber
	filterTime
)

type filterSpec struct {
	field string
	op    string // "eq" for exact filters
	kind  filterKind
	text  string
	num   float64
	at    time.Time
}

var rangeOps = set("gte", "gt", "lte", "lt")

// parseFilters validates the filter[...] tree against the stream declaration.
// Client tokens never get here: clientBan rejects them first.
func parseFilters(sc *streamScope, q *query) ([]filterSpec, *apiError) {
	n := q.node("filter")
	if n == nil {
		return nil, nil
	}
	if len(n.vals) > 0 || !n.nested() {
		return nil, badRequest("filter must be sent as filter[field]=value or filter[field][op]=value").param("filter")
	}
	var out []filterSpec
	for _, field := range n.order {
		fn := n.kids[field]
		prop := sc.decl.Property(field)
		if prop == nil {
			return nil, errf(http.StatusBadRequest, "unknown_field", "Unknown field: %s", field).param("filter")
		}
		if !sc.granted(field) {
			return nil, errf(http.StatusForbidden, "field_not_granted", "Field '%s' is not granted", field).param("filter")
		}
		if len(fn.vals) > 0 && fn.nested() {
			return nil, badRequest("filter[%s] mixes an exact value with range operators", field).param("filter")
		}
		if len(fn.vals) > 0 {
			if len(fn.vals) != 1 {
				return nil, badRequest("filter[%s] must be a single value", field).param("filter")
			}
			if !prop.Scalar() {
				return nil, badRequest("Exact filters are only supported on top-level scalar fields; '%s' is not", field).param("filter")
			}
			out = append(out, filterSpec{field: field, op: "eq", kind: filterExact, text: fn.vals[0]})
			continue
		}
		declared, isDeclared := sc.decl.Query.RangeFilters[field]
		for _, op := range fn.order {
			on := fn.kids[op]
			if !rangeOps[op] {
				return nil, badRequest("Unsupported filter operator '%s' for '%s'; use gte, gt, lte or lt", op, field).param("filter")
			}
			if !isDeclared {
				return nil, badRequest("Range filters are not declared for '%s'", field).param("filter")
			}
			if !slices.Contains(declared, op) {
				return nil, badRequest("Range operator '%s' is not declared for '%s'", op, field).param("filter")
			}
			if on.nested() || len(on.vals) != 1 {
				return nil, badRequest("filter[%s][%s] must be a single value", field, op).param("filter")
			}
			v := on.vals[0]
			spec := filterSpec{field: field, op: op, text: v}
			switch {
			case prop.Numeric():
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return nil, badRequest("filter[%s][%s] must be a number", field, op).param("filter")
				}
				spec.kind, spec.num = filterNumber, f
			case prop.Temporal():
				t, ok := asTime(v)
				if !ok {
					return nil, badRequest("filter[%s][%s] must be an ISO 8601 date or date-time", field, op).param("filter")
				}
				spec.kind, spec.at = filterTime, t
			default:
				return nil, badRequest("Range filters need a number or a date/date-time string field; '%s' is neither", field).param("filter")
			}
			out = append(out, spec)
		}
	}
	return out, nil
}

// match reports whether r passes the filter. Null or unparseable values never
// match.
func (f filterSpec) match(r *storedRecord) bool {
	v := r.value(f.field)
	if v == nil {
		return false
	}
	var c int
	switch f.kind {
	case filterExact:
		return stringForm(v) == f.text
	case filterNumber:
		x, ok := asNumber(v)
		if !ok {
			return false
		}
		switch {
		case x < f.num:
			c = -1
		case x > f.num:
			c = 1
		}
	case filterTime:
		t, ok := asTime(v)
		if !ok {
			return false
		}
		c = t.Compare(f.at)
	}
	switch f.op {
	case "gte":
		return c >= 0
	case "gt":
		return c > 0
	case "lte":
		return c <= 0
	case "lt":
		return c < 0
	}
	return false
}

// applyFilters keeps the records passing every filter.
func applyFilters(rows []*storedRecord, fs []filterSpec) []*storedRecord {
	if len(fs) == 0 {
		return rows
	}
	out := rows[:0:0]
outer:
	for _, r := range rows {
		for _, f := range fs {
			if !f.match(r) {
				continue outer
			}
		}
		out = append(out, r)
	}
	return out
}
