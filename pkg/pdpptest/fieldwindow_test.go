package pdpptest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// fwText is the field the window tests walk: "a b 🎉 c d é ◌́ f" with a
// precomposed é (one code point) followed by a combining acute accent (its
// own code point), so byte, UTF-16 and code-point offsets all differ.
const fwText = "ab🎉cdé\u0301f"

// fwLong is long multi-byte text for paging.
var fwLong = strings.Repeat("Crème brûlée 🍮 for Zoë; ", 9) + "fin"

// fwManifest declares one stream whose fields cover every JSON type.
const fwManifest = `{
 "connector_id": "https://registry.example.test/connectors/notes", "connector_key": "notes", "display_name": "Notes",
 "streams": [{
  "name": "notes", "semantics": "append", "primary_key": ["id"], "cursor_field": "updated",
  "schema": {"type": "object", "properties": {
   "id": {"type": "string"}, "title": {"type": "string"}, "body": {"type": "string"}, "secret": {"type": "string"},
   "words": {"type": "integer"}, "tags": {"type": "array"}, "meta": {"type": "object"}, "pinned": {"type": "boolean"},
   "gone": {"type": ["string", "null"]}, "updated": {"type": "string", "format": "date-time"},
   "blob_ref": {"type": ["object", "null"]}}},
  "query": {"search": {"lexical_fields": ["title", "body", "secret"], "semantic_fields": ["title", "body"]}}
 }]
}`

// fwGrant builds a grant on the notes stream.
func fwGrant(id, instances, fields, extra string) string {
	return fmt.Sprintf(`{"version": "0.1.0", "grant_id": %q, "client": {"client_id": "notes_app"},
	 "source": {"kind": "connector", "id": "https://registry.example.test/connectors/notes"},
	 "source_declaration": {"version": "manifest:notes@1"},
	 "streams": [{"name": "notes", "instance_ids": %s, "fields": %s %s}]}`, id, instances, fields, extra)
}

const fwFields = `["id", "title", "body", "words", "tags", "meta", "pinned", "gone", "updated", "blob_ref"]`

// fwDataset is two connections of one connector. cin_a holds "n1" (every
// field type), "long", "old" (before the window grant's since) and "shared";
// cin_b holds only "shared", so reading it without connection_id is
// ambiguous. Grants: client (both connections, no secret), window (cin_a,
// from 2026), noblob (blob_ref withheld).
func fwDataset(t testing.TB) *dataset.Dataset {
	t.Helper()
	rec := func(key string, data map[string]any) dataset.Record {
		b, err := json.Marshal(data)
		if err != nil {
			t.Fatal(err)
		}
		return dataset.Record{Key: key, EmittedAt: "2026-03-02T00:00:00.000Z", Data: b}
	}
	ref := func(id, mime string) map[string]any { return map[string]any{"blob_id": id, "mime_type": mime} }
	shared := map[string]any{"id": "shared", "title": "Shared note", "body": "the same on both accounts",
		"updated": "2026-03-01T09:00:00Z", "blob_ref": ref("blob_shared", "image/png")}
	c := &dataset.Connector{
		Key: "notes", SourceID: "https://registry.example.test/connectors/notes", DisplayName: "Notes",
		Manifest:    json.RawMessage(fwManifest),
		Connections: []dataset.Connection{{ID: "cin_a", DisplayName: "Alpha"}, {ID: "cin_b"}},
		Records: map[string]map[string][]dataset.Record{
			"cin_a": {"notes": {
				rec("n1", map[string]any{"id": "n1", "title": "Café notes", "body": fwText, "secret": "hunter2",
					"words": 42, "tags": []string{"a"}, "meta": map[string]any{"k": 1}, "pinned": true, "gone": nil,
					"updated": "2026-03-01T10:00:00Z", "blob_ref": ref("blob_one", "text/plain; charset=utf-8")}),
				rec("long", map[string]any{"id": "long", "title": "Dessert diary", "body": fwLong, "updated": "2026-03-01T11:00:00Z"}),
				rec("old", map[string]any{"id": "old", "title": "Old note", "body": "from last year",
					"updated": "2025-01-01T00:00:00Z", "blob_ref": ref("blob_old", "application/pdf")}),
				rec("shared", shared),
			}},
			"cin_b": {"notes": {rec("shared", shared)}},
		},
	}
	grants := map[string]*dataset.Grant{}
	for name, raw := range map[string]string{
		"client": fwGrant("grt_notes", `["cin_a", "cin_b"]`, fwFields, ""),
		"window": fwGrant("grt_window", `["cin_a"]`, fwFields, `, "time_constraint": {"field": "updated", "since": "2026-01-01T00:00:00Z"}`),
		"noblob": fwGrant("grt_noblob", `["cin_a", "cin_b"]`, `["id", "title", "body", "updated"]`, ""),
	} {
		g, err := dataset.ParseGrant([]byte(raw))
		if err != nil {
			t.Fatalf("grant %s: %v", name, err)
		}
		grants[name] = g
	}
	return &dataset.Dataset{
		Name: "notes", Provider: "Notes Test", SubjectID: "owner_notes", Connectors: []*dataset.Connector{c},
		Blobs: map[string]dataset.Blob{
			"blob_one":    {ID: "blob_one", MIMEType: "text/plain; charset=utf-8", Bytes: []byte("itinerary: BOS → LIS\n")},
			"blob_shared": {ID: "blob_shared", MIMEType: "image/png", Bytes: []byte("\x89PNG\r\n\x1a\nnot really")},
			"blob_old":    {ID: "blob_old", MIMEType: "application/pdf", Bytes: []byte("%PDF-1.7 old")},
			"blob_orphan": {ID: "blob_orphan", MIMEType: "text/plain", Bytes: []byte("nobody points here")},
		},
		Grants: grants,
	}
}

