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
	for _, tt := range []struct {
		name string
		body []byte
	}{
		{"fixture", fixture(t, "records-messages-limit3")},
		{"blob fixture", []byte(`{"data":[` + string(fixture(t, "record-attachments-with-blob")) + `]}`)},
		{"more records than entries, one without id", page(wide, "")},
		{"blob-shaped data", page([]string{`{"id":"b1","stream":"s","data":{"blob_id":"blob_1","mime_type":"text/plain","note":"a note"}}`}, "")},
		{"deep field", page([]string{`{"id":"d1","stream":"s","data":{"deep":` + nested(40) + `,"shallow":` + nested(3) + `}}`}, "")},
		{"repeated data member", page([]string{`{"id":"r1","stream":"s","data":{"a":"first"},"data":{"b":"second"}}`}, "")},
		{"tombstone", page([]string{`{"id":"t1","stream":"s","deleted":true}`}, "")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			scope := Scope{Stream: "s", ConnectionID: "cin_x"}
			p := Preview(tt.body, PreviewOptions{Label: "l", Scope: scope})
			if len(p.lines) == 0 {
				t.Fatal("the preview kept no parsed lines to reuse")
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
