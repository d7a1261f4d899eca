package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/resultid"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

// pathRecorder records the escaped paths the tools ask for; the double only
// sees them decoded.
type pathRecorder struct {
	tools.RS
	mu    sync.Mutex
	paths []string
}

// Get records path, except for the reads of the declared roles.
func (p *pathRecorder) Get(ctx context.Context, path string, q rs.Query) (*rs.Response, error) {
	if !isRolesRead(path, q.Encode()) {
		p.mu.Lock()
		p.paths = append(p.paths, path)
		p.mu.Unlock()
	}
	return p.RS.Get(ctx, path, q)
}

func TestFetchForwarding(t *testing.T) {
	handle := func(conn, stream, rec string) string {
		id, err := resultid.New(conn, stream, rec)
		if err != nil {
			t.Fatal(err)
		}
		return id.Handle()
	}
	for _, tc := range []struct {
		name string
		kind pdpptest.TokenKind
		args map[string]any
		want []string
	}{
		{"self-contained id", "", map[string]any{"id": "cin_gmail_personal/messages:p_msg_003"},
			[]string{"/v1/streams/messages/records/p_msg_003?connection_id=cin_gmail_personal"}},
		{"same connection twice", "", map[string]any{"id": "cin_gmail_personal/messages:p_msg_003", "connection_id": "cin_gmail_personal"},
			[]string{"/v1/streams/messages/records/p_msg_003?connection_id=cin_gmail_personal"}},
		{"legacy id", "", map[string]any{"id": "messages:p_msg_003"}, []string{"/v1/streams/messages/records/p_msg_003"}},
		{"legacy id scoped", "", map[string]any{"id": "labels:INBOX", "connection_id": "cin_gmail_work"},
			[]string{"/v1/streams/labels/records/INBOX?connection_id=cin_gmail_work"}},
		{"record handle", "", map[string]any{"id": handle("cin_gmail_work", "labels", "INBOX")},
			[]string{"/v1/streams/labels/records/INBOX?connection_id=cin_gmail_work"}},
		{"URI-encoded id", "", map[string]any{"id": "pdpp://record/cin_gmail_work%2Flabels%3AINBOX"},
			[]string{"/v1/streams/labels/records/INBOX?connection_id=cin_gmail_work"}},
		{"fields", "", map[string]any{"id": "cin_gmail_work/messages:w_msg_004", "fields": []string{"id", "subject"}},
			[]string{"/v1/streams/messages/records/w_msg_004?fields=id&fields=subject&connection_id=cin_gmail_work"}},
		{"expand", pdpptest.TokenOwner, map[string]any{"id": "cin_gmail_personal/messages:p_msg_002", "expand": []string{"attachments"}, "expand_limit": map[string]any{"attachments": 2}},
			[]string{"/v1/schema?view=compact&stream=messages&connection_id=cin_gmail_personal",
				"/v1/streams/messages/records/p_msg_002?expand=attachments&connection_id=cin_gmail_personal&expand_limit[attachments]=2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{kind: tc.kind})
			res := h.call(t, "fetch", tc.args)
			if res.IsError && tc.name != "legacy id" {
				t.Fatal(text(res))
			}
			var got []string
			for _, r := range h.toolRequests(t) {
				got = append(got, r.String())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("RS requests %v, want %v", got, tc.want)
			}
		})
	}
}

// Record keys are single path segments however they are spelled.
func TestFetchEscapesPathSegments(t *testing.T) {
	rec := &pathRecorder{}
	h := newHarness(t, harnessOptions{rs: func(s *pdpptest.Server) tools.RS {
		rec.RS = rsClient(t, s.URL(), func() string { return s.Token(pdpptest.TokenClient) }, rs.Options{})
		return rec
	}})
	slashKey, _ := resultid.New("cin_gmail_work", "messages", "https://x.example/a?b#c")
	for _, id := range []string{"cin_gmail_work/messages:john..doe", "cin_gmail_work/messages:a b%2F", slashKey.String()} {
		h.call(t, "fetch", map[string]any{"id": id})
	}
	want := []string{
		"/v1/streams/messages/records/john..doe",
		"/v1/streams/messages/records/a%20b%252F",
		"/v1/streams/messages/records/https:%2F%2Fx.example%2Fa%3Fb%23c",
	}
	if !slices.Equal(rec.paths, want) {
		t.Errorf("paths %q, want %q", rec.paths, want)
	}
}

