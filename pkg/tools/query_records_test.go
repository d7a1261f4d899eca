package tools_test

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// Every argument reaches the RS exactly, in a stable order: plain arguments,
// then filter entries, then expand_limit entries.
func TestQueryRecordsForwarding(t *testing.T) {
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"stream only", map[string]any{"stream": "messages"}, "/v1/streams/messages/records"},
		{"paging", map[string]any{"stream": "messages", "limit": 100, "cursor": "c1", "connection_id": "cin_gmail_work"},
			"/v1/streams/messages/records?limit=100&cursor=c1&connection_id=cin_gmail_work"},
		{"order sort count", map[string]any{"stream": "messages", "order": "asc", "sort": "-received_at", "count": "exact"},
			"/v1/streams/messages/records?order=asc&sort=-received_at&count=exact"},
		{"fields repeat", map[string]any{"stream": "messages", "fields": []string{"id", "subject", "received_at"}},
			"/v1/streams/messages/records?fields=id&fields=subject&fields=received_at"},
		{"view", map[string]any{"stream": "messages", "view": "envelope"}, "/v1/streams/messages/records?view=envelope"},
		{"changes", map[string]any{"stream": "messages", "changes_since": "beginning", "connection_id": "cin_gmail_work"},
			"/v1/streams/messages/records?changes_since=beginning&connection_id=cin_gmail_work"},
		{"exact filter", map[string]any{"stream": "messages", "filter": map[string]any{"from_email": "a@b.example"}},
			"/v1/streams/messages/records?filter[from_email]=a@b.example"},
		{"range filter", map[string]any{"stream": "messages", "limit": 10,
			"filter": map[string]any{"received_at": map[string]any{"gte": "2026-01-01T00:00:00Z", "lt": "2026-02-01T00:00:00Z"}, "size_bytes": map[string]any{"gt": 2000}}},
			"/v1/streams/messages/records?limit=10&filter[received_at][gte]=2026-01-01T00:00:00Z&filter[received_at][lt]=2026-02-01T00:00:00Z&filter[size_bytes][gt]=2000"},
		{"stream escaped in the path", map[string]any{"stream": "my stream"}, "/v1/streams/my stream/records"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{})
			h.call(t, "query_records", tc.args)
			reqs := h.toolRequests(t)
			if len(reqs) != 1 || reqs[0].String() != tc.want {
				t.Errorf("RS requests %v, want [%s]", reqs, tc.want)
			}
		})
	}
}

func TestQueryRecordsExpandForwarding(t *testing.T) {
	h := newHarness(t, harnessOptions{kind: pdpptest.TokenOwner})
	res := h.call(t, "query_records", map[string]any{"stream": "messages", "connection_id": "cin_gmail_work", "limit": 2,
		"expand": []string{"attachments"}, "expand_limit": map[string]any{"attachments": 3}})
	if res.IsError {
		t.Fatal(text(res))
	}
	var got []string
	for _, r := range h.toolRequests(t) {
		got = append(got, r.String())
	}
	want := []string{
		"/v1/schema?view=compact&stream=messages&connection_id=cin_gmail_work", // the expand check
		"/v1/streams/messages/records?limit=2&expand=attachments&connection_id=cin_gmail_work&expand_limit[attachments]=3",
	}
	if !slices.Equal(got, want) {
		t.Errorf("requests %v, want %v", got, want)
	}
	// The check's answer is cached: the same read again asks the schema no more.
	h.rs.ResetRequests()
	h.call(t, "query_records", map[string]any{"stream": "messages", "connection_id": "cin_gmail_work", "expand": []string{"attachments"}})
	if reqs := h.toolRequests(t); len(reqs) != 1 || reqs[0].Path != "/v1/streams/messages/records" {
		t.Errorf("second read made %v", reqs)
	}
	// The cache is keyed by connection too.
	h.rs.ResetRequests()
	h.call(t, "query_records", map[string]any{"stream": "messages", "connection_id": "cin_gmail_personal", "expand": []string{"attachments"}})
	if reqs := h.toolRequests(t); len(reqs) != 2 || reqs[0].Path != "/v1/schema" {
		t.Errorf("read of another connection made %v", reqs)
	}
}

