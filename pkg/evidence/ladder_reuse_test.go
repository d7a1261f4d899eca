package evidence

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"
)

// nested is an array nested depth levels deep around a string.
func nested(depth int) string {
	return strings.Repeat("[", depth) + `"x"` + strings.Repeat("]", depth)
}

// RecordSetFor builds entries from the trees Preview parsed; the entries must
// be the ones it builds by reading the records again (which it does when the
// preview is of another scope or absent).
func TestRecordSetForReusesPreview(t *testing.T) {
	var wide []string
	for i := range 7 {
		wide = append(wide, wideRecord(i, "cin_a"))
	}
	wide[2] = `{"object":"record","stream":"notes","data":{"title":"no id"}}`
	noID := `{"object":"record","stream":"notes","data":{"title":"no id"}}`
	// Two of the first five records have no id, so the ladder's fourth and
	// fifth entries are records the preview did not show.
	holes := []string{wideRecord(0, "cin_a"), noID, noID, wideRecord(3, "cin_a"), wideRecord(4, "cin_a"), wideRecord(5, "cin_a"), wideRecord(6, "cin_a")}
	for _, tt := range []struct {
		name string
		body []byte
		// fromPreview: the ladder is built without reading the body again.
		fromPreview bool
	}{
		{"fixture", fixture(t, "records-messages-limit3"), true},
		{"blob fixture", []byte(`{"data":[` + string(fixture(t, "record-attachments-with-blob")) + `]}`), true},
		{"more records than entries, one without id", page(wide, ""), false},
		{"more records than entries", page(append(wide[:2:2], wide[3:]...), ""), true},
		{"entries from records after the preview", page(holes, ""), false},
		{"records without id after the preview", page(append(holes[:5:5], noID, noID), ""), true},
		{"blob-shaped data", page([]string{`{"id":"b1","stream":"s","data":{"blob_id":"blob_1","mime_type":"text/plain","note":"a note"}}`}, ""), true},
		{"deep field", page([]string{`{"id":"d1","stream":"s","data":{"deep":` + nested(40) + `,"shallow":` + nested(3) + `}}`}, ""), true},
		{"repeated data member", page([]string{`{"id":"r1","stream":"s","data":{"a":"first"},"data":{"b":"second"}}`}, ""), true},
		{"tombstone", page([]string{`{"id":"t1","stream":"s","deleted":true}`}, ""), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			scope := Scope{Stream: "s", ConnectionID: "cin_x"}
			p := Preview(tt.body, PreviewOptions{Label: "l", Scope: scope})
			if len(p.lines) == 0 {
				t.Fatal("the preview kept no parsed lines to reuse")
			}
			if _, ok := recordSetFromPreview(scope, p); ok != tt.fromPreview {
				t.Errorf("ladder built from the preview alone: %v, want %v", ok, tt.fromPreview)
			}
			got := RecordSetFor(tt.body, scope, p)
			want := RecordSetFor(tt.body, scope, PreviewResult{Whole: p.Whole})
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("entries from the preview's trees differ (-reread +reused):\n%s", diff)
			}
			other := Scope{Stream: "s"}
			if diff := cmp.Diff(RecordSet(tt.body, other), RecordSetFor(tt.body, other, PreviewResult{lines: p.lines})); diff != "" {
				t.Errorf("lines of another scope were reused (-want +got):\n%s", diff)
			}
		})
	}
}

// A JSON field's preview is its VisibleJSON, however deep it nests: a tree
// parsed from the record stops two levels sooner below the field.
func TestRecordEntryDeepFieldMatchesVisibleJSON(t *testing.T) {
	for _, depth := range []int{3, 30, 31, 32, 33, 40} {
		rec := gjson.Parse(`{"id":"d1","stream":"s","data":{"deep":` + nested(depth) + `}}`)
		e, ok := RecordEntry(rec, Scope{})
		if !ok || len(e.JSONFields) != 1 {
			t.Fatalf("depth %d: entry %+v, %v", depth, e, ok)
		}
		want, _ := Cut(VisibleJSON(rec.Get("data.deep")), JSONPreviewChars)
		if got := e.JSONFields[0].PreviewText; got != want {
			t.Errorf("depth %d: preview_text %q, want %q", depth, got, want)
		}
	}
}

