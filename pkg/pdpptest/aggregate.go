package pdpptest

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // time_zone accepts IANA names on hosts without a zoneinfo database

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// GET /v1/streams/{stream}/aggregate: count, sum, min, max
// and count_distinct over grant-visible (then owner-filtered) records, with
// count grouped by a scalar field or by time buckets.

var aggregateParams = set("metric", "field", "group_by", "group_by_time", "granularity", "time_zone", "limit",
	"filter", "connection_id", "connector_instance_id", "connector_id", "subject_id")

var aggregateMetrics = []string{"count", "sum", "min", "max", "count_distinct"}

var granularities = []string{"minute", "hour", "day", "week", "month", "quarter", "year"}

const (
	aggregateDefaultLimit = 10
	aggregateMaxLimit     = 100
)

type aggregateRequest struct {
	metric, field        string
	groupBy, groupByTime string
	granularity          string
	tz                   *time.Location
	tzName               string
	limit                int
	filters              []filterSpec
}

func (s *Server) handleAggregate(c *call) error {
	sc, aerr := c.streamScope(c.r.PathValue("stream"), scopeOptions{ownerNeedsSource: true})
	if aerr != nil {
		return aerr
	}
	if aerr := clientBan(c.who, c.q); aerr != nil {
		return aerr
	}
	req, aerr := c.parseAggregate(sc)
	if aerr != nil {
		return aerr
	}
	var rows []*storedRecord
	for _, conn := range sc.conns {
		rows = append(rows, applyFilters(c.rows(sc, conn.ID), req.filters)...)
	}

	body := obj("approximate", false, "field", nullable(req.field), "filtered_record_count", len(rows),
		"granularity", nullable(req.granularity), "group_by", nullable(req.groupBy),
		"group_by_time", nullable(req.groupByTime), "metric", req.metric, "object", "aggregation",
		"stream", sc.decl.Name, "time_zone", nullable(req.tzName))
	switch {
	case req.groupBy != "" || req.groupByTime != "":
		groups := groupCounts(rows, req)
		shown := groups
		other := 0
		if len(groups) > req.limit {
			shown = groups[:req.limit]
			for _, g := range groups[req.limit:] {
				other += g.count
			}
		}
		out := make([]any, 0, len(shown))
		for _, g := range shown {
			out = append(out, obj("count", g.count, "key", g.key))
		}
		body.set("groups", out).set("limit", req.limit)
		// The reference omits other_count when every group fit; when groups
		// were cut it says how many records they held.
		body.setIf(other > 0, "other_count", other)
	default:
		body.set("value", aggregateValue(rows, req))
	}
	if sc.aliasUsed {
		body.set("meta", obj("warnings", []any{aliasWarning()}))
	}
	return c.ok(body)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// parseAggregate validates every parameter rule of the reference RS.
func (c *call) parseAggregate(sc *streamScope) (*aggregateRequest, *apiError) {
	if unk := c.q.unknown(aggregateParams); len(unk) > 0 {
		return nil, badRequest("Unsupported query parameter: %s", strings.Join(unk, ", ")).param(unk[0])
	}
	req := &aggregateRequest{}
	var aerr *apiError
	get := func(k string) string {
		if aerr != nil {
			return ""
		}
		var v string
		v, _, aerr = c.q.single(k)
		return v
	}
	req.metric, req.field = get("metric"), get("field")
	req.groupBy, req.groupByTime = get("group_by"), get("group_by_time")
	req.granularity, req.tzName = get("granularity"), get("time_zone")
	limit, hasLimit, lerr := c.q.single("limit")
	if aerr == nil {
		aerr = lerr
	}
	if aerr != nil {
		return nil, aerr
	}

	if sc.decl.Query.Aggregations == nil {
		return nil, badRequest("Aggregations are not declared for stream '%s'", sc.decl.Name)
	}
	if aerr := req.checkMetric(sc); aerr != nil {
		return nil, aerr
	}
	if aerr := req.checkGrouping(sc); aerr != nil {
		return nil, aerr
	}
	if aerr := req.checkTime(c.q); aerr != nil {
		return nil, aerr
	}
	req.limit = aggregateDefaultLimit
	if hasLimit {
		if !req.grouped() {
			return nil, badRequest("limit is only supported for grouped aggregations").param("limit")
		}
		n, err := strconv.Atoi(limit)
		if err != nil || n < 1 || n > aggregateMaxLimit {
			return nil, badRequest("limit must be an integer between 1 and %d", aggregateMaxLimit).param("limit")
		}
		req.limit = n
	}
	if req.filters, aerr = parseFilters(sc, c.q); aerr != nil {
		return nil, aerr
	}
	return req, nil
}

// grouped reports whether the request groups its counts.
func (req *aggregateRequest) grouped() bool { return req.groupBy != "" || req.groupByTime != "" }

// checkMetric checks the metric and its field against the stream's
// declarations.
func (req *aggregateRequest) checkMetric(sc *streamScope) *apiError {
	if !slices.Contains(aggregateMetrics, req.metric) {
		return badRequest("metric must be one of %s", strings.Join(aggregateMetrics, ", ")).param("metric")
	}
	if req.metric == "count" {
		if req.field != "" {
			return badRequest("field is not supported for count").param("field")
		}
		if !sc.decl.Query.Aggregations.Count {
			return badRequest("Aggregation count is not declared for stream '%s'", sc.decl.Name).param("metric")
		}
	} else {
		if req.field == "" {
			return badRequest("field is required for metric %s", req.metric).param("field")
		}
		prop, aerr := aggregateField(sc, req.field, req.metric, "field")
		if aerr != nil {
			return aerr
		}
		typeOK := map[string]bool{
			"sum":            prop.Numeric(),
			"min":            prop.Numeric() || prop.Temporal(),
			"max":            prop.Numeric() || prop.Temporal(),
			"count_distinct": prop.Scalar(),
		}[req.metric]
		if !typeOK {
			return badRequest("Aggregation %s cannot use '%s' (type %s)", req.metric, req.field, strings.Join(prop.Types, "|")).param("field")
		}
		if req.metric == "count_distinct" && sc.multi() {
			return badRequest("count_distinct across several connections is not supported; scope with connection_id").param("connection_id")
		}
	}
	return nil
}

// checkGrouping checks group_by or group_by_time: only with count, never
// both, on a field of the right type.
func (req *aggregateRequest) checkGrouping(sc *streamScope) *apiError {
	switch {
	case req.grouped() && req.metric != "count":
		k := "group_by"
		if req.groupBy == "" {
			k = "group_by_time"
		}
		return badRequest("%s is only supported with metric=count", k).param(k)
	case req.groupBy != "" && req.groupByTime != "":
		return badRequest("group_by and group_by_time cannot be combined").param("group_by_time")
	case req.groupBy != "":
		prop, aerr := aggregateField(sc, req.groupBy, "group_by", "group_by")
		if aerr != nil {
			return aerr
		}
		if !prop.Scalar() {
			return badRequest("group_by needs a scalar field; '%s' is not", req.groupBy).param("group_by")
		}
	case req.groupByTime != "":
		prop, aerr := aggregateField(sc, req.groupByTime, "group_by_time", "group_by_time")
		if aerr != nil {
			return aerr
		}
		if !prop.Temporal() {
			return badRequest("group_by_time needs a date or date-time field; '%s' is not", req.groupByTime).param("group_by_time")
		}
	}
	return nil
}

// checkTime checks granularity and time_zone, which go with group_by_time
// only, and loads the zone.
func (req *aggregateRequest) checkTime(q *query) *apiError {
	switch {
	case req.groupByTime != "" && req.granularity == "":
		return badRequest("granularity is required with group_by_time (one of %s)", strings.Join(granularities, ", ")).param("granularity")
	case req.groupByTime == "" && q.has("granularity"):
		return badRequest("granularity is only supported with group_by_time").param("granularity")
	case req.groupByTime != "" && !slices.Contains(granularities, req.granularity):
		return badRequest("granularity must be one of %s", strings.Join(granularities, ", ")).param("granularity")
	}
	switch {
	case req.groupByTime == "" && q.has("time_zone"):
		return badRequest("time_zone is only supported with group_by_time").param("time_zone")
	case req.groupByTime != "":
		if req.tzName == "" {
			req.tzName = "UTC"
		}
		loc, err := loadZone(req.tzName)
		if err != nil {
			return badRequest("Unknown time_zone: '%s'", req.tzName).param("time_zone")
		}
		req.tz = loc
	}
	return nil
}

// aggregateField checks a field used by an aggregation: in the schema (400
// unknown_field), granted (403 field_not_granted), declared for the kind (400).
func aggregateField(sc *streamScope, field, kind, param string) (*dataset.Property, *apiError) {
	prop := sc.decl.Property(field)
	if prop == nil {
		return nil, errf(http.StatusBadRequest, "unknown_field", "Unknown field: %s", field).param(param)
	}
	if !sc.granted(field) {
		return nil, errf(http.StatusForbidden, "field_not_granted", "Field '%s' is not granted", field).param(param)
	}
	if !slices.Contains(aggFields(sc.decl.Query.Aggregations, kind), field) {
		return nil, badRequest("Aggregation %s is not declared for '%s'", kind, field)
	}
	return prop, nil
}

// loadZone accepts IANA names only (no offsets, no "Local").
func loadZone(name string) (*time.Location, error) {
	if name == "Local" || strings.ContainsAny(name, "+ ") {
		return nil, fmt.Errorf("not an IANA zone: %q", name)
	}
	return time.LoadLocation(name)
}

// aggregateValue computes an ungrouped metric.
func aggregateValue(rows []*storedRecord, req *aggregateRequest) any {
	switch req.metric {
	case "count":
		return len(rows)
	case "sum":
		sum := 0.0
		for _, r := range rows {
			if n, ok := asNumber(r.value(req.field)); ok {
				sum += n
			}
		}
		if sum == math.Trunc(sum) && math.Abs(sum) < 1<<53 {
			return int64(sum)
		}
		return sum
	case "min", "max":
		var best any
		for _, r := range rows {
			v := r.value(req.field)
			if v == nil {
				continue
			}
			c := 0
			if best != nil {
				c = compareValues(v, best)
			}
			if best == nil || (req.metric == "min" && c < 0) || (req.metric == "max" && c > 0) {
				best = v
			}
		}
		return best
	case "count_distinct":
		seen := map[string]bool{}
		for _, r := range rows {
			if raw, ok := r.raw(req.field); ok && string(raw) != "null" {
				seen[string(raw)] = true
			}
		}
		return len(seen)
	}
	return nil
}

type group struct {
	key   any
	count int
}

// groupCounts buckets rows. group_by buckets sort by count descending, then
// key ascending; time buckets sort ascending with the null bucket last.
func groupCounts(rows []*storedRecord, req *aggregateRequest) []group {
	idx := map[string]int{}
	var groups []group
	add := func(id string, key any) {
		i, ok := idx[id]
		if !ok {
			i = len(groups)
			idx[id] = i
			groups = append(groups, group{key: key})
		}
		groups[i].count++
	}
	for _, r := range rows {
		if req.groupBy != "" {
			raw, ok := r.raw(req.groupBy)
			if !ok || string(raw) == "null" {
				add("null", nil)
				continue
			}
			add(string(raw), r.value(req.groupBy))
			continue
		}
		t, ok := asTime(r.value(req.groupByTime))
		if !ok {
			add("null", nil)
			continue
		}
		k := timeBucket(t.In(req.tz), req.granularity)
		add(k, k)
	}
	if req.groupBy != "" {
		slices.SortStableFunc(groups, func(a, b group) int {
			if a.count != b.count {
				return b.count - a.count
			}
			return compareGroupKeys(a.key, b.key)
		})
		return groups
	}
	slices.SortStableFunc(groups, func(a, b group) int { return compareGroupKeys(a.key, b.key) })
	return groups
}

// compareGroupKeys orders keys ascending with null last.
func compareGroupKeys(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return compareValues(a, b)
}

// timeBucket truncates a local time to the granularity's key format.
func timeBucket(t time.Time, granularity string) string {
	switch granularity {
	case "minute":
		return t.Format("2006-01-02T15:04")
	case "hour":
		return t.Format("2006-01-02T15") + ":00"
	case "day":
		return t.Format("2006-01-02")
	case "week":
		// ISO weeks start on Monday.
		offset := (int(t.Weekday()) + 6) % 7
		return t.AddDate(0, 0, -offset).Format("2006-01-02")
	case "month":
		return t.Format("2006-01") + "-01"
	case "quarter":
		m := (int(t.Month())-1)/3*3 + 1
		return fmt.Sprintf("%04d-%02d-01", t.Year(), m)
	case "year":
		return t.Format("2006") + "-01-01"
	}
	return t.Format(time.RFC3339)
}