// A schema(stream, connection_id) call warms the expand check's cache.
func TestSchemaWarmsTheExpandCheck(t *testing.T) {
	h := newHarness(t, harnessOptions{kind: pdpptest.TokenOwner})
	h.call(t, "schema", map[string]any{"stream": "messages", "connection_id": "cin_gmail_work"})
	h.rs.ResetRequests()
	h.call(t, "query_records", map[string]any{"stream": "messages", "connection_id": "cin_gmail_work", "expand": []string{"message_bodies"}})
	if reqs := h.toolRequests(t); len(reqs) != 1 || reqs[0].Path != "/v1/streams/messages/records" {
		t.Errorf("requests %v", reqs)
	}
}

// Rejected calls never reach the records endpoint; most never reach the RS.
func TestQueryRecordsRejections(t *testing.T) {
	for _, tc := range []struct {
		name  string
		kind  pdpptest.TokenKind
		args  map[string]any
		code  string
		text  []string
		calls []string // RS requests allowed (the expand check's schema read)
	}{
		{name: "bracket string filter", args: map[string]any{"stream": "messages", "filter": "filter[user_id]=U123"}, code: "invalid_filter",
			text: []string{"filter must be an object keyed by field name", `{"received_at": {"gte"`}},
		{name: "comparison string filter", args: map[string]any{"stream": "messages", "filter": "amount>100"}, code: "invalid_filter"},
		{name: "json string filter", args: map[string]any{"stream": "messages", "filter": `{"user_id":"U1"}`}, code: "invalid_filter"},
		{name: "empty string filter", args: map[string]any{"stream": "messages", "filter": ""}, code: "invalid_filter"},
		{name: "blank filter", args: map[string]any{"stream": "messages", "filter": "   "}, code: "invalid_filter"},
		{name: "empty filter", args: map[string]any{"stream": "messages", "filter": map[string]any{}}, code: "invalid_filter",
			text: []string{"at least one field; omit filter entirely"}},
		{name: "pre-encoded filter key", args: map[string]any{"stream": "messages", "filter": map[string]any{"filter[user_id]": "U1"}}, code: "invalid_filter",
			text: []string{"not pre-encoded bracket syntax"}},
		{name: "bracket argument", args: map[string]any{"stream": "messages", "filter[user_id]": "U1"}, code: "invalid_filter"},
		{name: "unknown operator", args: map[string]any{"stream": "messages", "filter": map[string]any{"amount": map[string]any{"between": 5}}}, code: "invalid_filter"},
		{name: "empty expand_limit", args: map[string]any{"stream": "messages", "expand": []string{"attachments"}, "expand_limit": map[string]any{}}, code: "invalid_expand"},
		{name: "pre-encoded expand_limit", args: map[string]any{"stream": "messages", "expand": []string{"attachments"}, "expand_limit": map[string]any{"expand_limit[attachments]": 3}}, code: "invalid_expand"},
		{name: "expand_limit without expand", args: map[string]any{"stream": "messages", "expand_limit": map[string]any{"attachments": 3}}, code: "invalid_expand",
			text: []string{`expand_limit names relation "attachments", which is not in expand`}},
		{name: "limit over 100", args: map[string]any{"stream": "messages", "limit": 500}, code: "invalid_arguments", text: []string{"limit must be an integer from 1 to 100; got 500"}},
		{name: "unknown argument", args: map[string]any{"stream": "messages", "bogus_param": 1}, code: "invalid_arguments", text: []string{`does not accept "bogus_param"`}},
		{name: "alias argument", args: map[string]any{"stream": "messages", "connector_instance_id": "cin_gmail_work"}, code: "invalid_arguments"},
		{name: "traversal", args: map[string]any{"stream": "../schema"}, code: "invalid_arguments"},
		{name: "missing stream", args: map[string]any{"limit": 5}, code: "invalid_arguments", text: []string{"requires stream"}},
		{name: "count enum", args: map[string]any{"stream": "messages", "count": "all"}, code: "invalid_arguments"},
		// Client grants advertise no expand relations: refused after the
		// schema read, before the records read.
		{name: "expand on a client grant", args: map[string]any{"stream": "messages", "connection_id": "cin_gmail_work", "expand": []string{"attachments"}}, code: "invalid_expand",
			text:  []string{`stream "messages" advertises no expand_capabilities`, `relation "attachments"`, "schema(stream) lists the relations a stream can expand"},
			calls: []string{"/v1/schema?view=compact&stream=messages&connection_id=cin_gmail_work"}},
		{name: "unadvertised relation", kind: pdpptest.TokenOwner, args: map[string]any{"stream": "messages", "connection_id": "cin_gmail_work", "expand": []string{"labels"}}, code: "invalid_expand",
			text:  []string{`stream "messages" does not advertise relation "labels"`, "usable here: message_bodies, attachments"},
			calls: []string{"/v1/schema?view=compact&stream=messages&connection_id=cin_gmail_work"}},
		{name: "expand_limit over max_limit", kind: pdpptest.TokenOwner, args: map[string]any{"stream": "messages", "connection_id": "cin_gmail_work", "expand": []string{"attachments"}, "expand_limit": map[string]any{"attachments": 51}}, code: "invalid_expand",
			text:  []string{"allows at most 50 (max_limit)"},
			calls: []string{"/v1/schema?view=compact&stream=messages&connection_id=cin_gmail_work"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{kind: tc.kind})
			res := h.call(t, "query_records", tc.args)
			if !res.IsError {
				t.Fatalf("accepted: %s", text(res))
			}
			txt := text(res)
			if !strings.HasPrefix(txt, "error code="+tc.code) {
				t.Errorf("text %q, want code %s", txt, tc.code)
			}
			for _, w := range tc.text {
				if !strings.Contains(txt, w) {
					t.Errorf("text lacks %q:\n%s", w, txt)
				}
			}
			var got []string
			for _, r := range h.toolRequests(t) {
				got = append(got, r.String())
			}
			if !slices.Equal(got, tc.calls) {
				t.Errorf("RS requests %v, want %v", got, tc.calls)
			}
		})
	}
}