// Every refusal happens before the RS is asked anything.
func TestFetchRejections(t *testing.T) {
	for _, tc := range []struct {
		name string
		args map[string]any
		code string
		want string
	}{
		{"traversal in the record", map[string]any{"id": "cin/orders:../../etc/passwd"}, "invalid_id", "more than one"},
		{"traversal in the connection", map[string]any{"id": "../cin/orders:o1"}, "invalid_id", "not a valid record id"},
		{"dot-dot connection", map[string]any{"id": "../orders:o1"}, "invalid_id", "path traversal"},
		{"dot-dot record", map[string]any{"id": "cin/orders:.."}, "invalid_id", "path traversal"},
		{"dot record", map[string]any{"id": "orders:."}, "invalid_id", "path traversal"},
		{"backslash", map[string]any{"id": `cin/orders:a\b`}, "invalid_id", `contains "\\"`},
		{"connection only", map[string]any{"id": "cin/"}, "invalid_id", "not a valid record id"},
		{"empty connection", map[string]any{"id": "/orders:o1"}, "invalid_id", "connection_id before the first"},
		{"no record", map[string]any{"id": "cin/orders"}, "invalid_id", `no ":"`},
		{"extra segment", map[string]any{"id": "cin/extra/orders:o1"}, "invalid_id", "more than one"},
		{"no separator", map[string]any{"id": "noseparator"}, "invalid_id", `no ":"`},
		{"empty record", map[string]any{"id": "orders:"}, "invalid_id", "record_id is empty"},
		{"empty stream", map[string]any{"id": ":o1"}, "invalid_id", "stream is empty"},
		{"control character", map[string]any{"id": "orders:o\x001"}, "invalid_id", "control character"},
		{"empty id", map[string]any{"id": ""}, "invalid_arguments", "id must be a non-empty string"},
		{"missing id", map[string]any{"fields": []string{"a"}}, "invalid_arguments", "fetch requires id"},
		{"empty handle", map[string]any{"id": "pdpp://record/"}, "invalid_id", "nothing follows"},
		{"wrong handle kind", map[string]any{"id": "pdpp://record/eyJ2IjoxLCJraW5kIjoiZmllbGQtd2luZG93In0"}, "invalid_id", "wrong kind"},
		{"conflicting connection", map[string]any{"id": "cin_gmail_work/labels:INBOX", "connection_id": "cin_gmail_personal"}, "conflicting_connection_id",
			"id embeds connection_id 'cin_gmail_work' but the connection_id argument is 'cin_gmail_personal'"},
		{"bad connection argument", map[string]any{"id": "labels:INBOX", "connection_id": "a/b"}, "invalid_arguments param=connection_id", `connection_id "a/b" contains '/'`},
		{"comma field", map[string]any{"id": "labels:INBOX", "fields": []string{"a,b"}}, "invalid_arguments", "splits fields on commas"},
		{"expand_limit without expand", map[string]any{"id": "labels:INBOX", "expand_limit": map[string]any{"x": 1}}, "invalid_expand", "not in expand"},
		{"empty expand_limit", map[string]any{"id": "labels:INBOX", "expand": []string{"x"}, "expand_limit": map[string]any{}}, "invalid_expand", "at least one relation"},
		{"unknown argument", map[string]any{"id": "labels:INBOX", "view": "full"}, "invalid_arguments", `does not accept "view"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{})
			res := h.call(t, "fetch", tc.args)
			if !res.IsError || !strings.HasPrefix(text(res), "error code="+tc.code) || !strings.Contains(text(res), tc.want) {
				t.Errorf("want %s with %q, got:\n%s", tc.code, tc.want, text(res))
			}
			if n := len(h.rs.Requests()); n != 0 {
				t.Errorf("%d RS requests", n)
			}
		})
	}
}

// fetchDocument returns the document a fetch result carries, checking the
// contract: structuredContent is exactly {id, title, text, url, metadata} and
// content[] mirrors it as JSON text.
func fetchDocument(t *testing.T, h *harness, args map[string]any) gjson.Result {
	t.Helper()
	res := h.call(t, "fetch", args)
	if res.IsError {
		t.Fatal(text(res))
	}
	sc := gjson.Get(h.wire.last(), "result.structuredContent")
	var keys []string
	sc.ForEach(func(k, _ gjson.Result) bool { keys = append(keys, k.Str); return true })
	if !slices.Equal(keys, []string{"id", "title", "text", "url", "metadata"}) {
		t.Errorf("structuredContent keys %v", keys)
	}
	if !sameJSON(t, text(res), sc.Raw) {
		t.Errorf("content[] is not the JSON of structuredContent")
	}
	return gjson.Parse(text(res))
}

func TestFetchDocument(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	// The gmail client grant declares no title role: the title names source,
	// stream and time, never a guess from field names (TestTitlesUseDeclaredRoles
	// has declared ones).
	doc := fetchDocument(t, h, map[string]any{"id": "cin_gmail_personal/messages:p_msg_003"})
	m := doc.Get("metadata")
	for k, want := range map[string]string{
		"id": "cin_gmail_personal/messages:p_msg_003", "title": "Personal Gmail / messages / 2026-01-17T11:14:00.000Z",
		"url":                    h.rs.URL() + "/v1/streams/messages/records/p_msg_003?connection_id=cin_gmail_personal",
		"metadata.stream":        "messages",
		"metadata.record_id":     "p_msg_003",
		"metadata.connection_id": "cin_gmail_personal",
		"metadata.connector_key": "gmail", // the short key, not the registry URI
		"metadata.display_name":  "Personal Gmail",
	} {
		if got := doc.Get(k).Str; got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	// No text-like field: the text is compact JSON of the record's fields.
	txt := doc.Get("text").Str
	if !strings.HasPrefix(txt, `{"bcc":[],"cc":[],"date":"2026-01-17T11:14:00.000Z",`) || strings.Contains(txt, "\n") || !json.Valid([]byte(txt)) {
		t.Errorf("text %q", txt)
	}
	if m.Get("text_field").Exists() || m.Get("text_truncated").Type != gjson.False || m.Get("text_chars").Int() != int64(len([]rune(txt))) {
		t.Errorf("metadata %s", m.Raw)
	}
	// Every field is in the text whole: no ladder.
	if l := m.Get("content_ladder"); l.Exists() {
		t.Errorf("ladder without entries %s", l.Raw)
	}

	// A legacy id with connection_id echoes the id; continuations name the
	// connection.
	doc = fetchDocument(t, h, map[string]any{"id": "labels:INBOX", "connection_id": "cin_gmail_work"})
	if doc.Get("id").Str != "labels:INBOX" || doc.Get("metadata.connection_id").Str != "cin_gmail_work" || doc.Get("title").Str != "Work Gmail / labels / 2026-01-05T00:00:00.000Z" {
		t.Errorf("legacy document %s", doc.Raw)
	}
}

// fields projects before rendering: an unrequested field is nowhere in the
// answer.
func TestFetchProjection(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	doc := fetchDocument(t, h, map[string]any{"id": "cin_gmail_personal/messages:p_msg_003", "fields": []string{"subject", "received_at"}})
	wire := h.wire.last()
	for _, hidden := range []string{"bookings@lisbonair.example", "Lisbon Air", "Greenleaf", "from_email", "snippet", "p_thr_003"} {
		if strings.Contains(wire, hidden) {
			t.Errorf("unrequested %q appears in the answer", hidden)
		}
	}
	var keys []string
	gjson.Parse(doc.Get("text").Str).ForEach(func(k, _ gjson.Result) bool { keys = append(keys, k.Str); return true })
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"received_at", "subject"}) || !strings.Contains(doc.Get("text").Str, `"subject":"Receipt for your order #55120"`) {
		t.Errorf("text %q", doc.Get("text").Str)
	}
	if doc.Get("metadata.connection_id").Str != "cin_gmail_personal" || doc.Get("metadata.stream").Str != "messages" {
		t.Errorf("source identity lost: %s", doc.Get("metadata").Raw)
	}
}

// A text, content, body or summary field is the text; the other fields are a
// fetch away.
func TestFetchTextField(t *testing.T) {
	h := newHarness(t, harnessOptions{demo: true})
	page := h.call(t, "query_records", map[string]any{"stream": "chat_messages", "limit": 1})
	id := gjson.Get(h.wire.last(), "result.structuredContent.content_ladder.records.0.id").Str
	rec := gjson.Get(h.rawData(t), "data.0.data")
	if page.IsError || id == "" || rec.Get("text").Str == "" {
		t.Fatalf("no chat message: %s", text(page))
	}
	doc := fetchDocument(t, h, map[string]any{"id": id})
	m := doc.Get("metadata")
	if doc.Get("text").Str != rec.Get("text").Str || m.Get("text_field").Str != "text" || m.Get("connector_key").Str != "chat" {
		t.Errorf("document %s", doc.Raw)
	}
	more := m.Get("more_fields")
	if more.Get("tool").Str != "fetch" || more.Get("args.id").Str != id || slices.Contains(stringsOf(more.Get("args.fields")), "text") ||
		!slices.Contains(stringsOf(more.Get("args.fields")), "author_name") {
		t.Errorf("more_fields %s", more.Raw)
	}
	// The other fields, as more_fields says.
	other := fetchDocument(t, h, map[string]any{"id": id, "fields": stringsOf(more.Get("args.fields"))})
	if other.Get("metadata.text_field").Exists() || !strings.Contains(other.Get("text").Str, `"author_name":`) {
		t.Errorf("other fields %s", other.Get("text").Raw)
	}
}

func stringsOf(v gjson.Result) []string {
	var out []string
	v.ForEach(func(_, s gjson.Result) bool { out = append(out, s.Str); return true })
	return out
}

// Once cut, the text says so and the continuation reads exactly the rest.
func TestFetchBoundedText(t *testing.T) {
	h := newHarness(t, harnessOptions{demo: true, fetchTextChars: 2000})
	id := dataset.DemoWorkMailConnection + "/" + dataset.DemoLongStream + ":" + dataset.DemoLongRecordKey
	doc := fetchDocument(t, h, map[string]any{"id": id})
	m := doc.Get("metadata")
	if len([]rune(doc.Get("text").Str)) != 2000 || m.Get("text_truncated").Type != gjson.True || m.Get("shown_chars").Int() != 1999 ||
		m.Get("text_chars").Int() <= 50000 {
		t.Fatalf("metadata %s", m.Raw)
	}
	next := m.Get("next")
	if next.Get("tool").Str != "read_record_field" || next.Get("args.id").Str != id || next.Get("args.field_path").Str != dataset.DemoLongField {
		t.Fatalf("next %s", next.Raw)
	}
	// The text stops inside body_text: its shown part plus the windows from
	// next rebuild the field.
	body := h.direct(t, "/v1/streams/"+dataset.DemoLongStream+"/records/"+dataset.DemoLongRecordKey,
		rs.Query{{Key: "connection_id", Value: dataset.DemoWorkMailConnection}})
	full := gjson.Get(body, "data."+dataset.DemoLongField).Str
	offset := int(next.Get("args.offset_chars").Int())
	var shown string
	_ = json.Unmarshal([]byte(`"`+strings.SplitN(strings.TrimSuffix(doc.Get("text").Str, "…"), `"`+dataset.DemoLongField+`":"`, 2)[1]+`"`), &shown)
	if shown != string([]rune(full)[:offset]) {
		t.Fatalf("next offset %d does not follow the shown text", offset)
	}
	rest := readToEnd(t, h, next.Get("args").Raw)
	if shown+rest != full {
		t.Errorf("shown text and windows do not rebuild %s (%d + %d of %d chars)", dataset.DemoLongField, len([]rune(shown)), len([]rune(rest)), len([]rune(full)))
	}
	if more := m.Get("more_fields.args.fields"); !more.IsArray() || slices.Contains(stringsOf(more), dataset.DemoLongField) {
		t.Errorf("more_fields %s", m.Get("more_fields").Raw)
	}
}

// readToEnd follows read_record_field from args, using only the "next
// read_record_field args=" lines of its text, and returns the windows read.
func readToEnd(t *testing.T, h *harness, args string) string {
	t.Helper()
	var out strings.Builder
	for i := 0; args != ""; i++ {
		if i > 200 {
			t.Fatal("read_record_field does not reach the end")
		}
		var a map[string]any
		if err := json.Unmarshal([]byte(args), &a); err != nil {
			t.Fatal(err)
		}
		res := h.call(t, "read_record_field", a)
		if res.IsError {
			t.Fatalf("read_record_field %s: %s", args, text(res))
		}
		head, window := splitWindow(t, text(res))
		out.WriteString(window)
		args = ""
		for _, l := range head {
			if v, ok := strings.CutPrefix(l, "next read_record_field args="); ok {
				args = v
			}
		}
	}
	return out.String()
}

// splitWindow splits read_record_field text into its header lines and the
// window text.
func splitWindow(t *testing.T, txt string) ([]string, string) {
	t.Helper()
	lines := strings.SplitN(txt, "\n", 8)
	if !strings.HasPrefix(lines[0], "record=") {
		t.Fatalf("not a window: %.200s", txt)
	}
	head := []string{lines[0]}
	i := 1
	for ; i < len(lines)-1; i++ {
		l := lines[i]
		if strings.HasPrefix(l, "next read_record_field args=") || strings.HasPrefix(l, "previous read_record_field args=") ||
			strings.HasPrefix(l, "warning code=") || strings.HasPrefix(l, "the field is not text:") ||
			strings.HasPrefix(l, "the field ends here:") || l == "this window holds the whole field" {
			head = append(head, l)
			continue
		}
		break
	}
	return head, strings.Join(lines[i:], "\n")
}

func TestFetchRSErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args map[string]any
		want []string
	}{
		{"unknown record", map[string]any{"id": "cin_gmail_work/messages:nope"}, []string{"error code=not_found http_status=404"}},
		{"ambiguous legacy id", map[string]any{"id": "labels:INBOX"}, []string{"error code=ambiguous_connection http_status=409", "retry_with=connection_id",
			`next: call again with connection_id set to one of "cin_gmail_personal", "cin_gmail_work"`}},
		{"client expand", map[string]any{"id": "cin_gmail_personal/messages:p_msg_002", "expand": []string{"attachments"}},
			[]string{"error code=invalid_expand", "advertises no expand_capabilities"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{})
			res := h.call(t, "fetch", tc.args)
			for _, w := range tc.want {
				if !res.IsError || !strings.Contains(text(res), w) {
					t.Errorf("want %q:\n%s", w, text(res))
				}
			}
		})
	}
}

