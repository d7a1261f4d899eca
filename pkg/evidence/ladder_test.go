package evidence

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/resultid"
)

// checkArgs asserts every read in e names a real tool with arguments that
// parse: the id back to the entry's identity, and field names of the record.
func checkArgs(t *testing.T, e Entry, recordFields map[string]bool) {
	t.Helper()
	id, err := resultid.Parse(e.ID)
	if err != nil {
		t.Fatalf("entry id %q does not parse: %v", e.ID, err)
	}
	if id.Stream() != e.Stream || id.RecordID() != e.RecordID || id.ConnectionID() != string(e.ConnectionID) {
		t.Errorf("entry id %q disagrees with its parts %q %q %q", e.ID, e.ConnectionID, e.Stream, e.RecordID)
	}
	check := func(r Read, field string) {
		if r.Args.ID != e.ID {
			t.Errorf("read of %s uses id %q, want %q", field, r.Args.ID, e.ID)
		}
		if recordFields != nil && !recordFields[field] {
			t.Errorf("ladder names %q, which is not a field of the record", field)
		}
		if !FieldPathOK(field) {
			t.Errorf("ladder names %q, which no tool argument can carry", field)
		}
	}
	for _, w := range e.FieldWindows {
		a := w.Read.Args
		fromStart := a.OffsetChars != nil && *a.OffsetChars == 0 && a.LimitChars == WindowChars && a.Q == ""
		aroundMatch := a.OffsetChars == nil && a.LimitChars == 0 && a.Q != "" && strings.Contains(w.PreviewText, "<mark>"+a.Q+"</mark>") &&
			*a.BeforeChars == MatchContextChars && *a.AfterChars == MatchContextChars
		if w.Read.Tool != ToolReadRecordField || a.FieldPath != w.FieldPath || !(fromStart || aroundMatch) {
			t.Errorf("field window %s read = %+v", w.FieldPath, w.Read)
		}
		check(w.Read, w.FieldPath)
	}
	for _, j := range e.JSONFields {
		if j.Read.Tool != ToolFetch || len(j.Read.Args.Fields) != 1 || j.Read.Args.Fields[0] != j.FieldPath {
			t.Errorf("json field %s read = %+v", j.FieldPath, j.Read)
		}
		check(j.Read, j.FieldPath)
	}
}

func dataFields(rec gjson.Result) map[string]bool {
	m := map[string]bool{}
	rec.Get("data").ForEach(func(k, _ gjson.Result) bool {
		m[k.Str] = true
		return true
	})
	return m
}

func TestRecordSetFixture(t *testing.T) {
	body := fixture(t, "records-messages-limit3")
	l := RecordSet(body, Scope{Stream: "messages"})
	if l.Kind != KindRecordSet || l.ReadTool != ToolReadRecordField {
		t.Errorf("kind %q tool %q", l.Kind, l.ReadTool)
	}
	if len(l.Records) != LadderRecords || l.MoreRecords != 1 || len(l.Notes) != 1 {
		t.Fatalf("%d entries, more %d, notes %q", len(l.Records), l.MoreRecords, l.Notes)
	}
	rows := fixtureRows(t, "records-messages-limit3")
	for i, e := range l.Records {
		checkArgs(t, e, dataFields(rows[i]))
	}
	e := l.Records[0]
	if e.ID != "cin_gmail_personal/messages:p_msg_008" {
		t.Errorf("id = %q", e.ID)
	}
	var texts []string
	for _, w := range e.FieldWindows {
		texts = append(texts, fmt.Sprintf("%s:%d", w.FieldPath, *w.SizeChars))
	}
	// the five longest text fields, in authored order; id is identity, not content
	if got, want := strings.Join(texts, " "), "date:24 from_email:26 message_id:24 received_at:24 snippet:76"; got != want {
		t.Errorf("field windows = %s, want %s", got, want)
	}
	var jsons []string
	for _, j := range e.JSONFields {
		jsons = append(jsons, j.FieldPath+"="+j.PreviewText)
	}
	// empty arrays carry nothing to read and are left out
	if got, want := strings.Join(jsons, " "), `labels=["INBOX","CATEGORY_PERSONAL"] to=["alex.rivera@gmail.example"]`; got != want {
		t.Errorf("json fields = %s, want %s", got, want)
	}
	if e.MoreFields != 3 || len(e.Notes) != 1 {
		t.Errorf("more_fields %d notes %q; want 3 (from_name, subject, thread_id)", e.MoreFields, e.Notes)
	}
}