// window fetches a field window of a notes record.
func fwGet(t *testing.T, srv *Server, token, id, query string) answer {
	t.Helper()
	return get(t, srv, token, "/v1/streams/notes/records/"+id+"/field-window?"+query)
}

func TestFieldWindowOffsetMath(t *testing.T) {
	srv := New(t, Options{Dataset: fwDataset(t)})
	client := srv.Token(TokenClient)
	// fwText has 8 code points: a b 🎉 c d é ◌́ f.
	for _, tc := range []struct {
		query             string
		text              string
		start, end, limit int
		complete, more    bool
		next, prev        string // "null" or a number
	}{
		{"", fwText, 0, 8, 4096, true, false, "null", "null"},
		{"limit_chars=8", fwText, 0, 8, 8, true, false, "null", "null"},
		{"limit_chars=7", "ab🎉cdé\u0301", 0, 7, 7, false, true, "7", "null"},
		{"limit_chars=1", "a", 0, 1, 1, false, true, "1", "null"},
		{"offset_chars=2&limit_chars=1", "🎉", 2, 3, 1, false, true, "3", "1"},
		{"offset_chars=5&limit_chars=2", "é\u0301", 5, 7, 2, false, true, "7", "3"},
		{"offset_chars=6&limit_chars=100", "\u0301f", 6, 8, 100, false, false, "null", "0"},
		{"offset_chars=7", "f", 7, 8, 4096, false, false, "null", "0"},
		{"offset_chars=8", "", 8, 8, 4096, false, false, "null", "0"},
		{"offset_chars=99&limit_chars=3", "", 8, 8, 3, false, false, "null", "5"},
		{"offset_chars=0&limit_chars=16384", fwText, 0, 8, 16384, true, false, "null", "null"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			a := fwGet(t, srv, client, "n1", "connection_id=cin_a&field=body&"+tc.query)
			wantOK(t, a)
			w := a.j("window")
			got := fmt.Sprintf("%q %d %d %d %v %v %s %s %d %s %s", w.Get("text").String(), w.Get("start_chars").Int(),
				w.Get("end_chars").Int(), w.Get("limit_chars").Int(), w.Get("complete").Bool(), w.Get("has_more").Bool(),
				w.Get("next_offset_chars").Raw, w.Get("previous_offset_chars").Raw, w.Get("total_chars").Int(),
				w.Get("match_start_chars").Raw, w.Get("match_end_chars").Raw)
			want := fmt.Sprintf("%q %d %d %d %v %v %s %s %d null null", tc.text, tc.start, tc.end, tc.limit,
				tc.complete, tc.more, tc.next, tc.prev, utf8.RuneCountInString(fwText))
			if got != want {
				t.Errorf("window\n\t got %s\n\twant %s", got, want)
			}
		})
	}
}

