package tools_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

func TestReadFieldForwarding(t *testing.T) {
	const body = "/v1/streams/message_bodies/records/p_msg_002_body/field-window"
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"id", map[string]any{"id": "cin_gmail_personal/message_bodies:p_msg_002_body", "field_path": "body_text"},
			body + "?connection_id=cin_gmail_personal&field=body_text"},
		{"triple", map[string]any{"connection_id": "cin_gmail_personal", "stream": "message_bodies", "record_id": "p_msg_002_body", "field_path": "body_text", "offset_chars": 20, "limit_chars": 40},
			body + "?connection_id=cin_gmail_personal&field=body_text&offset_chars=20&limit_chars=40"},
		{"cursor", map[string]any{"id": "cin_gmail_personal/message_bodies:p_msg_002_body", "field_path": "body_text", "cursor": "60"},
			body + "?connection_id=cin_gmail_personal&field=body_text&offset_chars=60"},
		{"query", map[string]any{"id": "cin_gmail_personal/message_bodies:p_msg_002_body", "field_path": "body_text", "q": "Seat", "before_chars": 10, "after_chars": 20},
			body + "?connection_id=cin_gmail_personal&field=body_text&q=Seat&before_chars=10&after_chars=20"},
		{"legacy id", map[string]any{"id": "message_bodies:p_msg_002_body", "field_path": "body_text"}, body + "?field=body_text"},
		{"legacy id scoped", map[string]any{"id": "message_bodies:p_msg_002_body", "connection_id": "cin_gmail_personal", "field_path": "body_text"},
			body + "?connection_id=cin_gmail_personal&field=body_text"},
		{"record handle", map[string]any{"id": "pdpp://record/cin_gmail_personal%2Fmessage_bodies%3Ap_msg_002_body", "field_path": "body_text"},
			body + "?connection_id=cin_gmail_personal&field=body_text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{})
			if res := h.call(t, "read_record_field", tc.args); res.IsError {
				t.Fatal(text(res))
			}
			if reqs := h.requests(t); len(reqs) != 1 || reqs[0].String() != tc.want {
				t.Errorf("RS requests %v, want [%s]", reqs, tc.want)
			}
		})
	}
}

// The selector rules are checked before any RS request, in order: identity,
// field, then the window.
func TestReadFieldRejections(t *testing.T) {
	const id = "cin_gmail_personal/message_bodies:p_msg_002_body"
	for _, tc := range []struct {
		name string
		args map[string]any
		code string
		want string
	}{
		{"id with stream", map[string]any{"id": id, "stream": "messages", "field_path": "body_text"}, tools.CodeInvalidSelector,
			"`id` is exclusive with explicit `stream` and `record_id`"},
		{"id with record_id", map[string]any{"id": id, "record_id": "x", "field_path": "body_text"}, tools.CodeInvalidSelector, "exclusive"},
		{"no identity", map[string]any{"field_path": "body_text"}, tools.CodeInvalidSelector,
			"read_record_field requires either `id` + `field_path` or `connection_id` + `stream` + `record_id` + `field_path`"},
		{"incomplete triple", map[string]any{"connection_id": "cin_gmail_personal", "stream": "message_bodies", "field_path": "body_text"}, tools.CodeInvalidSelector, "requires either"},
		{"conflicting connection", map[string]any{"id": id, "connection_id": "cin_gmail_work", "field_path": "body_text"}, "conflicting_connection_id", "id embeds connection_id"},
		{"traversal id", map[string]any{"id": "cin/message_bodies:../x", "field_path": "body_text"}, "invalid_id", "not a valid record id"},
		{"traversal stream", map[string]any{"connection_id": "cin_gmail_personal", "stream": "..", "record_id": "x", "field_path": "body_text"}, "invalid_arguments param=stream", "path traversal"},
		{"traversal record", map[string]any{"connection_id": "cin_gmail_personal", "stream": "message_bodies", "record_id": "..", "field_path": "body_text"}, "invalid_id", "path traversal"},
		{"nested field", map[string]any{"id": id, "field_path": "a/b"}, "invalid_arguments", "not a top-level field name"},
		{"dot field", map[string]any{"id": id, "field_path": ".."}, "invalid_arguments", "not a top-level field name"},
		{"cursor and offset", map[string]any{"id": id, "field_path": "body_text", "cursor": "10", "offset_chars": 5}, tools.CodeInvalidSelector,
			"`cursor` is exclusive with `offset_chars`"},
		{"q and offset", map[string]any{"id": id, "field_path": "body_text", "q": "Seat", "offset_chars": 5}, tools.CodeInvalidSelector,
			"`q` is exclusive with `cursor` and `offset_chars`"},
		{"q and cursor", map[string]any{"id": id, "field_path": "body_text", "q": "Seat", "cursor": "5"}, tools.CodeInvalidSelector, "`q` is exclusive"},
		{"context without q", map[string]any{"id": id, "field_path": "body_text", "before_chars": 5}, tools.CodeInvalidSelector,
			"`before_chars` and `after_chars` require `q`"},
		{"bad cursor", map[string]any{"id": id, "field_path": "body_text", "cursor": "-3"}, tools.CodeInvalidSelector,
			"field-window cursor must be a non-negative integer offset returned by read_record_field"},
		{"hex cursor", map[string]any{"id": id, "field_path": "body_text", "cursor": "0x10"}, tools.CodeInvalidSelector, "field-window cursor"},
		{"limit over max", map[string]any{"id": id, "field_path": "body_text", "limit_chars": 16385}, "invalid_arguments", "limit_chars must be an integer from 1 to 16384"},
		{"context over max", map[string]any{"id": id, "field_path": "body_text", "q": "a", "after_chars": 8193}, "invalid_arguments", "after_chars must be an integer from 0 to 8192"},
		{"negative offset", map[string]any{"id": id, "field_path": "body_text", "offset_chars": -1}, "invalid_arguments", "offset_chars must be an integer of at least 0"},
		{"missing field", map[string]any{"id": id}, "invalid_arguments", "read_record_field requires field_path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{})
			res := h.call(t, "read_record_field", tc.args)
			if !res.IsError || !strings.HasPrefix(text(res), "error code="+tc.code) || !strings.Contains(text(res), tc.want) {
				t.Errorf("want %s with %q, got:\n%s", tc.code, tc.want, text(res))
			}
			if n := len(h.rs.Requests()); n != 0 {
				t.Errorf("%d RS requests", n)
			}
		})
	}
}

