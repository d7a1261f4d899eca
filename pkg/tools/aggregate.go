package tools

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/evidence"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// maxGroupPreview is how many groups the text shows; the rest are counted
// and left in structuredContent.data.groups.
const maxGroupPreview = 5

const aggregateInput = `{
 "type": "object",
 "properties": {
  "stream": ` + streamProp + `,
  "metric": {"type": "string", "enum": ["count", "sum", "min", "max", "count_distinct"], "description": "count takes no field; the others need field."},
  "field": {"type": "string", "minLength": 1, "description": "Field to sum, min, max or count_distinct."},
  "group_by": {"type": "string", "minLength": 1, "description": "Count per value of this field (metric count)."},
  "group_by_time": {"type": "string", "minLength": 1, "description": "Count per time bucket of this date field (metric count); needs granularity."},
  "granularity": {"type": "string", "enum": ["minute", "hour", "day", "week", "month", "quarter", "year"]},
  "time_zone": {"type": "string", "minLength": 1, "description": "IANA zone of the time buckets, default UTC."},
  "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "Groups to return, 1-100 (RS default 10)."},
  "filter": ` + filterProp + `,
  "connection_id": ` + connectionIDProp + `
 },
 "required": ["stream", "metric"],
 "additionalProperties": false
}`

var aggregateTool = &spec[aggregateArgs]{
	def: &mcp.Tool{
		Name:  "aggregate",
		Title: "Aggregate PDPP records",
		Description: "Count, sum, min, max or count_distinct over one stream. Read-only; " +
			"returns numbers and group counts, never record bodies. Group with exactly one of group_by or group_by_time. " +
			"Aggregatable fields are flagged a= in schema(stream); " +
			"use query_records for the records themselves.",
		Annotations:  readOnly("Aggregate PDPP records"),
		InputSchema:  mustSchema("aggregate", aggregateInput),
		OutputSchema: mustSchema("aggregate", aggregateOutput),
	},
	args: newArgSpec("aggregate", aggregateInput, map[string]string{"filter": CodeInvalidFilter}),
	run:  runAggregate,
}

type aggregateArgs struct {
	Stream       string    `json:"stream"`
	Metric       string    `json:"metric"`
	Field        string    `json:"field"`
	GroupBy      string    `json:"group_by"`
	GroupByTime  string    `json:"group_by_time"`
	Granularity  string    `json:"granularity"`
	TimeZone     string    `json:"time_zone"`
	Limit        *float64  `json:"limit"`
	Filter       filterArg `json:"filter"`
	ConnectionID string    `json:"connection_id"`
}

// query forwards every argument as given; which combinations make sense
// (field per metric, one grouping dimension, granularity with time groups)
// is the RS's to decide, against the stream's declarations.
func (a *aggregateArgs) query() rs.Query {
	q := rs.Query{{Key: "metric", Value: a.Metric}}
	add := func(k, v string) {
		if v != "" {
			q.Add(k, v)
		}
	}
	add("field", a.Field)
	add("group_by", a.GroupBy)
	add("group_by_time", a.GroupByTime)
	add("granularity", a.Granularity)
	add("time_zone", a.TimeZone)
	if a.Limit != nil {
		q.Add("limit", strconv.Itoa(int(*a.Limit)))
	}
	add("connection_id", a.ConnectionID)
	return append(q, a.Filter...)
}

func runAggregate(ctx context.Context, env *Env, a *aggregateArgs) (*mcp.CallToolResult, error) {
	path := rs.Path("v1", "streams", a.Stream, "aggregate")
	body, resp, err := getObject(ctx, env, path, a.query())
	if err != nil {
		return nil, err
	}
	return success(aggregateText(evidence.ParseBody(body), a.Stream), &readResult{
		Data:        json.RawMessage(body),
		ProviderURL: providerURL(env, resp),
		RequestID:   resp.RequestID,
	}), nil
}