func TestRecordEntryIdentity(t *testing.T) {
	tests := []struct {
		name, rec string
		scope     Scope
		id        string
		conn      string
		note      bool
		ok        bool
	}{
		// anchor bug 6: the wrapper's id is the record key even when data has no id
		{"record-level id without data.id", `{"object":"record","id":"k1","stream":"s","data":{"body":"x"},"connection_id":"c"}`, Scope{}, "c/s:k1", "c", false, true},
		{"record-level id beats data.id", `{"object":"record","id":"k1","stream":"s","data":{"id":"other","body":"x"},"connection_id":"c"}`, Scope{}, "c/s:k1", "c", false, true},
		{"connection from scope", `{"object":"record","id":"k1","data":{"body":"x"}}`, Scope{Stream: "s", ConnectionID: "c"}, "c/s:k1", "c", false, true},
		{"record connection wins over scope", `{"object":"record","id":"k1","stream":"s","data":{},"connection_id":"c1"}`, Scope{ConnectionID: "c2"}, "c1/s:k1", "c1", false, true},
		{"deprecated alias only", `{"object":"record","id":"k1","stream":"s","data":{},"connector_instance_id":"c"}`, Scope{}, "c/s:k1", "c", false, true},
		{"unknown connection is said", `{"object":"record","id":"k1","stream":"s","data":{"body":"x"}}`, Scope{}, "s:k1", "", true, true},
		{"key with slash gets a handle", `{"object":"record","id":"a/b","stream":"s","data":{"body":"x"},"connection_id":"c"}`, Scope{},
			"pdpp://record/eyJ2IjoxLCJraW5kIjoicmVjb3JkIiwiY29ubmVjdGlvbl9pZCI6ImMiLCJzdHJlYW0iOiJzIiwicmVjb3JkX2lkIjoiYS9iIn0", "c", false, true},
		{"no stream", `{"object":"record","id":"k1","data":{}}`, Scope{}, "", "", false, false},
		{"no key", `{"object":"record","stream":"s","data":{"id":"k1"}}`, Scope{}, "", "", false, false},
		{"traversal key", `{"object":"record","id":"..","stream":"s","data":{}}`, Scope{}, "", "", false, false},
		{"connection that cannot be embedded is not dropped", `{"object":"record","id":"k","stream":"s","data":{},"connection_id":"a/b"}`, Scope{}, "", "", false, false},
		{"not an object", `"k1"`, Scope{Stream: "s"}, "", "", false, false},
	}
	for _, tt := range tests {
		e, ok := RecordEntry(gjson.Parse(tt.rec), tt.scope)
		if ok != tt.ok {
			t.Errorf("%s: ok = %v", tt.name, ok)
			continue
		}
		if !ok {
			continue
		}
		if e.ID != tt.id || string(e.ConnectionID) != tt.conn {
			t.Errorf("%s: id %q connection %q, want %q %q", tt.name, e.ID, e.ConnectionID, tt.id, tt.conn)
		}
		hasNote := len(e.Notes) > 0 && strings.Contains(e.Notes[0], "no connection_id is known")
		if hasNote != tt.note {
			t.Errorf("%s: notes %q", tt.name, e.Notes)
		}
		checkArgs(t, e, dataFields(gjson.Parse(tt.rec)))
	}
}

func TestRecordEntryFields(t *testing.T) {
	b64 := strings.Repeat("QUJD", 100)
	rec := `{"object":"record","id":"k","stream":"s","connection_id":"c","data":{` +
		`"id":"k","title":"Hello","body":"` + strings.Repeat("é", 5000) + `","empty":"","none":null,"n":3,"flag":true,` +
		`"author":{"id":"u1","name":"Maya","email":"m@x.example"},"link":{"url":"https://x.example","title":"X"},` +
		`"tags":[],"meta":{},"attachments":[{"name":"a","ref":{"blob_id":"b2","size_bytes":5}}],` +
		`"blob_ref":{"blob_id":"b1","mime_type":"image/png","size_bytes":9,"sha256":"ab","fetch_url":"/v1/blobs/b1"},` +
		`"raw":"` + b64 + `","bad/name":"x","a,b":"y"," padded":"z"}}`
	e, ok := RecordEntry(gjson.Parse(rec), Scope{})
	if !ok {
		t.Fatal("no entry")
	}
	checkArgs(t, e, dataFields(gjson.Parse(rec)))
	got, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "ladder-entry.json", string(got)+"\n")

	// anchor bug 9.1.1: author and link are JSON data, not binary
	var names []string
	for _, j := range e.JSONFields {
		names = append(names, j.FieldPath)
	}
	if strings.Join(names, ",") != "author,link,attachments" {
		t.Errorf("json fields = %v", names)
	}
	names = nil
	for _, b := range e.BinaryFields {
		names = append(names, b.FieldPath)
	}
	if strings.Join(names, ",") != "blob_ref,raw" {
		t.Errorf("binary fields = %v", names)
	}
	if e.FieldWindows[1].FieldPath != "body" || *e.FieldWindows[1].SizeChars != 5000 || e.FieldWindows[1].PreviewStatus != StatusTruncated {
		t.Errorf("body window = %+v", e.FieldWindows[1])
	}
	if e.MoreFields != 3 {
		t.Errorf("more_fields = %d; the three names no argument can carry must be counted", e.MoreFields)
	}
	if strings.Contains(string(got), b64[:40]) {
		t.Error("base64 body reached the ladder")
	}
}