func TestFieldWindowEnvelope(t *testing.T) {
	srv := New(t, Options{Dataset: fwDataset(t)})
	target := "/v1/streams/notes/records/n1/field-window?connection_id=cin_a&field=title&limit_chars=3"
	a := get(t, srv, srv.Token(TokenClient), target)
	wantOK(t, a)
	for path, want := range map[string]string{
		"object": "field_window", "stream": "notes", "record_id": "n1", "field.path": "title", "field.type": "string",
		"url": "/v1/streams/notes/records/n1/field-window", "links.self": target, "window.text": "Caf",
		"meta.count.kind": "none", "meta.warnings": "[]",
	} {
		if got := a.j(path); got.String() != want && got.Raw != want {
			t.Errorf("%s = %s, want %s", path, got.Raw, want)
		}
	}
	if a.j("links.next").Exists() || a.j("connection_id").Exists() {
		t.Errorf("unexpected keys: %s", a.body)
	}
	// An empty string is a complete, empty window.
	srv.Upsert("cin_a", "notes", dataset.Record{Key: "blank", Data: json.RawMessage(`{"id":"blank","body":""}`)})
	a = fwGet(t, srv, srv.Token(TokenOwner), "blank", "connection_id=cin_a&field=body")
	wantOK(t, a)
	if w := a.j("window"); w.Get("complete").Bool() != true || w.Get("total_chars").Int() != 0 || w.Get("text").String() != "" {
		t.Errorf("empty field window = %s", w.Raw)
	}
}

func TestFieldWindowPagesReassemble(t *testing.T) {
	srv := New(t, Options{Dataset: fwDataset(t)})
	client := srv.Token(TokenClient)
	var b strings.Builder
	offset, pages := "0", 0
	for offset != "null" {
		a := fwGet(t, srv, client, "long", "connection_id=cin_a&field=body&limit_chars=7&offset_chars="+offset)
		wantOK(t, a)
		w := a.j("window")
		if n := utf8.RuneCountInString(w.Get("text").String()); n > 7 {
			t.Fatalf("page of %d code points at offset %s", n, offset)
		}
		if pages > 0 && w.Get("previous_offset_chars").Int() != max(0, w.Get("start_chars").Int()-7) {
			t.Errorf("previous_offset_chars = %s at start %d", w.Get("previous_offset_chars").Raw, w.Get("start_chars").Int())
		}
		b.WriteString(w.Get("text").String())
		offset = w.Get("next_offset_chars").Raw
		if pages++; pages > 1000 {
			t.Fatal("paging does not end")
		}
	}
	if b.String() != fwLong {
		t.Errorf("reassembled text differs:\n got %q\nwant %q", b.String(), fwLong)
	}
	if want := (utf8.RuneCountInString(fwLong) + 6) / 7; pages != want {
		t.Errorf("%d pages, want %d", pages, want)
	}
}

