package tools_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// longBody is a message body of about 30,000 characters (some of them
// multi-byte) with one rare phrase near its end.
func longBody() string {
	var b strings.Builder
	for i := 0; b.Len() < 30000; i++ {
		b.WriteString("Paragraph about the café budget review, line ")
		b.WriteString(strings.Repeat("é", i%3))
		b.WriteString(" — nothing decided yet.\n")
		if i == 380 {
			b.WriteString("The quetzal harbour lease renews in March.\n")
		}
	}
	return b.String()
}

var evidenceArgs = regexp.MustCompile(`(?m)^   evidence field_path=\S+ read_record_field args=(\{.*\})$`)

// A model that reads only content[] text goes from a search to the end of a
// long field on a grant with two connections: search, take first_fetch_id,
// fetch, then follow the continuations with read_record_field. No step needs
// structuredContent, and none meets ambiguous_connection.
func TestJourneySearchFetchRead(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	body := longBody()
	if !strings.Contains(body, "quetzal harbour") {
		t.Fatal("the body lacks the phrase the journey searches for")
	}
	raw, _ := json.Marshal(map[string]any{"id": "w_long_body", "message_id": "w_msg_001", "body_text": body, "body_source": "text_plain"})
	h.rs.Upsert("cin_gmail_work", "message_bodies", dataset.Record{Key: "w_long_body", Data: raw})

	search := h.call(t, "search", map[string]any{"q": "quetzal harbour"})
	m := firstFetchID.FindStringSubmatch(text(search))
	if search.IsError || m == nil {
		t.Fatalf("search:\n%s", text(search))
	}
	id := m[1]
	if id != "cin_gmail_work/message_bodies:w_long_body" {
		t.Fatalf("first_fetch_id %q", id)
	}
	// The evidence read lands on the match.
	ev := evidenceArgs.FindStringSubmatch(text(search))
	if ev == nil {
		t.Fatalf("no evidence read in:\n%s", text(search))
	}
	if _, window := splitWindow(t, callArgs(t, h, "read_record_field", ev[1])); !strings.Contains(window, "quetzal harbour lease") {
		t.Errorf("evidence window misses the match: %.200q", window)
	}

	fetch := h.call(t, "fetch", map[string]any{"id": id})
	if fetch.IsError {
		t.Fatalf("fetch: %s", text(fetch))
	}
	doc := gjson.Parse(text(fetch))
	if doc.Get("id").Str != id || doc.Get("metadata.text_truncated").Type != gjson.True {
		t.Fatalf("fetch document %.500s", text(fetch))
	}
	next := doc.Get("metadata.next")
	if next.Get("tool").Str != "read_record_field" {
		t.Fatalf("no continuation: %s", doc.Get("metadata").Raw)
	}
	offset := int(next.Get("args.offset_chars").Int())
	rest := readToEnd(t, h, next.Get("args").Raw)
	if string([]rune(body)[offset:]) != rest {
		t.Errorf("the continuation from %d does not read the rest of the body (%d chars read)", offset, len([]rune(rest)))
	}
	for _, r := range h.rs.Requests() {
		if strings.HasSuffix(r.Path, "/field-window") && !strings.Contains(r.RawQuery, "connection_id=cin_gmail_work") {
			t.Errorf("a read went out without the connection: %s?%s", r.Path, r.RawQuery)
		}
	}
}

// callArgs calls a tool with arguments given as JSON text, as a model would
// copy them, and returns the text it answers.
func callArgs(t *testing.T, h *harness, tool, args string) string {
	t.Helper()
	var a map[string]any
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		t.Fatalf("args %s: %v", args, err)
	}
	res := h.call(t, tool, a)
	if res.IsError {
		t.Fatalf("%s %s: %s", tool, args, text(res))
	}
	return text(res)
}

var nextConnection = regexp.MustCompile(`next: call again with connection_id set to one of "([^"]+)"`)

// A legacy id on a record two connections hold: the RS's typed 409 comes
// through with the candidates, and the id with one of them succeeds.
func TestJourneyLegacyID(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	for _, step := range []struct {
		tool string
		args map[string]any
	}{
		{"fetch", map[string]any{"id": "labels:INBOX"}},
		{"read_record_field", map[string]any{"id": "labels:INBOX", "field_path": "name"}},
	} {
		res := h.call(t, step.tool, step.args)
		if !res.IsError || !strings.HasPrefix(text(res), "error code=ambiguous_connection http_status=409") ||
			!strings.Contains(text(res), "available_connections: {connection_id:cin_gmail_personal") {
			t.Fatalf("%s: %s", step.tool, text(res))
		}
		m := nextConnection.FindStringSubmatch(text(res))
		if m == nil {
			t.Fatalf("%s: no connection to retry with:\n%s", step.tool, text(res))
		}
		step.args["connection_id"] = m[1]
		res = h.call(t, step.tool, step.args)
		if res.IsError || !strings.Contains(text(res), "INBOX") {
			t.Errorf("%s with connection_id: %s", step.tool, text(res))
		}
	}
	// A legacy id that one connection holds needs nothing more.
	if res := h.call(t, "read_record_field", map[string]any{"id": "messages:p_msg_002", "field_path": "subject"}); res.IsError {
		t.Errorf("unique legacy id: %s", text(res))
	}
}