// aggregateText names the metric, the stream and the result: the number for
// an ungrouped metric, a bounded preview of the groups otherwise.
func aggregateText(body gjson.Result, stream string) string {
	agg := body
	if body.Get("object").String() != "aggregation" && body.Get("data").IsObject() {
		agg = body.Get("data")
	}
	metric := agg.Get("metric").String()
	if metric == "" {
		metric = "aggregate"
	}
	var b strings.Builder
	b.WriteString(inline(metric) + "(" + inline(stream) + ")")
	if f := agg.Get("field"); f.Type == gjson.String && f.Str != "" {
		b.WriteString(" field=" + inline(f.Str))
	}
	groups := agg.Get("groups")
	if !groups.IsArray() {
		v := agg.Get("value")
		if !v.Exists() {
			v = agg.Get("filtered_record_count")
		}
		b.WriteString(" = " + scalarValue(v))
		if agg.Get("approximate").Bool() {
			b.WriteString(" (approximate)")
		}
		b.WriteString(". canonical envelope in structuredContent.data")
		b.WriteString(warningsText(body))
		return b.String()
	}

	if f := agg.Get("group_by_time").String(); f != "" {
		b.WriteString(" group_by_time=" + jsonString(f) + " granularity=" + jsonString(agg.Get("granularity").String()))
		if tz := first(agg, "effective_time_zone", "time_zone").String(); tz != "" {
			b.WriteString(" time_zone=" + jsonString(tz))
		}
	} else {
		b.WriteString(" group_by=" + jsonString(agg.Get("group_by").String()))
	}
	all := groups.Array()
	if len(all) == 0 {
		b.WriteString(": 0 group(s). canonical envelope in structuredContent.data")
		b.WriteString(warningsText(body))
		return b.String()
	}
	b.WriteString(": " + strconv.Itoa(len(all)) + " group(s) [")
	for i, g := range all {
		if i == maxGroupPreview {
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		key := g.Get("key")
		if key.Type == gjson.Null || !key.Exists() {
			b.WriteString("null")
		} else {
			b.WriteString(jsonString(key.String()))
		}
		b.WriteString("=")
		if c := g.Get("count"); c.Type == gjson.Number {
			b.WriteString(c.Raw)
		} else {
			b.WriteString("?")
		}
	}
	b.WriteString("]")
	if len(all) > maxGroupPreview {
		b.WriteString(" more_groups=" + strconv.Itoa(len(all)-maxGroupPreview) + " (every group is in structuredContent.data.groups);")
	}
	if oc := agg.Get("other_count"); oc.Type == gjson.Number {
		b.WriteString(" other_count=" + oc.Raw + ";")
		if oc.Num > 0 {
			b.WriteString(" (records in groups beyond")
			if l := agg.Get("limit"); l.Type == gjson.Number {
				b.WriteString(" limit=" + l.Raw)
			}
			b.WriteString(" were cut")
			// Raising limit is advice only below its maximum.
			if l := agg.Get("limit"); l.Type != gjson.Number || l.Num < 100 {
				b.WriteString("; raise limit, max 100")
			}
			b.WriteString(")")
		}
	}
	if agg.Get("approximate").Bool() {
		b.WriteString(" approximate=true;")
	}
	b.WriteString(" canonical envelope in structuredContent.data")
	b.WriteString(warningsText(body))
	return b.String()
}

// scalarValue renders a metric value: numbers bare, strings JSON-quoted,
// anything else (null, absent) as null.
func scalarValue(v gjson.Result) string {
	switch v.Type {
	case gjson.Number:
		return v.Raw
	case gjson.String:
		return jsonString(v.Str)
	case gjson.True, gjson.False:
		return v.Raw
	}
	return "null"
}

// warningsText renders the RS's meta.warnings (count_downgraded,
// partial_results, …) so that no partial answer goes unmentioned. It returns
// "" when there are none.
func warningsText(doc gjson.Result) string {
	var b strings.Builder
	doc.Get("meta.warnings").ForEach(func(_, w gjson.Result) bool {
		b.WriteString("\nwarning code=" + inline(w.Get("code").String()))
		if p := w.Get("param").String(); p != "" {
			b.WriteString(" param=" + inline(p))
		}
		if id := w.Get("connection_id").String(); id != "" {
			b.WriteString(" connection_id=" + inline(id))
		}
		if m := w.Get("message").String(); m != "" {
			b.WriteString(": " + visible.String(m))
		}
		return true
	})
	return b.String()
}