func TestFieldWindowQueryMode(t *testing.T) {
	srv := New(t, Options{Dataset: fwDataset(t)})
	client := srv.Token(TokenClient)
	// fwLong repeats "Crème brûlée 🍮 for Zoë; " (24 code points).
	for _, tc := range []struct {
		name, query              string
		text                     string
		start, matchStart, limit int
	}{
		{"defaults start at the match", "q=Zo%C3%AB", "", 19, 19, 4096},
		{"context sizes the window", "q=%F0%9F%8D%AE&before_chars=2&after_chars=4", "e 🍮 for", 11, 13, 7},
		{"before only", "q=for&before_chars=3", "", 12, 15, 6},
		{"before beyond the start", "q=Cr%C3%A8me&before_chars=50", "", 0, 0, 55},
		{"explicit limit wins", "q=Zo%C3%AB&before_chars=1&after_chars=100&limit_chars=5", " Zoë;", 18, 19, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := fwGet(t, srv, client, "long", "connection_id=cin_a&field=body&"+tc.query)
			wantOK(t, a)
			w := a.j("window")
			q, _ := url.ParseQuery(tc.query)
			qLen := utf8.RuneCountInString(q.Get("q"))
			if w.Get("start_chars").Int() != int64(tc.start) || w.Get("match_start_chars").Int() != int64(tc.matchStart) ||
				w.Get("match_end_chars").Int() != int64(tc.matchStart+qLen) || w.Get("limit_chars").Int() != int64(tc.limit) {
				t.Errorf("window = %s", w.Raw)
			}
			runes := []rune(fwLong)
			if want := string(runes[tc.start:min(tc.start+tc.limit, len(runes))]); w.Get("text").String() != want {
				t.Errorf("text = %q, want %q", w.Get("text").String(), want)
			}
			if tc.text != "" && w.Get("text").String() != tc.text {
				t.Errorf("text = %q, want %q", w.Get("text").String(), tc.text)
			}
		})
	}
	// Matching ignores case, code point by code point, and finds the first
	// occurrence only.
	for _, q := range []string{"zo%C3%AB", "ZO%C3%8B"} {
		a := fwGet(t, srv, client, "long", "connection_id=cin_a&field=body&q="+q)
		wantOK(t, a)
		if w := a.j("window"); w.Get("match_start_chars").Int() != 19 || w.Get("match_end_chars").Int() != 22 {
			t.Errorf("q=%s: window %s, want the match at 19", q, w.Raw)
		}
	}
	wantError(t, fwGet(t, srv, client, "long", "connection_id=cin_a&field=body&q=tiramisu"), http.StatusNotFound, "query_not_found", "q")
}

func TestFieldWindowClamps(t *testing.T) {
	srv := New(t, Options{Dataset: fwDataset(t)})
	client := srv.Token(TokenClient)
	for _, tc := range []struct{ query, requested string }{
		{"limit_chars=20000", "20000"},
		{"limit_chars=99999999999999999999999", "1099511627776"},
		{"q=Zo%C3%AB&before_chars=8192&after_chars=8192", "16387"},
	} {
		a := fwGet(t, srv, client, "long", "connection_id=cin_a&field=body&"+tc.query)
		wantOK(t, a)
		if a.j("window.limit_chars").Int() != fieldWindowMaxLimit {
			t.Errorf("%s: limit_chars = %d", tc.query, a.j("window.limit_chars").Int())
		}
		w := a.j("meta.warnings.0")
		if w.Get("code").String() != "limit_clamped" || w.Get("param").String() != "limit_chars" ||
			w.Get("detail.max_limit").Int() != fieldWindowMaxLimit || w.Get("detail.requested_limit").Raw != tc.requested ||
			w.Get("message").String() == "" {
			t.Errorf("%s: warning = %s", tc.query, w.Raw)
		}
	}
	// The deprecated alias is accepted with a warning.
	a := fwGet(t, srv, client, "n1", "connector_instance_id=cin_a&field=title")
	wantOK(t, a)
	if a.j("meta.warnings.0.code").String() != "deprecated_alias_used" {
		t.Errorf("warnings = %s", a.j("meta.warnings").Raw)
	}
}