// Binary values reach text only as metadata; a blob's bytes are at its
// fetch_url.
func TestFetchBinary(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	doc := fetchDocument(t, h, map[string]any{"id": "cin_gmail_personal/attachments:p_msg_002_att_1"})
	ladder := doc.Get("metadata.content_ladder")
	blob := ladder.Get("binary_fields.0")
	if blob.Get("field_path").Str != "blob_ref" || !strings.HasPrefix(blob.Get("fetch_url").Str, "/v1/blobs/blob_sha256_") {
		t.Errorf("binary_fields %s", ladder.Get("binary_fields").Raw)
	}
	if !strings.Contains(doc.Get("text").Str, `"blob_ref":{"binary":"blob_ref","blob_id":"blob_sha256_`) {
		t.Errorf("text %s", doc.Get("text").Str)
	}

	// An inline base64 body is metadata in text and withheld from windows.
	b64 := strings.Repeat("iVBORw0KGgoAAAANSUhEUgAA", 40)
	h.rs.Upsert("cin_gmail_work", "message_bodies", dataset.Record{Key: "w_bin_body",
		Data: json.RawMessage(`{"id":"w_bin_body","message_id":"w_msg_001","body_text":"see the attachment","body_html":"` + b64 + `"}`)})
	doc = fetchDocument(t, h, map[string]any{"id": "cin_gmail_work/message_bodies:w_bin_body"})
	if strings.Contains(h.wire.last(), b64[:64]) || !strings.Contains(doc.Get("text").Str, `"body_html":{"binary":"base64","size_chars":960}`) {
		t.Errorf("base64 in the fetch answer: %s", doc.Get("text").Str)
	}
	res := h.call(t, "read_record_field", map[string]any{"id": "cin_gmail_work/message_bodies:w_bin_body", "field_path": "body_html", "limit_chars": 300})
	if res.IsError || strings.Contains(h.wire.last(), b64[:64]) || !strings.Contains(text(res), "window text withheld") {
		t.Errorf("base64 window shown:\n%.400s", text(res))
	}
}

