package tools

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestAggregateText(t *testing.T) {
	for _, tc := range []struct {
		name, input, want string
	}{
		{"count", "rs/aggregate-count.json", "count(messages) = 15. canonical envelope in structuredContent.data"},
		{"sum", "rs/aggregate-sum.json", "sum(messages) field=size_bytes = 130954. canonical envelope in structuredContent.data"},
		{"max of a date", "rs/aggregate-max.json", `max(messages) field=received_at = "2026-02-16T16:49:00.000Z". canonical envelope in structuredContent.data`},
		{"group_by", "rs/aggregate-group-by.json", `count(messages) group_by="has_attachments": 2 group(s) ["false"=10, "true"=5] canonical envelope in structuredContent.data`},
		{"group_by_time", "rs/aggregate-group-by-time.json", `count(messages) group_by_time="received_at" granularity="month" time_zone="UTC": 2 group(s) ["2026-01-01"=10, "2026-02-01"=5] canonical envelope in structuredContent.data`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := aggregateText(gjson.ParseBytes(readTestdata(t, tc.input)), "messages")
			if got != tc.want {
				t.Errorf("text\n got %s\nwant %s", got, tc.want)
			}
			if len(got) >= 400 {
				t.Errorf("text is %d chars", len(got))
			}
		})
	}
}

func TestAggregateTextBoundsGroups(t *testing.T) {
	body := `{"object":"aggregation","stream":"orders","metric":"count","group_by":"status","limit":7,
	 "groups":[{"key":"paid","count":41},{"key":"open","count":9},{"key":"void","count":3},{"key":"refunded","count":2},
	  {"key":"hold","count":1},{"key":null,"count":1},{"key":"x"}],"other_count":7,
	 "meta":{"warnings":[{"code":"count_downgraded","message":"not exact"}]}}`
	got := aggregateText(gjson.Parse(body), "orders")
	for _, w := range []string{
		`count(orders) group_by="status": 7 group(s) ["paid"=41, "open"=9, "void"=3, "refunded"=2, "hold"=1]`,
		" more_groups=2 (every group is in structuredContent.data.groups);",
		" other_count=7; (records in groups beyond limit=7 were cut; raise limit, max 100)",
		"\nwarning code=count_downgraded: not exact",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("text lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, `"x"`) {
		t.Error("a sixth group was previewed")
	}
	empty := aggregateText(gjson.Parse(`{"object":"aggregation","metric":"count","group_by":"s","groups":[]}`), "orders")
	if want := `count(orders) group_by="s": 0 group(s). canonical envelope in structuredContent.data`; empty != want {
		t.Errorf("empty groups: %s", empty)
	}
	null := aggregateText(gjson.Parse(`{"object":"aggregation","metric":"max","field":"f","value":null,"filtered_record_count":0}`), "orders")
	if want := "max(orders) field=f = null. canonical envelope in structuredContent.data"; null != want {
		t.Errorf("null value: %s", null)
	}
}
