package pdpptest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestAggregateErrors(t *testing.T) {
	srv := New(t, Options{Dataset: gmailWith(t, map[string]string{"narrow": narrowGrant})})
	client, owner, narrow := srv.Token(TokenClient), srv.Token(TokenOwner), srv.IssueClientToken("narrow")
	const msgs = "/v1/streams/messages/aggregate?"
	for _, tc := range []struct {
		name, token, target string
		status              int
		code, param         string
	}{
		{"unknown parameter", client, msgs + "metric=count&bogus=1", 400, "invalid_request", "bogus"},
		{"metric missing", client, msgs, 400, "invalid_request", "metric"},
		{"metric unknown", client, msgs + "metric=avg", 400, "invalid_request", "metric"},
		{"field with count", client, msgs + "metric=count&field=size_bytes", 400, "invalid_request", "field"},
		{"field missing", client, msgs + "metric=sum", 400, "invalid_request", "field"},
		{"unknown field", client, msgs + "metric=sum&field=nope", 400, "unknown_field", "field"},
		{"field outside the grant", narrow, msgs + "metric=sum&field=size_bytes", 403, "field_not_granted", "field"},
		{"metric not declared for field", client, msgs + "metric=sum&field=subject", 400, "invalid_request", ""},
		{"count_distinct not declared", client, msgs + "metric=count_distinct&field=from_email&connection_id=cin_gmail_work", 400, "invalid_request", ""},
		{"group_by with sum", client, msgs + "metric=sum&field=size_bytes&group_by=is_seen", 400, "invalid_request", "group_by"},
		{"group_by and group_by_time", client, msgs + "metric=count&group_by=is_seen&group_by_time=received_at&granularity=day", 400, "invalid_request", "group_by_time"},
		{"group_by undeclared", client, msgs + "metric=count&group_by=from_email", 400, "invalid_request", ""},
		{"group_by_time undeclared", client, msgs + "metric=count&group_by_time=subject&granularity=day", 400, "invalid_request", ""},
		{"granularity missing", client, msgs + "metric=count&group_by_time=received_at", 400, "invalid_request", "granularity"},
		{"granularity unknown", client, msgs + "metric=count&group_by_time=received_at&granularity=fortnight", 400, "invalid_request", "granularity"},
		{"granularity without group_by_time", client, msgs + "metric=count&granularity=day", 400, "invalid_request", "granularity"},
		{"time_zone without group_by_time", client, msgs + "metric=count&time_zone=UTC", 400, "invalid_request", "time_zone"},
		{"time_zone offset", client, msgs + "metric=count&group_by_time=received_at&granularity=day&time_zone=%2B05:00", 400, "invalid_request", "time_zone"},
		{"time_zone unknown", client, msgs + "metric=count&group_by_time=received_at&granularity=day&time_zone=Mars/Olympus", 400, "invalid_request", "time_zone"},
		{"limit on ungrouped", client, msgs + "metric=count&limit=5", 400, "invalid_request", "limit"},
		{"limit zero", client, msgs + "metric=count&group_by=is_seen&limit=0", 400, "invalid_request", "limit"},
		{"limit above 100", client, msgs + "metric=count&group_by=is_seen&limit=101", 400, "invalid_request", "limit"},
		{"limit not an integer", client, msgs + "metric=count&group_by=is_seen&limit=2.5", 400, "invalid_request", "limit"},
		{"no aggregations declared", client, "/v1/streams/labels/aggregate?metric=count", 400, "invalid_request", ""},
		{"client stream outside the grant", narrow, "/v1/streams/attachments/aggregate?metric=count", 401, "context.stream_not_allowed", ""},
		{"owner unknown stream", owner, "/v1/streams/nope/aggregate?connector_id=gmail&metric=count", 404, "not_found", ""},
		{"owner bad filter", owner, msgs + "connector_id=gmail&metric=count&filter[subject][gt]=a", 400, "invalid_request", "filter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, get(t, srv, tc.token, tc.target), tc.status, tc.code, tc.param)
		})
	}
}