func TestRecordEntryBounds(t *testing.T) {
	var fields []string
	for i := range 9 {
		fields = append(fields, fmt.Sprintf(`"t%d":"%s"`, i, strings.Repeat("x", 10+i%3*50)))
	}
	for i := range 10 {
		fields = append(fields, fmt.Sprintf(`"j%d":[%d]`, i, i))
	}
	for i := range 7 {
		fields = append(fields, fmt.Sprintf(`"b%d":{"blob_id":"b%d","size_bytes":1}`, i, i))
	}
	rec := `{"id":"k","stream":"s","connection_id":"c","data":{` + strings.Join(fields, ",") + `}}`
	e, _ := RecordEntry(gjson.Parse(rec), Scope{})
	if len(e.FieldWindows) != LadderTextFields || len(e.JSONFields) != LadderJSONFields || len(e.BinaryFields) != LadderBinaryFields {
		t.Fatalf("%d/%d/%d entries", len(e.FieldWindows), len(e.JSONFields), len(e.BinaryFields))
	}
	var got []string
	for _, w := range e.FieldWindows {
		got = append(got, w.FieldPath)
	}
	// the longest (t2, t5, t8 at 110; t1, t4 at 60) in authored order
	if strings.Join(got, ",") != "t1,t2,t4,t5,t8" {
		t.Errorf("kept %v", got)
	}
	if e.MoreFields != 4+2+2 {
		t.Errorf("more_fields = %d, want 8", e.MoreFields)
	}
}

func TestRecordEntryTombstone(t *testing.T) {
	e, ok := RecordEntry(gjson.Parse(`{"object":"record","id":"k","stream":"s","deleted":true,"connection_id":"c","emitted_at":"x"}`), Scope{})
	if !ok || len(e.FieldWindows)+len(e.JSONFields)+len(e.BinaryFields) != 0 {
		t.Errorf("tombstone entry %+v; wrapper members are not record fields", e)
	}
}

func TestFetchEntry(t *testing.T) {
	e, ok := FetchEntry(fixture(t, "record-attachments-with-blob"), Scope{})
	if !ok {
		t.Fatal("no entry")
	}
	if e.Kind != KindRecord || e.ReadTool != ToolReadRecordField || e.ID != "cin_gmail_personal/attachments:p_msg_002_att_1" {
		t.Errorf("entry head %q %q %q", e.Kind, e.ReadTool, e.ID)
	}
	if len(e.BinaryFields) != 1 || e.BinaryFields[0].FetchURL != "/v1/blobs/blob_sha256_c514bff25a8680e2bda41ec474006756282def0bcc3690db3cf55dad1c4837e6" ||
		e.BinaryFields[0].SizeBytes == nil || *e.BinaryFields[0].SizeBytes != 108 {
		t.Errorf("binary fields %+v", e.BinaryFields)
	}
	checkArgs(t, e, dataFields(gjson.ParseBytes(fixture(t, "record-attachments-with-blob"))))
	js, _ := json.Marshal(e)
	if !strings.HasPrefix(string(js), `{"kind":"record","read_tool":"read_record_field","id":"cin_gmail_personal/attachments:p_msg_002_att_1","connection_id":"cin_gmail_personal","stream":"attachments","record_id":"p_msg_002_att_1","handle_semantics":"live_lookup","field_windows":[`) {
		t.Errorf("key order: %.300s", js)
	}
}