// The text a model reads, pinned: numbers unquoted, continuations as
// ready-to-send JSON, then the window text.
func TestReadFieldText(t *testing.T) {
	for _, tc := range []struct {
		golden string
		args   map[string]any
	}{
		{"read-field-window.txt", map[string]any{"id": "cin_gmail_personal/message_bodies:p_msg_002_body", "field_path": "body_text", "offset_chars": 20, "limit_chars": 40}},
		{"read-field-query.txt", map[string]any{"connection_id": "cin_gmail_personal", "stream": "message_bodies", "record_id": "p_msg_002_body", "field_path": "body_text",
			"q": "Seat", "before_chars": 10, "after_chars": 20}},
		{"read-field-whole.txt", map[string]any{"id": "cin_gmail_work/message_bodies:w_msg_005_body", "field_path": "body_text"}},
		{"read-field-json.txt", map[string]any{"id": "cin_gmail_personal/messages:p_msg_002", "field_path": "labels", "offset_chars": 3, "limit_chars": 6}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			h := newHarness(t, harnessOptions{})
			res := h.call(t, "read_record_field", tc.args)
			if res.IsError {
				t.Fatal(text(res))
			}
			tools.Golden(t, "golden/"+tc.golden, []byte(text(res)+"\n"))
		})
	}
}