func TestAggregateValues(t *testing.T) {
	srv := New(t, Options{Dataset: gmailWith(t, map[string]string{"narrow": narrowGrant})})
	client, owner, narrow := srv.Token(TokenClient), srv.Token(TokenOwner), srv.IssueClientToken("narrow")
	const msgs = "/v1/streams/messages/aggregate?"

	for _, tc := range []struct {
		name, token, target, want string
		count                     int64
	}{
		{"count over both connections", client, msgs + "metric=count", "15", 15},
		{"count one connection", client, msgs + "metric=count&connection_id=cin_gmail_work", "7", 7},
		{"count within the grant's time window", narrow, msgs + "metric=count", "5", 5},
		{"sum", client, msgs + "metric=sum&field=size_bytes", "130954", 15},
		{"min of a date", client, msgs + "metric=min&field=received_at", `"2026-01-05T09:00:00.000Z"`, 15},
		{"max of a number", client, msgs + "metric=max&field=size_bytes&connection_id=cin_gmail_personal", "22181", 8},
		{"owner filter before aggregating", owner, msgs + "connector_id=gmail&metric=count&filter[has_attachments]=true", "5", 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := get(t, srv, tc.token, tc.target)
			wantOK(t, a)
			if a.j("value").Raw != tc.want || a.j("filtered_record_count").Int() != tc.count {
				t.Errorf("value %s filtered %s, want %s / %d", a.j("value").Raw, a.j("filtered_record_count"), tc.want, tc.count)
			}
			if a.j("groups").Exists() || a.j("limit").Exists() || a.j("other_count").Exists() || a.j("approximate").Bool() {
				t.Errorf("ungrouped answer shape: %s", a.body)
			}
		})
	}

	// group_by: count desc, then key asc; limit cuts and other_count says how much.
	a := get(t, srv, client, msgs+"metric=count&group_by=is_seen&limit=1")
	wantOK(t, a)
	if a.j("groups.#").Int() != 1 || a.j("groups.0.key").Raw != "true" || a.j("limit").Int() != 1 ||
		a.j("groups.0.count").Int()+a.j("other_count").Int() != 15 || a.j("other_count").Int() == 0 {
		t.Errorf("group_by limit 1: %s", a.body)
	}

	// Time buckets in a zone: a message at 2026-02-01T00:30Z is still January in New York.
	srv.Upsert("cin_gmail_work", "messages", message("w_msg_edge", "2026-02-01T00:30:00.000Z", "edge", "edge"))
	a = get(t, srv, client, msgs+"metric=count&group_by_time=received_at&granularity=month&time_zone=America/New_York&connection_id=cin_gmail_work")
	wantOK(t, a)
	if a.j("time_zone").String() != "America/New_York" || a.j("groups.#.key").Raw != `["2026-01-01","2026-02-01"]` ||
		a.j("groups.0.count").Int() != 6 {
		t.Errorf("zoned months: %s", a.j("groups"))
	}
}

func TestAggregateCountDistinct(t *testing.T) {
	// gmail declares no count_distinct; declare one on from_email.
	ds := gmailWith(t, nil)
	m := string(ds.Connectors[0].Manifest)
	patched := strings.Replace(m, `"sum": ["size_bytes"],`, `"sum": ["size_bytes"], "count_distinct": ["from_email"],`, 1)
	if patched == m {
		t.Fatal("manifest patch did not apply")
	}
	ds.Connectors[0].Manifest = json.RawMessage(patched)
	srv := New(t, Options{Dataset: ds})
	client := srv.Token(TokenClient)

	a := get(t, srv, client, "/v1/streams/messages/aggregate?metric=count_distinct&field=from_email&connection_id=cin_gmail_personal")
	wantOK(t, a)
	distinct := map[string]bool{}
	for _, r := range ds.Connectors[0].Records["cin_gmail_personal"]["messages"] {
		var d struct {
			From *string `json:"from_email"`
		}
		if err := json.Unmarshal(r.Data, &d); err != nil {
			t.Fatal(err)
		}
		if d.From != nil {
			distinct[*d.From] = true
		}
	}
	if a.j("value").Int() != int64(len(distinct)) || len(distinct) < 2 {
		t.Errorf("count_distinct = %s, want %d", a.j("value"), len(distinct))
	}
	// Across several connections it needs connection_id.
	wantError(t, get(t, srv, client, "/v1/streams/messages/aggregate?metric=count_distinct&field=from_email"), 400, "invalid_request", "connection_id")
}

func TestTimeBucket(t *testing.T) {
	at := time.Date(2026, 4, 9, 13, 47, 12, 0, time.UTC) // a Thursday
	for granularity, want := range map[string]string{
		"minute":  "2026-04-09T13:47",
		"hour":    "2026-04-09T13:00",
		"day":     "2026-04-09",
		"week":    "2026-04-06",
		"month":   "2026-04-01",
		"quarter": "2026-04-01",
		"year":    "2026-01-01",
	} {
		if got := timeBucket(at, granularity); got != want {
			t.Errorf("%s: %s, want %s", granularity, got, want)
		}
	}
	if got := timeBucket(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), "week"); got != "2026-02-23" {
		t.Errorf("a Sunday belongs to the week of the Monday before: %s", got)
	}
	if got := timeBucket(time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC), "quarter"); got != "2026-10-01" {
		t.Errorf("Q4: %s", got)
	}
}