func TestHitEntryNamesOnlyRecordFields(t *testing.T) {
	for _, name := range []string{"search-lexical", "search-semantic", "search-hybrid"} {
		for _, hit := range fixtureRows(t, name) {
			e, ok := HitEntry(hit, Scope{})
			if !ok {
				t.Fatalf("%s: hit without entry: %s", name, hit.Raw)
			}
			reported := map[string]bool{}
			hit.Get("matched_fields").ForEach(func(_, f gjson.Result) bool { reported[f.Str] = true; return true })
			hit.Get("evidence_excerpts.#.field_path").ForEach(func(_, f gjson.Result) bool { reported[f.Str] = true; return true })
			reported[hit.Get("snippet.field").Str] = true
			checkArgs(t, e, reported)
			if len(e.FieldWindows) == 0 {
				t.Errorf("%s: hit %s has no windows", name, e.ID)
			}
			for _, w := range e.FieldWindows {
				// anchor bug 9.1.2: hit attributes are not record fields
				switch w.FieldPath {
				case "title", "url", "record_key", "display_name", "snippet", "record_url", "connector_id":
					if !reported[w.FieldPath] {
						t.Errorf("%s: ladder names hit attribute %q", name, w.FieldPath)
					}
				}
			}
			if e.ID != hit.Get("connection_id").Str+"/"+hit.Get("stream").Str+":"+hit.Get("record_key").Str {
				t.Errorf("%s: id %q does not embed the hit's connection", name, e.ID)
			}
		}
	}
}

func TestHitEntry(t *testing.T) {
	hit := gjson.Parse(`{"object":"search_result","stream":"messages","record_key":"m1","connection_id":"c",
		"title":"T","url":"https://x.example","display_name":"D",
		"matched_fields":["subject","body_text","subject"],
		"snippet":{"field":"body_text","text":"a <mark>b"},
		"evidence_excerpts":[{"field_path":"subject","preview_text":"<mark>Lisbon</mark> trip","truncated":false,"read":{"field":"subject"}},
			{"preview_text":"x","read":{"field":"notes"}},{"field_path":"bad/name","preview_text":"y"}]}`)
	e, ok := HitEntry(hit, Scope{})
	if !ok {
		t.Fatal("no entry")
	}
	got, _ := json.Marshal(e.FieldWindows)
	want := `[{"field_path":"subject","text_like":true,"handle_semantics":"live_lookup","preview_status":"complete","preview_text":"\u003cmark\u003eLisbon\u003c/mark\u003e trip","read":{"tool":"read_record_field","args":{"id":"c/messages:m1","field_path":"subject","q":"Lisbon","before_chars":200,"after_chars":200}}},` +
		`{"field_path":"notes","text_like":true,"handle_semantics":"live_lookup","preview_status":"truncated","preview_text":"x","read":{"tool":"read_record_field","args":{"id":"c/messages:m1","field_path":"notes","offset_chars":0,"limit_chars":4096}}},` +
		`{"field_path":"body_text","text_like":true,"handle_semantics":"live_lookup","preview_status":"truncated","preview_text":"a \u003cmark\u003eb\u003c/mark\u003e","read":{"tool":"read_record_field","args":{"id":"c/messages:m1","field_path":"body_text","offset_chars":0,"limit_chars":4096}}}]`
	if string(got) != want {
		t.Errorf("windows\n got %s\nwant %s", got, want)
	}
	if e.MoreFields != 1 {
		t.Errorf("more_fields = %d, want 1 (bad/name)", e.MoreFields)
	}
	if _, ok := HitEntry(gjson.Parse(`{"object":"search_result","record_key":"m1"}`), Scope{}); ok {
		t.Error("a hit without a stream has no id")
	}
	legacy, _ := HitEntry(gjson.Parse(`{"object":"search_result","stream":"s","record_key":"m1","matched_fields":["a"]}`), Scope{})
	if legacy.ID != "s:m1" || len(legacy.Notes) == 0 {
		t.Errorf("legacy hit entry %+v", legacy)
	}
	if js, _ := json.Marshal(legacy); !strings.Contains(string(js), `"connection_id":null,`) {
		t.Errorf("an unknown connection must marshal as null: %s", js)
	}
}

