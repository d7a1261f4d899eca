package tools_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

func TestAggregateForwarding(t *testing.T) {
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"count", map[string]any{"stream": "messages", "metric": "count"}, "/v1/streams/messages/aggregate?metric=count"},
		{"every argument in order", map[string]any{"connection_id": "cin_gmail_work", "limit": 5, "time_zone": "Europe/Rome",
			"granularity": "month", "group_by_time": "received_at", "group_by": "labels", "field": "size_bytes", "metric": "sum", "stream": "messages",
			"filter": map[string]any{"is_seen": false, "size_bytes": map[string]any{"gte": 100}}},
			"/v1/streams/messages/aggregate?metric=sum&field=size_bytes&group_by=labels&group_by_time=received_at&granularity=month" +
				"&time_zone=Europe/Rome&limit=5&connection_id=cin_gmail_work&filter[is_seen]=false&filter[size_bytes][gte]=100"},
		{"count_distinct", map[string]any{"stream": "messages", "metric": "count_distinct", "field": "thread_id", "connection_id": "cin_gmail_work"},
			"/v1/streams/messages/aggregate?metric=count_distinct&field=thread_id&connection_id=cin_gmail_work"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{})
			h.call(t, "aggregate", tc.args)
			if reqs := h.requests(t); len(reqs) != 1 || reqs[0].String() != tc.want {
				t.Errorf("RS requests %v, want [%s]", reqs, tc.want)
			}
		})
	}
}

func TestAggregateResults(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind pdpptest.TokenKind
		args map[string]any
		want []string
	}{
		{"count", "", map[string]any{"stream": "messages", "metric": "count"},
			[]string{"count(messages) = 15. canonical envelope in structuredContent.data"}},
		{"sum", "", map[string]any{"stream": "messages", "metric": "sum", "field": "size_bytes", "connection_id": "cin_gmail_work"},
			[]string{"sum(messages) field=size_bytes = "}},
		{"group_by", "", map[string]any{"stream": "messages", "metric": "count", "group_by": "has_attachments"},
			[]string{`count(messages) group_by="has_attachments": 2 group(s) ["false"=10, "true"=5]`}},
		{"group_by_time", "", map[string]any{"stream": "messages", "metric": "count", "group_by_time": "received_at", "granularity": "month", "time_zone": "America/New_York"},
			[]string{`count(messages) group_by_time="received_at" granularity="month" time_zone="America/New_York": `}},
		{"owner filter", pdpptest.TokenOwner, map[string]any{"stream": "messages", "metric": "count", "connection_id": "cin_gmail_work", "filter": map[string]any{"has_attachments": true}},
			[]string{"count(messages) = "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{kind: tc.kind})
			res := h.call(t, "aggregate", tc.args)
			if res.IsError {
				t.Fatal(text(res))
			}
			for _, w := range tc.want {
				if !strings.Contains(text(res), w) {
					t.Errorf("text lacks %q:\n%s", w, text(res))
				}
			}
			if _, grouped := tc.args["group_by"]; !grouped && len(text(res)) >= 400 {
				t.Errorf("scalar text is %d chars", len(text(res)))
			}
			if got := h.rawData(t); !strings.Contains(got, `"object":"aggregation"`) {
				t.Errorf("structuredContent.data %s", got)
			}
		})
	}
}

func TestAggregateRejections(t *testing.T) {
	for _, tc := range []struct {
		name string
		args map[string]any
		code string
	}{
		{"metric enum", map[string]any{"stream": "messages", "metric": "avg"}, "invalid_arguments"},
		{"granularity enum", map[string]any{"stream": "messages", "metric": "count", "group_by_time": "received_at", "granularity": "decade"}, "invalid_arguments"},
		{"limit 0", map[string]any{"stream": "messages", "metric": "count", "group_by": "labels", "limit": 0}, "invalid_arguments"},
		{"limit 101", map[string]any{"stream": "messages", "metric": "count", "group_by": "labels", "limit": 101}, "invalid_arguments"},
		{"missing metric", map[string]any{"stream": "messages"}, "invalid_arguments"},
		{"unknown argument", map[string]any{"stream": "messages", "metric": "count", "having": "x"}, "invalid_arguments"},
		{"string filter", map[string]any{"stream": "messages", "metric": "count", "filter": "is_seen=true"}, "invalid_filter"},
		{"empty filter", map[string]any{"stream": "messages", "metric": "count", "filter": map[string]any{}}, "invalid_filter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{})
			res := h.call(t, "aggregate", tc.args)
			if !res.IsError || !strings.HasPrefix(text(res), "error code="+tc.code) {
				t.Errorf("result %s, want code %s", text(res), tc.code)
			}
			if n := len(h.rs.Requests()); n != 0 {
				t.Errorf("%d RS requests", n)
			}
		})
	}
}

// The RS owns the declaration checks; its answers reach the model typed.
func TestAggregateRSErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args map[string]any
		want []string
	}{
		{"undeclared sum", map[string]any{"stream": "messages", "metric": "sum", "field": "subject"},
			[]string{"error code=invalid_request http_status=400 request_id=req_", "Aggregation sum is not declared for 'subject'"}},
		{"two dimensions", map[string]any{"stream": "messages", "metric": "count", "group_by": "has_attachments", "group_by_time": "received_at", "granularity": "day"},
			[]string{"error code=invalid_request http_status=400"}},
		{"client filter ban", map[string]any{"stream": "messages", "metric": "count", "filter": map[string]any{"is_seen": true}},
			[]string{"param=filter", "this grant's token cannot filter"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{})
			res := h.call(t, "aggregate", tc.args)
			if !res.IsError {
				t.Fatalf("accepted: %s", text(res))
			}
			for _, w := range tc.want {
				if !strings.Contains(text(res), w) {
					t.Errorf("text lacks %q:\n%s", w, text(res))
				}
			}
			if reqs := h.requests(t); len(reqs) != 1 || !slices.ContainsFunc(reqs, func(r rsCall) bool { return strings.HasSuffix(r.Path, "/aggregate") }) {
				t.Errorf("requests %v, want the one aggregate read", reqs)
			}
		})
	}
}