// The document a model reads, pinned (the provider's port differs per run).
func TestFetchDocumentGolden(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	res := h.call(t, "fetch", map[string]any{"id": "cin_gmail_work/messages:w_msg_004", "fields": []string{"subject", "from_name", "received_at", "labels"}})
	if res.IsError {
		t.Fatal(text(res))
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, []byte(strings.ReplaceAll(text(res), h.rs.URL(), "<provider>")), "", "  "); err != nil {
		t.Fatal(err)
	}
	tools.Golden(t, "golden/fetch-projected.json", append(pretty.Bytes(), '\n'))
}

// An owner read with expand lists the related records' fetch ids.
func TestFetchExpandedIDs(t *testing.T) {
	h := newHarness(t, harnessOptions{kind: pdpptest.TokenOwner})
	doc := fetchDocument(t, h, map[string]any{"id": "cin_gmail_personal/messages:p_msg_002", "expand": []string{"attachments", "message_bodies"}})
	exp := doc.Get("metadata.expanded")
	ids := append(stringsOf(exp.Get("attachments.ids")), stringsOf(exp.Get("message_bodies.ids"))...)
	if len(ids) < 2 {
		t.Fatalf("expanded %s", exp.Raw)
	}
	for _, id := range ids {
		if res := h.call(t, "fetch", map[string]any{"id": id}); res.IsError {
			t.Errorf("expanded id %s: %s", id, text(res))
		}
	}
}

// A fetch whose text shows every field whole carries no content_ladder; one
// that leaves fields out lists them.
func TestFetchLadderOnlyWithEntries(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	small := h.call(t, "fetch", map[string]any{"id": "cin_gmail_work/labels:INBOX"})
	if small.IsError {
		t.Fatal(text(small))
	}
	if strings.Contains(text(small), "content_ladder") {
		t.Errorf("a fetch shown whole carries a content ladder:\n%s", text(small))
	}
	big := h.call(t, "fetch", map[string]any{"id": "cin_gmail_personal/attachments:p_msg_002_att_1"})
	if big.IsError || !strings.Contains(text(big), `"content_ladder"`) {
		t.Errorf("a fetch with a binary field lacks its content ladder:\n%s", text(big))
	}
}