func TestSearchLadder(t *testing.T) {
	var hits []Hit
	for _, r := range append(fixtureRows(t, "search-lexical"), gjson.Parse(`{"object":"search_result"}`)) {
		h, _ := ReadHit(r)
		hits = append(hits, h)
	}
	l := SearchLadder(hits, Scope{})
	if l.Kind != KindSearchResults || len(l.Records) != LadderRecords || l.MoreRecords != len(hits)-1-LadderRecords || l.WithoutID != 1 {
		t.Errorf("ladder: kind %q, %d entries, more %d, without id %d", l.Kind, len(l.Records), l.MoreRecords, l.WithoutID)
	}
	if len(l.Notes) != 2 || !strings.Contains(l.Notes[0], "structuredContent.results") {
		t.Errorf("notes %q", l.Notes)
	}
	js, _ := json.Marshal(l)
	if strings.Contains(string(js), `"field_path":"title"`) || strings.Contains(string(js), `"field_path":"url"`) {
		t.Error("search ladder names a hit attribute")
	}
}

func TestFieldPathOK(t *testing.T) {
	for name, want := range map[string]bool{
		"body": true, "body_text": true, "a.b": true, "john..doe": true, "été": true, "a b": true,
		"": false, ".": false, "..": false, "a/b": false, `a\b`: false, "a,b": false, " a": false, "a ": false, "a\x00": false, "\xff": false,
	} {
		if got := FieldPathOK(name); got != want {
			t.Errorf("FieldPathOK(%q) = %v, want %v", name, got, want)
		}
	}
}

// A record_set ladder built with the page's preview lists only what the
// preview did not show whole.
func TestRecordSetFor(t *testing.T) {
	long := strings.Repeat("word ", 400)
	rec := func(key string) string {
		return `{"object":"record","id":"` + key + `","stream":"notes","connection_id":"c","data":{"id":"` + key +
			`","title":"short","body":"` + long + `","tags":["a"],"empty":"","n":1}}`
	}
	body := []byte(`{"object":"list","data":[` + rec("n1") + `,` + rec("n2") + `]}`)
	p := Preview(body, PreviewOptions{Label: "notes"})
	if len(p.Whole) != 2 || !p.Whole[0]["title"] || p.Whole[0]["body"] || !p.Whole[0]["tags"] {
		t.Fatalf("whole %v", p.Whole)
	}
	l := RecordSetFor(body, Scope{}, p)
	for _, e := range l.Records {
		if len(e.FieldWindows) != 1 || e.FieldWindows[0].FieldPath != "body" || len(e.JSONFields) != 0 || e.ShownWhole != 2 {
			t.Errorf("entry %s: windows %+v json %+v shown_whole %d", e.ID, e.FieldWindows, e.JSONFields, e.ShownWhole)
		}
	}
	if !slices.Contains(l.Notes, noteShownWhole) {
		t.Errorf("notes %q", l.Notes)
	}
	// Without a preview, or for a line cut short, every field is listed.
	full := RecordSet(body, Scope{})
	cut := RecordSetFor(body, Scope{}, PreviewResult{Whole: []map[string]bool{nil, {"title": true}}})
	if len(full.Records[0].FieldWindows) != 2 || len(cut.Records[0].FieldWindows) != 2 || len(cut.Records[1].FieldWindows) != 1 {
		t.Errorf("full %+v cut %+v", full.Records[0].FieldWindows, cut.Records)
	}
}

// What a preview reports as shown whole is in its text whole, whatever the
// pressure on the budget (values shortened, entries left out, lines cut).
func TestPreviewWholeIsShown(t *testing.T) {
	wideKey := strings.Repeat("k", 300)
	var wide []string
	for i := range 5 {
		wide = append(wide, fmt.Sprintf(`{"object":"record","id":"r%d","stream":"s","data":{"a":"x","%s1":"%s","%s2":1,"b":[1,2],"c":"tail"}}`,
			i, wideKey, strings.Repeat("v", 40), wideKey))
	}
	pages := map[string][]byte{
		"fixture": fixture(t, "records-messages-limit3"),
		"wide":    []byte(`{"data":[` + strings.Join(wide, ",") + `]}`),
	}
	for name, body := range pages {
		p := Preview(body, PreviewOptions{Label: name})
		lines := strings.Split(p.Text, "\n")[1:]
		rows := readEnvelope(gjson.ParseBytes(body)).rows.Array()
		seen := 0
		for i, whole := range p.Whole {
			for k := range whole {
				seen++
				member := string(jsonw.AppendString(nil, k)) + ":" + VisibleJSON(rows[i].Get("data").Get(gjson.Escape(k)))
				if !strings.Contains(lines[i], member) {
					t.Errorf("%s: record %d: %s reported whole but not in %q", name, i, k, lines[i])
				}
			}
		}
		if seen == 0 {
			t.Errorf("%s: nothing reported whole; the case shows nothing", name)
		}
		t.Logf("%s: truncated=%v, %d members whole", name, p.Truncated, seen)
	}
}
