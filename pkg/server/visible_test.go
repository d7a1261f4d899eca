package server

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/hiddenrs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/evidence"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/resultid"
)

// TestHiddenTextStdio: every tool over stdio, against an RS whose answers
// hide text, shows no character a person cannot see (raw, or escaped in the
// JSON on the wire), marks where the values held some, spells the tag
// characters' sentence, counts its marks, and leaves query_records'
// structuredContent.data as the RS sent it.
func TestHiddenTextStdio(t *testing.T) {
	h := hiddenrs.New(t)
	cs, frames := pipeSession(t, h.URL, nil)
	id := mustID(t, hiddenrs.Conn, hiddenrs.RecordKey)
	for _, c := range hiddenrs.Calls(id) {
		before := len(frames.String())
		res := callTool(t, cs, c.Tool, c.Args)
		where := c.Tool + " " + toJSON(c.Args)
		if res.IsError != c.Error {
			t.Errorf("%s: isError=%v: %s", where, res.IsError, resultText(res))
		}
		hiddenrs.Check(t, where, c, resultText(res))
		// Bounded texts stay within their bounds, marks and note included.
		if limit := map[string]int{"query_records": evidence.PreviewBudget, "search": 1792}[c.Tool]; limit > 0 && !c.Error &&
			len(resultText(res)) > limit {
			t.Errorf("%s: %d bytes of text, over %d:\n%s", where, len(resultText(res)), limit, resultText(res))
		}
		// The bytes on the wire: the content blocks of the answer.
		for _, line := range bytes.Split(bytes.TrimSpace([]byte(frames.String()[before:])), []byte("\n")) {
			if content := gjson.GetBytes(line, "result.content"); content.Exists() {
				for _, p := range hiddenrs.Problems(content.Raw) {
					t.Errorf("%s: on the wire: %s", where, p)
				}
			}
		}
		// structuredContent fields that are renderings of our own follow
		// the rule too: fetch's title and text, search's titles and
		// snippets.
		for _, line := range strings.Split(frames.String()[before:], "\n") {
			sc := gjson.Get(line, "result.structuredContent")
			var ours []gjson.Result
			switch c.Tool {
			case "fetch":
				ours = []gjson.Result{sc.Get("title"), sc.Get("text")}
			case "search":
				ours = append(sc.Get("results.#.title").Array(), sc.Get("results.#.snippet").Array()...)
			}
			for _, v := range ours {
				for _, p := range hiddenrs.Problems(v.Raw) {
					t.Errorf("%s: structuredContent: %s in %.200s", where, p, v.Raw)
				}
			}
		}
		if c.Tool == "query_records" && !c.Error && !c.Terse {
			// On the wire, byte for byte.
			data := ""
			for _, line := range strings.Split(frames.String()[before:], "\n") {
				if d := gjson.Get(line, "result.structuredContent.data"); d.Exists() {
					data = d.Raw
				}
			}
			if data != hiddenrs.Record("", 1) {
				t.Errorf("structuredContent.data is not the RS's answer:\n got %s\nwant %s", data, hiddenrs.Record("", 1))
			}
		}
	}
}

func mustID(t *testing.T, conn, key string) string {
	t.Helper()
	id, err := resultid.New(conn, "messages", key)
	if err != nil {
		t.Fatal(err)
	}
	return id.String()
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestHiddenHandlesStdio: an identifier a tool showed with a mark, passed
// back as shown, reaches the RS as the RS wrote it: a record id (shown as a
// handle), a field name, a connection id, an aggregate key used as a filter
// value. A mark that was shortened is refused, and so is a cursor holding a
// hidden character, each with the reason.
func TestHiddenHandlesStdio(t *testing.T) {
	h := hiddenrs.New(t)
	cs, _ := pipeSession(t, h.URL, nil)
	text := func(name string, args map[string]any, wantError bool) string {
		t.Helper()
		res := callTool(t, cs, name, args)
		if res.IsError != wantError {
			t.Fatalf("%s %s: isError=%v:\n%s", name, toJSON(args), res.IsError, resultText(res))
		}
		return resultText(res)
	}
	// seen reports whether the RS received a request for path whose query
	// has key=value.
	seen := func(path, key, value string) bool {
		for _, u := range h.Seen() {
			if u.Path == path && (key == "" || u.Query().Get(key) == value) {
				return true
			}
		}
		return false
	}
	shown := func(text, pattern string) string {
		t.Helper()
		m := regexp.MustCompile(pattern).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("%s not in:\n%s", pattern, text)
		}
		return m[1]
	}

	id := shown(text("query_records", map[string]any{"stream": "messages"}, false), `id=(\S+)`)
	text("fetch", map[string]any{"id": id}, false)
	if !seen("/v1/streams/messages/records/"+hiddenrs.RecordKey, "", "") {
		t.Errorf("fetch of the shown id %s did not reach the record %q", id, hiddenrs.RecordKey)
	}

	field := shown(text("schema", map[string]any{"stream": "messages"}, false), `"(sub⟦[^"]*ject)"`)
	text("read_record_field", map[string]any{"id": id, "field_path": field}, false)
	if !seen("/v1/streams/messages/records/"+hiddenrs.RecordKey+"/field-window", "field", hiddenrs.Field) {
		t.Errorf("field_path %s did not reach the RS as %q", field, hiddenrs.Field)
	}

	conn := shown(text("schema", nil, false), `connection_id:"(cin_hid⟦[^"]*den)"`)
	text("query_records", map[string]any{"stream": "messages", "connection_id": conn}, false)
	if !seen("/v1/streams/messages/records", "connection_id", hiddenrs.HiddenConn) {
		t.Errorf("connection_id %s did not reach the RS as %q", conn, hiddenrs.HiddenConn)
	}

	key := shown(text("aggregate", map[string]any{"stream": "messages", "metric": "count", "group_by": "from_name"}, false), `"(acme⟦[^"]*corp)"`)
	text("query_records", map[string]any{"stream": "messages", "filter": map[string]any{"from_name": key}}, false)
	if !seen("/v1/streams/messages/records", "filter[from_name]", hiddenrs.GroupKey) {
		t.Errorf("filter value %s did not reach the RS as %q", key, hiddenrs.GroupKey)
	}

	// A window keeps its limit with marks in it: it ends early, and the
	// next read starts where it ends.
	win := text("read_record_field", map[string]any{"id": id, "field_path": "subject", "limit_chars": 40}, false)
	lines := strings.Split(win, "\n")
	shownText := lines[len(lines)-2] // before the hidden_marks line
	if n := utf8.RuneCountInString(shownText); n > 40 || !strings.Contains(shownText, "⟦hidden ") {
		t.Errorf("a window of 40 shows %d code points: %q", n, shownText)
	}
	if next := shown(win, `next_cursor=(\d+)`); next == "40" {
		t.Errorf("the window's marks took room, yet the next read starts at 40:\n%s", win)
	}

	if msg := text("read_record_field", map[string]any{"id": id, "field_path": "sub⟦hidden U+200B …+3 more⟧ject"}, true); !strings.Contains(msg, "invalid_arguments") || !strings.Contains(msg, "shortened") {
		t.Errorf("a shortened mark was not refused with the reason:\n%s", msg)
	}
	if msg := text("query_records", map[string]any{"stream": hiddenrs.Paged}, true); !strings.Contains(msg, "rs_invalid_response") || !strings.Contains(msg, "next_cursor") {
		t.Errorf("a cursor holding a hidden character was not refused with the reason:\n%s", msg)
	}
}