func TestFieldWindowErrors(t *testing.T) {
	srv := New(t, Options{Dataset: fwDataset(t)})
	client, owner, windowed := srv.Token(TokenClient), srv.Token(TokenOwner), srv.IssueClientToken("window")
	const n1 = "/v1/streams/notes/records/n1/field-window?connection_id=cin_a&"
	for _, tc := range []struct {
		name, token, target string
		status              int
		code, param         string
	}{
		{"field missing", client, n1 + "limit_chars=3", 400, "invalid_field_path", "field"},
		{"field empty", client, n1 + "field=", 400, "invalid_field_path", "field"},
		{"field repeated", client, n1 + "field=a&field=b", 400, "invalid_field_path", "field"},
		{"field with NUL", client, n1 + "field=bo%00dy", 400, "invalid_field_path", "field"},
		{"field checked before the owner's stream", owner, "/v1/streams/nope/records/n1/field-window?connection_id=cin_a", 400, "invalid_field_path", "field"},
		{"offset not a number", client, n1 + "field=body&offset_chars=ten", 400, "invalid_window", "offset_chars"},
		{"offset negative", client, n1 + "field=body&offset_chars=-1", 400, "invalid_window", "offset_chars"},
		{"offset fractional", client, n1 + "field=body&offset_chars=1.5", 400, "invalid_window", "offset_chars"},
		{"offset empty", client, n1 + "field=body&offset_chars=", 400, "invalid_window", "offset_chars"},
		{"limit zero", client, n1 + "field=body&limit_chars=0", 400, "invalid_window", "limit_chars"},
		{"limit junk", client, n1 + "field=body&limit_chars=lots", 400, "invalid_window", "limit_chars"},
		{"limit repeated", client, n1 + "field=body&limit_chars=1&limit_chars=2", 400, "invalid_window", "limit_chars"},
		{"before without q", client, n1 + "field=body&before_chars=3", 400, "invalid_window", ""},
		{"after without q", client, n1 + "field=body&after_chars=3", 400, "invalid_window", ""},
		{"q with offset", client, n1 + "field=body&q=a&offset_chars=0", 400, "invalid_window", "offset_chars"},
		{"q empty", client, n1 + "field=body&q=", 400, "invalid_window", "q"},
		{"before too large", client, n1 + "field=body&q=a&before_chars=8193", 400, "invalid_window", "before_chars"},
		{"after junk", client, n1 + "field=body&q=a&after_chars=x", 400, "invalid_window", "after_chars"},
		{"selector checked before the field grant", client, n1 + "field=secret&limit_chars=0", 400, "invalid_window", "limit_chars"},
		{"field outside the grant", client, n1 + "field=secret", 403, "field_not_granted", "field"},
		{"field grant checked before the record", client, "/v1/streams/notes/records/nope/field-window?connection_id=cin_a&field=secret", 403, "field_not_granted", "field"},
		{"client stream outside the grant", client, "/v1/streams/other/records/n1/field-window?field=body", 401, "context.stream_not_allowed", ""},
		{"client connection outside the grant", windowed, "/v1/streams/notes/records/shared/field-window?connection_id=cin_b&field=body", 401, "context.instance_mismatch", ""},
		{"owner undeclared stream", owner, "/v1/streams/other/records/n1/field-window?connection_id=cin_a&field=body", 404, "stream_not_declared", ""},
		{"owner unknown connection", owner, "/v1/streams/notes/records/n1/field-window?connection_id=cin_zzz&field=body", 404, "connection_not_found", "connection_id"},
		{"owner without source", owner, "/v1/streams/notes/records/n1/field-window?field=body", 400, "invalid_request", "connector_id"},
		{"record missing", client, "/v1/streams/notes/records/nope/field-window?connection_id=cin_a&field=body", 404, "not_found", ""},
		{"record outside the time window", windowed, "/v1/streams/notes/records/old/field-window?field=body", 404, "not_found", ""},
		{"field absent", client, "/v1/streams/notes/records/long/field-window?connection_id=cin_a&field=words", 404, "field_not_found", "field"},
		{"number", client, n1 + "field=words", 422, "field_not_text", "field"},
		{"array", client, n1 + "field=tags", 422, "field_not_text", "field"},
		{"object", client, n1 + "field=meta", 422, "field_not_text", "field"},
		{"boolean", client, n1 + "field=pinned", 422, "field_not_text", "field"},
		{"null", client, n1 + "field=gone", 422, "field_not_text", "field"},
		{"blob_ref", client, n1 + "field=blob_ref", 422, "field_not_text", "field"},
		{"record under two connections", client, "/v1/streams/notes/records/shared/field-window?field=body", 409, "ambiguous_connection", ""},
		{"q not found", client, n1 + "field=body&q=zz", 404, "query_not_found", "q"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, get(t, srv, tc.token, tc.target), tc.status, tc.code, tc.param)
		})
	}
	// The type of a non-text field is named, and the ambiguity says how to retry.
	if msg := get(t, srv, client, n1+"field=tags").j("error.message").String(); !strings.Contains(msg, "array") {
		t.Errorf("field_not_text message = %q", msg)
	}
	a := get(t, srv, client, "/v1/streams/notes/records/shared/field-window?field=body")
	if got := a.j("error.available_connections.#.connection_id").Raw; got != `["cin_a","cin_b"]` || a.j("error.retry_with").String() != "connection_id" {
		t.Errorf("ambiguity = %s", a.body)
	}
	wantOK(t, get(t, srv, client, "/v1/streams/notes/records/shared/field-window?field=body&connection_id=cin_b"))
	// A record inside the grant's window reads without connection_id: one connection.
	wantOK(t, get(t, srv, windowed, "/v1/streams/notes/records/n1/field-window?field=title"))
}