// FuzzRecordSetFromPreview: for any valid JSON page, the ladder built from
// what Preview read equals the one built by reading every record again, and
// the one pass Preview makes over a record finds the id Identity finds and
// the connection_id gjson's Get finds.
func FuzzRecordSetFromPreview(f *testing.F) {
	f.Add(fixture(f, "records-messages-limit3"), "messages", "")
	f.Add(page([]string{wideRecord(1, "c"), `{"id":"x","connection_id":7,"connection_id":"b","stream":"s"}`, wideRecord(2, "")}, ""), "notes", "cin")
	f.Add([]byte(`{"data":[{"id":"a"},{"id":"b","connection_id":"c2"},{},{"id":"c"},{"id":"d"},{"id":"e"},{"id":"f"},[],"s"]}`), "s", "")
	f.Fuzz(func(t *testing.T, body []byte, stream, conn string) {
		if !gjson.ValidBytes(body) {
			return // the RS client refuses invalid JSON before any tool renders it
		}
		scope := Scope{Stream: stream, ConnectionID: conn}
		readEnvelope(ParseBody(body)).rows.ForEach(func(_, v gjson.Result) bool {
			var c string
			id, ok := identityOf(v, scope, &c)
			wantID, wantOK := Identity(v, scope)
			if id != wantID || ok != wantOK || c != v.Get("connection_id").Str {
				t.Fatalf("one pass over %s: %v %v %q, want %v %v %q", v.Raw, id, ok, c, wantID, wantOK, v.Get("connection_id").Str)
			}
			return true
		})
		p := Preview(body, PreviewOptions{Label: "l", Scope: scope})
		got := RecordSetFor(body, scope, p)
		want := RecordSetFor(body, scope, PreviewResult{Whole: p.Whole})
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("ladder from the preview differs (-reread +reused):\n%s", diff)
		}
	})
}

// fetch parses a record's data once for its text and its ladder entry: the
// entry from that tree must be the one FetchEntryFor builds by parsing the
// record itself (where data sits one level deeper), fields nested near the
// depth bound included.
func FuzzFetchEntryWith(f *testing.F) {
	for _, depth := range []int{3, 30, 31, 32, 33, 40} {
		f.Add([]byte(`{"id":"d1","stream":"s","data":{"deep":`+nested(depth)+`,"obj":{"a":`+nested(depth-2)+`},"t":"text"}}`), "cin_x", 200)
	}
	f.Add(fixture(f, "record-messages-p_msg_002-connection"), "", 100)
	f.Add(fixture(f, "record-attachments-with-blob"), "cin_x", 50)
	f.Add([]byte(`{"id":"b1","stream":"s","data":{"blob_id":"blob_1","mime_type":"text/plain","note":"a note"}}`), "", 20)
	f.Add([]byte(`{"id":"r1","stream":"s","data":{"a":"first"},"data":{"b":"second"}}`), "", 0)
	f.Fuzz(func(t *testing.T, body []byte, conn string, limit int) {
		if !gjson.ValidBytes(body) {
			return // the RS client refuses invalid JSON
		}
		data := gjson.ParseBytes(body).Get("data")
		if !data.IsObject() {
			return // fetch passes a tree only for a data object
		}
		scope := Scope{Stream: "s", ConnectionID: conn}
		p := ParsePayload(data)
		cut := BoundJSON("cin_x/s:r1", data, limit)
		if diff := cmp.Diff(cut, p.BoundJSON("cin_x/s:r1", limit)); diff != "" {
			t.Fatalf("BoundJSON from the parsed payload differs (-parse +parsed):\n%s", diff)
		}
		want, wantOK := FetchEntryFor(body, scope, cut.Whole)
		got, ok := FetchEntryWith(body, scope, cut.Whole, p)
		if ok != wantOK {
			t.Fatalf("ok %v, want %v", ok, wantOK)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("entry from the payload's tree differs (-reparse +reused):\n%s", diff)
		}
	})
}