func TestReadFieldResult(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	res := h.call(t, "read_record_field", map[string]any{"id": "cin_gmail_personal/message_bodies:p_msg_002_body", "field_path": "body_text", "offset_chars": 20, "limit_chars": 40})
	sc := gjson.Get(h.wire.last(), "result.structuredContent")
	for k, want := range map[string]string{
		"record.id": "cin_gmail_personal/message_bodies:p_msg_002_body", "record.connection_id": "cin_gmail_personal",
		"record.stream": "message_bodies", "record.record_id": "p_msg_002_body", "field.path": "body_text", "field.type": "string",
		"window.text": " LX-4821. Flight TP1347 departs 2026-03-", "next.args.offset_chars": "60", "previous.args.offset_chars": "0",
		"next.args.limit_chars": "40", "next.tool": "read_record_field", "provider_url": h.rs.URL(),
	} {
		if got := sc.Get(k).String(); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if res.IsError || sc.Get("window.total_chars").Int() != 127 {
		t.Errorf("window %s", sc.Get("window").Raw)
	}

	// The next window, from the args in the text alone.
	head, _ := splitWindow(t, text(res))
	if !slices.Contains(head, `next read_record_field args={"id":"cin_gmail_personal/message_bodies:p_msg_002_body","field_path":"body_text","offset_chars":60,"limit_chars":40}`) {
		t.Errorf("head %q", head)
	}
}

// A field the RS will not window (an array, a number, null) is windowed over
// its compact JSON rendering, with the same math and continuations.
func TestReadFieldJSON(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	for _, tc := range []struct {
		field, want string
	}{
		{"labels", `["INBOX","Travel"]`},
		{"size_bytes", "22181"},
		{"in_reply_to", "null"},
		{"is_flagged", "true"},
	} {
		h.rs.ResetRequests()
		rebuilt := readToEnd(t, h, `{"id":"cin_gmail_personal/messages:p_msg_002","field_path":"`+tc.field+`","limit_chars":5}`)
		if rebuilt != tc.want {
			t.Errorf("%s: %q, want %q", tc.field, rebuilt, tc.want)
		}
		reqs := h.requests(t)
		if len(reqs) < 2 || !strings.HasSuffix(reqs[0].Path, "/field-window") ||
			reqs[1].String() != "/v1/streams/messages/records/p_msg_002?fields="+tc.field+"&connection_id=cin_gmail_personal" {
			t.Errorf("%s: requests %v", tc.field, reqs)
		}
	}
	res := h.call(t, "read_record_field", map[string]any{"id": "cin_gmail_personal/messages:p_msg_002", "field_path": "labels", "q": `"Travel"`})
	if res.IsError || !strings.Contains(text(res), "match=9..17") || gjson.Get(h.wire.last(), "result.structuredContent.field.type").Str != "json" {
		t.Errorf("query in JSON:\n%s", text(res))
	}
	res = h.call(t, "read_record_field", map[string]any{"id": "cin_gmail_personal/messages:p_msg_002", "field_path": "labels", "q": "Lisbon"})
	if !res.IsError || !strings.HasPrefix(text(res), "error code=query_not_found") {
		t.Errorf("absent q:\n%s", text(res))
	}
}

func TestReadFieldRSErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"ambiguous legacy id", map[string]any{"id": "labels:INBOX", "field_path": "name"}, "error code=ambiguous_connection http_status=409"},
		{"ungranted field", map[string]any{"id": "cin_gmail_personal/messages:p_msg_002", "field_path": "raw_headers"}, "error code=field_not_granted http_status=403"},
		{"query not found", map[string]any{"id": "cin_gmail_personal/messages:p_msg_002", "field_path": "subject", "q": "Tokyo"}, "error code=query_not_found http_status=404"},
		{"unknown record", map[string]any{"id": "cin_gmail_personal/messages:nope", "field_path": "subject"}, "error code=not_found http_status=404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{})
			res := h.call(t, "read_record_field", tc.args)
			if !res.IsError || !strings.HasPrefix(text(res), tc.want) {
				t.Errorf("want %q:\n%s", tc.want, text(res))
			}
			if n := len(h.rs.Requests()); n != 1 {
				t.Errorf("%d RS requests, want 1", n)
			}
		})
	}
}

// The last window of a field says that the field ends there; a window with
// more after it does not; a whole field says so.
func TestReadFieldLastWindowSaysSo(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	id := "cin_gmail_personal/message_bodies:p_msg_002_body"
	for _, tc := range []struct {
		args map[string]any
		want string
		not  string
	}{
		{map[string]any{"id": id, "field_path": "body_text", "offset_chars": 20, "limit_chars": 16384}, "the field ends here", "next read_record_field"},
		{map[string]any{"id": id, "field_path": "body_text", "offset_chars": 0, "limit_chars": 10}, "next read_record_field", "the field ends here"},
		{map[string]any{"id": id, "field_path": "body_text"}, "this window holds the whole field", "the field ends here"},
	} {
		res := h.call(t, "read_record_field", tc.args)
		if res.IsError || !strings.Contains(text(res), tc.want) || strings.Contains(text(res), tc.not) {
			t.Errorf("%v: want %q and not %q:\n%s", tc.args, tc.want, tc.not, text(res))
		}
	}
	// q is matched as the RS matches it: case-insensitively.
	if d, _ := json.Marshal(h.tools["read_record_field"].InputSchema); !strings.Contains(string(d), "case-insensitive") {
		t.Errorf("q is not described as case-insensitive")
	}
}