// When the schema cannot be read the expand check steps aside and the RS
// decides.
func TestExpandCheckFailsOpen(t *testing.T) {
	h := newHarness(t, harnessOptions{kind: pdpptest.TokenOwner})
	h.rs.Fault(pdpptest.Fault{Path: "/v1/schema", Status: 503})
	res := h.call(t, "query_records", map[string]any{"stream": "messages", "connection_id": "cin_gmail_work", "expand": []string{"attachments"}})
	if res.IsError {
		t.Fatal(text(res))
	}
	if reqs := h.toolRequests(t); len(reqs) != 2 || reqs[1].Path != "/v1/streams/messages/records" {
		t.Errorf("requests %v", reqs)
	}
}

func TestQueryRecordsResult(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	args := map[string]any{"stream": "messages", "connection_id": "cin_gmail_personal", "limit": 2, "count": "exact",
		"fields": []string{"id", "subject", "received_at"}}
	res := h.call(t, "query_records", args)
	if res.IsError {
		t.Fatal(text(res))
	}
	want := h.direct(t, "/v1/streams/messages/records", rs.Query{{Key: "limit", Value: "2"}, {Key: "count", Value: "exact"},
		{Key: "fields", Value: "id"}, {Key: "fields", Value: "subject"}, {Key: "fields", Value: "received_at"}, {Key: "connection_id", Value: "cin_gmail_personal"}})
	data := h.rawData(t)
	// links.self differs with the parameter order; everything else is the
	// RS answer as sent.
	if !sameJSON(t, withoutLinks(data), withoutLinks(want)) {
		t.Errorf("structuredContent.data is not the RS body\n got %s\nwant %s", data, want)
	}
	txt := text(res)
	body := gjson.Parse(data)
	for _, w := range []string{
		`records from stream "messages": 2 record(s) has_more=true next_cursor="` + body.Get("next_cursor").String() + `" count=exact:8 — Showing`,
		"record[0] id=cin_gmail_personal/messages:p_msg_008 ",
	} {
		if !strings.Contains(txt, w) {
			t.Errorf("text lacks %q:\n%s", w, txt)
		}
	}
	ladder := structured(t, res)["content_ladder"].(map[string]any)
	if ladder["kind"] != "record_set" || len(ladder["records"].([]any)) != 2 {
		t.Errorf("content_ladder %v", ladder)
	}
	if sc := structured(t, res); sc["provider_url"] != h.rs.URL() || !strings.HasPrefix(sc["request_id"].(string), "req_") {
		t.Errorf("provider_url %v request_id %v", sc["provider_url"], sc["request_id"])
	}

	// The next page, from the handle in the text alone.
	h.rs.ResetRequests()
	args["cursor"] = body.Get("next_cursor").String()
	if res := h.call(t, "query_records", args); res.IsError || !strings.Contains(text(res), "record[0] id=cin_gmail_personal/messages:p_msg_006") {
		t.Errorf("page 2: %s", text(res))
	}
}