// TestFieldWindowGmail reads the captured corpus: the message body the
// capture reads, a window that ends exactly at the last character, and a
// label present under both connections.
func TestFieldWindowGmail(t *testing.T) {
	srv := New(t, Options{})
	client := srv.Token(TokenClient)
	base := "/v1/streams/message_bodies/records/p_msg_002_body/field-window?field=body_text&connection_id=cin_gmail_personal"
	a := get(t, srv, client, base+"&offset_chars=60&limit_chars=67")
	wantOK(t, a)
	if w := a.j("window"); w.Get("end_chars").Int() != 127 || w.Get("has_more").Bool() || w.Get("complete").Bool() ||
		w.Get("previous_offset_chars").Int() != 0 || !strings.HasSuffix(w.Get("text").String(), "one checked bag.") {
		t.Errorf("last window = %s", w.Raw)
	}
	a = get(t, srv, client, base+"&q=Lisbon&before_chars=10&after_chars=1")
	wantOK(t, a)
	if got := a.j("window.text").String(); got != "Boston to Lisbon." {
		t.Errorf("query window = %q", got)
	}
	wantError(t, get(t, srv, client, "/v1/streams/labels/records/INBOX/field-window?field=name"), 409, "ambiguous_connection", "")
}

// FuzzWindowSelector: any query string either fails with invalid_window or
// yields a window within the bounds, and the window is always the text's
// code points [start, end).
func FuzzWindowSelector(f *testing.F) {
	for _, s := range []string{"offset_chars=3&limit_chars=2", "q=b&before_chars=1&after_chars=1", "limit_chars=99999",
		"q=🎉&before_chars=8192", "offset_chars=-1", "before_chars=2", "q=&limit_chars=0", "offset_chars=18446744073709551616"} {
		f.Add(s, fwText)
	}
	f.Fuzz(func(t *testing.T, raw, text string) {
		sel, aerr := parseWindowSelector(parseQuery(raw))
		if aerr != nil {
			if aerr.code != "invalid_window" || aerr.status != http.StatusBadRequest {
				t.Fatalf("%q: error %v", raw, aerr)
			}
			return
		}
		if sel.limit < 1 || sel.limit > fieldWindowMaxLimit || sel.before > fieldWindowMaxContext || sel.after > fieldWindowMaxContext || sel.offset < 0 {
			t.Fatalf("%q: selector out of bounds: %+v", raw, sel)
		}
		win, aerr := sel.window(text, "f")
		if aerr != nil {
			if aerr.code != "query_not_found" || strings.Contains(text, sel.q) ||
				strings.Contains(strings.ToLower(text), strings.ToLower(sel.q)) && utf8.ValidString(text) && utf8.ValidString(sel.q) {
				t.Fatalf("%q: %v", raw, aerr)
			}
			return
		}
		b, err := marshal(win)
		if err != nil {
			t.Fatal(err)
		}
		var w struct {
			Text     string `json:"text"`
			Start    int    `json:"start_chars"`
			EndChars int    `json:"end_chars"`
			Total    int    `json:"total_chars"`
			More     bool   `json:"has_more"`
		}
		if err := json.Unmarshal(b, &w); err != nil {
			t.Fatal(err)
		}
		runes := []rune(text)
		if w.Total != len(runes) || w.Start > w.EndChars || w.EndChars > w.Total || w.EndChars-w.Start > sel.limit ||
			w.Text != string(runes[w.Start:w.EndChars]) || w.More != (w.EndChars < w.Total) {
			t.Fatalf("%q over %q: window %s", raw, text, b)
		}
	})
}