func withoutLinks(s string) string {
	var w strings.Builder
	w.WriteString("{")
	first := true
	gjson.Parse(s).ForEach(func(k, v gjson.Result) bool {
		if k.String() == "links" {
			return true
		}
		if !first {
			w.WriteString(",")
		}
		first = false
		w.WriteString(k.Raw + ":" + v.Raw)
		return true
	})
	w.WriteString("}")
	return w.String()
}

func TestQueryRecordsHandles(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	// Two connections, no connection_id: the RS merges pages and cannot page
	// the union; the text says what to do.
	res := h.call(t, "query_records", map[string]any{"stream": "messages", "limit": 3})
	for _, w := range []string{"has_more=true ", "warnings=partial_results — ", "pass connection_id to page one connection at a time"} {
		if !strings.Contains(text(res), w) {
			t.Errorf("merged page text lacks %q:\n%s", w, text(res))
		}
	}
	// Incremental sync: the bookmark is in the text.
	res = h.call(t, "query_records", map[string]any{"stream": "messages", "changes_since": "beginning", "connection_id": "cin_gmail_work", "fields": []string{"id"}})
	if res.IsError || !strings.Contains(text(res), ` next_changes_since="`) {
		t.Errorf("changes text lacks next_changes_since:\n%s", text(res))
	}
}

// The preview stays within 1,792 characters however large the page.
func TestQueryRecordsPreviewIsBounded(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	res := h.call(t, "query_records", map[string]any{"stream": "message_bodies", "connection_id": "cin_gmail_work", "limit": 100})
	if res.IsError {
		t.Fatal(text(res))
	}
	if n := utf8.RuneCountInString(text(res)); n > 1792 {
		t.Errorf("preview is %d characters", n)
	}
	if len(h.rawData(t)) <= 2*1792 {
		t.Fatalf("the page is only %d bytes; pick a larger one so the bound is exercised", len(h.rawData(t)))
	}
}

func TestQueryRecordsRSErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args map[string]any
		want []string
	}{
		{"client filter ban", map[string]any{"stream": "messages", "connection_id": "cin_gmail_work", "filter": map[string]any{"has_attachments": true}},
			[]string{"error code=invalid_request http_status=400 request_id=req_", "param=filter", "message: filter[...] is not supported for client-token reads",
				"next: this grant's token cannot filter", "aggregate", "search", "fields, limit and cursor"}},
		{"client view ban", map[string]any{"stream": "messages", "view": "envelope"},
			[]string{"error code=invalid_request http_status=400", "use fields instead of view"}},
		{"bad cursor", map[string]any{"stream": "messages", "connection_id": "cin_gmail_work", "cursor": "not-a-cursor"},
			[]string{"error code=invalid_cursor http_status=400", "next: pass next_cursor exactly as returned"}},
		{"ungranted stream", map[string]any{"stream": "no_such_stream"},
			[]string{"error code=context.stream_not_allowed request_id=", "message: the stream is not in this grant\nnext: call schema for the granted streams"}},
		{"unknown field", map[string]any{"stream": "messages", "fields": []string{"nope"}},
			[]string{"error code=unknown_field http_status=400", "call schema(stream) for the stream's field names"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{})
			res := h.call(t, "query_records", tc.args)
			if !res.IsError {
				t.Fatalf("accepted: %s", text(res))
			}
			for _, w := range tc.want {
				if !strings.Contains(text(res), w) {
					t.Errorf("text lacks %q:\n%s", w, text(res))
				}
			}
			if n := len(h.toolRequests(t)); n != 1 {
				t.Errorf("%d RS requests, want exactly 1 (no retries)", n)
			}
		})
	}
}
