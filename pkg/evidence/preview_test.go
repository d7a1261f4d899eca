package evidence

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

func TestPreviewGolden(t *testing.T) {
	attachment := `{"object":"list","has_more":false,"data":[` + string(fixture(t, "record-attachments-with-blob")) + `]}`
	tests := []struct {
		name   string
		body   []byte
		label  string
		scope  Scope
		keys   []string
		golden string
	}{
		{"fan-in page without cursor", fixture(t, "records-messages-limit3"), `records from stream "messages"`, Scope{Stream: "messages"}, nil, "preview-limit3.txt"},
		{"fan-in page with declared key fields", fixture(t, "records-messages-limit3"), `records from stream "messages"`, Scope{Stream: "messages"}, []string{"subject", "received_at"}, "preview-limit3-keys.txt"},
		{"exact count", fixture(t, "records-messages-count-exact"), `records from stream "messages"`, Scope{Stream: "messages", ConnectionID: "cin_gmail_personal"}, nil, "preview-count-exact.txt"},
		{"changes session", fixture(t, "records-messages-changes-beginning"), `records from stream "messages"`, Scope{Stream: "messages"}, nil, "preview-changes.txt"},
		{"projected fields", fixture(t, "records-messages-fields"), `records from stream "messages"`, Scope{Stream: "messages"}, nil, "preview-fields.txt"},
		{"owner expand", fixture(t, "owner-records-messages-expand"), `records from stream "messages"`, Scope{Stream: "messages"}, nil, "preview-expand.txt"},
		{"blob attachment", []byte(attachment), `records from stream "attachments"`, Scope{Stream: "attachments"}, nil, "preview-attachment.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Preview(tt.body, PreviewOptions{Label: tt.label, Scope: tt.scope, KeyFields: tt.keys})
			checkPreview(t, res)
			golden(t, tt.golden, res.Text)
		})
	}
}

// checkPreview asserts the invariants every preview keeps.
func checkPreview(t *testing.T, res PreviewResult) {
	t.Helper()
	if len(res.Text) > PreviewBudget {
		t.Errorf("preview is %d bytes, over the %d budget", len(res.Text), PreviewBudget)
	}
	if !utf8.ValidString(res.Text) {
		t.Error("preview is not valid UTF-8")
	}
	lines := strings.Split(res.Text, "\n")
	shown := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "record[") {
			shown++
		}
	}
	if shown != res.Shown {
		t.Errorf("Shown = %d but the text has %d record lines", res.Shown, shown)
	}
	cut := res.ValuesCut > 0 || res.Truncated || res.Shown < res.Total
	last := lines[len(lines)-1]
	if cut != strings.Contains(last, "Next:") {
		t.Errorf("cut=%v (%+v) but the last line is %q", cut, res, last)
	}
	if res.Shown < res.Total && !strings.Contains(last, "more_records="+strconv.Itoa(res.Total-res.Shown)) {
		t.Errorf("footer does not count the %d unshown records: %q", res.Total-res.Shown, last)
	}
	if res.Truncated && !strings.Contains(last, "record_preview_truncated=true") {
		t.Errorf("footer does not flag the truncation: %q", last)
	}
}

// wideRecord is a record with many long fields, a nested array and a long body.
func wideRecord(i int, conn string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"object":"record","id":"r%03d","stream":"notes","data":{"id":"r%03d","title":"Note %d",`, i, i, i)
	for f := range 30 {
		fmt.Fprintf(&b, `"field_%02d":"%s",`, f, strings.Repeat(string(rune('a'+f%26)), 200))
	}
	fmt.Fprintf(&b, `"tags":[%s],"body":"%s"},"emitted_at":"2026-04-01T00:00:00Z"`,
		strings.TrimSuffix(strings.Repeat(`"tag",`, 50), ","), strings.Repeat("lorem ipsum ", 400))
	if conn != "" {
		fmt.Fprintf(&b, `,"connection_id":%q`, conn)
	}
	b.WriteString("}")
	return b.String()
}

func page(records []string, extra string) []byte {
	return []byte(`{"object":"list","has_more":true,"next_cursor":"cur_abc","data":[` + strings.Join(records, ",") + `]` + extra + `}`)
}

func TestPreviewHundredWideRecords(t *testing.T) {
	var recs []string
	for i := range 100 {
		recs = append(recs, wideRecord(i, "cin_a"))
	}
	res := Preview(page(recs, `,"meta":{"count":{"kind":"exact","value":4812},"warnings":[]}`),
		PreviewOptions{Label: `records from stream "notes"`, Scope: Scope{Stream: "notes"}})
	checkPreview(t, res)
	if res.Shown < 3 {
		t.Errorf("only %d records shown; wide values should be cut before records are dropped", res.Shown)
	}
	for i := range res.Shown {
		if !strings.Contains(res.Text, fmt.Sprintf("record[%d] id=cin_a/notes:r%03d ", i, i)) {
			t.Errorf("record %d is shown without its id", i)
		}
	}
	for _, want := range []string{`next_cursor="cur_abc"`, "count=exact:4812", "has_more=true", "values_cut="} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("preview lacks %q:\n%s", want, res.Text)
		}
	}
}

func TestPreviewWideRecordDoesNotStarveOthers(t *testing.T) {
	small := func(i int) string {
		return fmt.Sprintf(`{"object":"record","id":"s%d","stream":"notes","data":{"title":"Short %d","n":%d},"connection_id":"cin_a"}`, i, i, i)
	}
	recs := []string{small(0), wideRecord(1, "cin_a"), small(2), small(3), small(4)}
	res := Preview(page(recs, ""), PreviewOptions{Label: "notes", Scope: Scope{Stream: "notes"}})
	checkPreview(t, res)
	if res.Shown != 5 {
		t.Fatalf("shown %d of 5", res.Shown)
	}
	for _, i := range []int{0, 2, 3, 4} {
		want := fmt.Sprintf(`record[%d] id=cin_a/notes:s%d {"data":{"title":"Short %d","n":%d}}`, i, i, i, i)
		if !strings.Contains(res.Text, want+"\n") {
			t.Errorf("small record %d is not shown whole; want line %q in\n%s", i, want, res.Text)
		}
	}
	if !strings.Contains(res.Text, `record[1] id=cin_a/notes:r001 {"data":{"title":"Note 1",`) {
		t.Errorf("the wide record lost its identity or title:\n%s", res.Text)
	}
	if !regexp.MustCompile(`"field_00":"a+…\[200 chars\]"`).MatchString(res.Text) || !strings.Contains(res.Text, `"…":"+`) {
		t.Errorf("the wide record's cuts are not marked with full lengths and counts:\n%s", res.Text)
	}
}

func TestPreviewHandles(t *testing.T) {
	long := strings.Repeat("c", handleInline+1)
	tests := []struct {
		name, body string
		want       []string
		not        []string
	}{
		{"cursor, changes token and count",
			`{"has_more":true,"next_cursor":"a\"b","next_changes_since":"tok","meta":{"count":{"kind":"exact","value":7}},"data":[]}`,
			[]string{`: 0 record(s) has_more=true next_cursor="a\"b" next_changes_since="tok" count=exact:7`}, nil},
		{"count none is not a handle", `{"data":[],"meta":{"count":{"kind":"none"}}}`, nil, []string{"count="}},
		{"lexical numeric count", `{"data":[],"meta":{"count":37}}`, []string{"count=37"}, nil},
		{"over-long cursor is pointed at, not cut",
			`{"has_more":true,"next_cursor":"` + long + `","data":[]}`,
			[]string{"next_cursor=(301 bytes, too long for this preview: read structuredContent.data.next_cursor)"}, []string{long[:100]}},
		{"fan-in has_more without cursor",
			`{"has_more":true,"data":[],"meta":{"warnings":[{"code":"partial_results"},{"code":"limit_clamped"},{"code":"partial_results"}]}}`,
			[]string{"warnings=partial_results,limit_clamped — ", "pass connection_id to page one connection at a time"}, nil},
		{"has_more false", `{"has_more":false,"data":[{"id":"r","stream":"s"}]}`, []string{"1 record(s) — Showing up to 1:"}, []string{"has_more"}},
		{"bare array body", `[{"id":"r1","stream":"s","data":{"a":1}}]`, []string{"record[0] id=s:r1 {\"data\":{\"a\":1}}"}, nil},
		{"not a list", `{"error":{"code":"x"}}`, []string{"label: 0 record(s)"}, []string{"Showing"}},
	}
	for _, tt := range tests {
		res := Preview([]byte(tt.body), PreviewOptions{Label: "label"})
		checkPreview(t, res)
		for _, w := range tt.want {
			if !strings.Contains(res.Text, w) {
				t.Errorf("%s: text lacks %q:\n%s", tt.name, w, res.Text)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(res.Text, n) {
				t.Errorf("%s: text has %q:\n%s", tt.name, n, res.Text)
			}
		}
	}
}

func TestPreviewIdentity(t *testing.T) {
	tests := []struct {
		name, rec string
		scope     Scope
		want      string
	}{
		{"record-level id, not data.id (anchor bug 6)",
			`{"object":"record","id":"k1","stream":"s","data":{"id":"other","a":1},"connection_id":"cin_a"}`,
			Scope{}, `record[0] id=cin_a/s:k1 {"data":{"id":"other","a":1}}`},
		{"data.id equal to the key is folded",
			`{"object":"record","id":"k1","stream":"s","data":{"id":"k1","a":1},"connection_id":"cin_a","connector_instance_id":"cin_a","display_name":"A"}`,
			Scope{}, `record[0] id=cin_a/s:k1 {"data":{"a":1},"display_name":"A"}`},
		{"legacy without a known connection",
			`{"object":"record","id":"k1","stream":"s","data":{"a":1}}`, Scope{}, `record[0] id=s:k1 {"data":{"a":1}}`},
		{"connection from scope",
			`{"object":"record","id":"k1","data":{"a":1}}`, Scope{Stream: "s", ConnectionID: "cin_b"}, `record[0] id=cin_b/s:k1 {"data":{"a":1}}`},
		{"compound key gets a handle: quotes and brackets would be cut by an extractor",
			`{"object":"record","id":"[\"acct_1\",\"2026-04-01\"]","stream":"balances","data":{"a":1},"connection_id":"c"}`,
			Scope{}, `record[0] id=pdpp://record/eyJ2IjoxLCJraW5kIjoicmVjb3JkIiwiY29ubmVjdGlvbl9pZCI6ImMiLCJzdHJlYW0iOiJiYWxhbmNlcyIsInJlY29yZF9pZCI6IltcImFjY3RfMVwiLFwiMjAyNi0wNC0wMVwiXSJ9 {"data":{"a":1}}`},
		{"key with a slash gets a handle",
			`{"object":"record","id":"https://x.example/p","stream":"pages","data":{"a":1},"connection_id":"c"}`,
			Scope{}, `record[0] id=pdpp://record/eyJ2IjoxLCJraW5kIjoicmVjb3JkIiwiY29ubmVjdGlvbl9pZCI6ImMiLCJzdHJlYW0iOiJwYWdlcyIsInJlY29yZF9pZCI6Imh0dHBzOi8veC5leGFtcGxlL3AifQ {"data":{"a":1}}`},
		{"a differing stream member is kept",
			`{"object":"record","id":"k1","stream":"s","data":{"a":1}}`, Scope{Stream: "t"}, `record[0] id=s:k1 {"data":{"a":1}}`},
		{"no usable id: whole object, no id",
			`{"name":"x","stream":"s"}`, Scope{}, `record[0] {"name":"x","stream":"s"}`},
		{"tombstone", `{"object":"record","id":"k1","stream":"s","deleted":true,"deleted_at":"2026-01-01T00:00:00Z","connection_id":"c"}`,
			Scope{}, `record[0] id=c/s:k1 {"deleted":true,"deleted_at":"2026-01-01T00:00:00Z"}`},
	}
	for _, tt := range tests {
		res := Preview([]byte(`{"data":[`+tt.rec+`]}`), PreviewOptions{Label: "l", Scope: tt.scope})
		checkPreview(t, res)
		lines := strings.Split(res.Text, "\n")
		if len(lines) < 2 || lines[1] != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, lines[1:], tt.want)
		}
	}
}

func TestPreviewBinaryStaysMetadata(t *testing.T) {
	raw := make([]byte, 3000)
	for i := range raw {
		raw[i] = byte(i)
	}
	b64 := base64.StdEncoding.EncodeToString(raw)
	rec := `{"object":"record","id":"a1","stream":"attachments","connection_id":"c","data":{"filename":"x.bin","content":"` + b64 +
		`","blob_ref":{"blob_id":"blob_1","mime_type":"application/octet-stream","size_bytes":3000,"fetch_url":"/v1/blobs/blob_1"},` +
		`"author":{"id":"u1","name":"Maya"},"link":{"url":"https://x.example","title":"X"}}}`
	res := Preview([]byte(`{"data":[`+rec+`]}`), PreviewOptions{Label: "attachments"})
	checkPreview(t, res)
	want := `record[0] id=c/attachments:a1 {"data":{"filename":"x.bin","content":{"binary":"base64","size_chars":4000},` +
		`"blob_ref":{"binary":"blob_ref","blob_id":"blob_1","mime_type":"application/octet-stream","size_bytes":3000,"fetch":"pdpp://blob/c/blob_1"},` +
		`"author":{"id":"u1","name":"Maya"},"link":{"url":"https://x.example","title":"X"}}}`
	if !strings.Contains(res.Text, want) {
		t.Errorf("got\n%s\nwant line\n%s", res.Text, want)
	}
	if strings.Contains(res.Text, b64[:40]) {
		t.Error("base64 body reached the preview")
	}
	if res.BinaryValues != 2 {
		t.Errorf("BinaryValues = %d, want 2", res.BinaryValues)
	}
}

func TestPreviewMultibyte(t *testing.T) {
	var recs []string
	for i := range 20 {
		recs = append(recs, fmt.Sprintf(`{"object":"record","id":"m%d","stream":"chat","data":{"text":"%s","emoji":"%s"},"connection_id":"c"}`,
			i, strings.Repeat("日本語のテキスト", 40), strings.Repeat("😀", 90)))
	}
	res := Preview(page(recs, ""), PreviewOptions{Label: "chat"})
	checkPreview(t, res)
	if res.Shown == 0 {
		t.Fatal("nothing shown")
	}
}

func TestPreviewMaxRecords(t *testing.T) {
	var recs []string
	for i := range 12 {
		recs = append(recs, fmt.Sprintf(`{"id":"r%d","stream":"s","data":{"n":%d}}`, i, i))
	}
	for _, tt := range []struct{ max, shown int }{{0, 5}, {3, 3}, {10, 10}, {500, 12}} {
		res := Preview(page(recs, ""), PreviewOptions{Label: "s", MaxRecords: tt.max})
		checkPreview(t, res)
		if res.Shown != tt.shown || res.Total != 12 {
			t.Errorf("MaxRecords %d: shown %d of %d, want %d of 12", tt.max, res.Shown, res.Total, tt.shown)
		}
	}
}

func TestPreviewAdversarialHeader(t *testing.T) {
	long := strings.Repeat("é", 400)
	var warnings []string
	for i := range 20 {
		warnings = append(warnings, fmt.Sprintf(`{"code":"%s%d"}`, strings.Repeat("w", 60), i))
	}
	body := `{"has_more":true,"next_cursor":"` + strings.Repeat("c", 290) + `","next_changes_since":"` + strings.Repeat("d", 290) +
		`","meta":{"count":{"kind":"` + long + `","value":1e300},"warnings":[` + strings.Join(warnings, ",") + `]},"data":[` +
		wideRecord(1, "cin_"+strings.Repeat("x", 200)) + `,` + wideRecord(2, "") + `]}`
	res := Preview([]byte(body), PreviewOptions{Label: long + "\nrecord[9] forged", Scope: Scope{Stream: "notes"}})
	checkPreview(t, res)
	if strings.Count(res.Text, "\n") != res.Shown+1 {
		t.Errorf("header, %d record lines and footer expected:\n%s", res.Shown, res.Text)
	}
}

// FuzzPreview: never panics, never exceeds the budget, never splits a code
// point, and always says when something was left out.
func FuzzPreview(f *testing.F) {
	f.Add([]byte(`{"data":[{"id":"r","stream":"s","data":{"a":"b"}}],"has_more":true,"next_cursor":"x"}`), "label", "s", "c")
	f.Add(fixture(f, "records-messages-limit3"), `records from stream "messages"`, "messages", "")
	f.Add(page([]string{wideRecord(1, "c"), wideRecord(2, "")}, ""), "notes", "notes", "cin")
	f.Add([]byte(`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["x"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`), "l", "", "")
	f.Fuzz(func(t *testing.T, body []byte, label, stream, conn string) {
		res := Preview(body, PreviewOptions{Label: label, Scope: Scope{Stream: stream, ConnectionID: conn}})
		checkLevelReuse(t, body, PreviewOptions{Label: label, Scope: Scope{Stream: stream, ConnectionID: conn}})
		if len(res.Text) > PreviewBudget {
			t.Fatalf("%d bytes", len(res.Text))
		}
		if utf8.Valid(body) && utf8.ValidString(label) && !utf8.ValidString(res.Text) {
			t.Fatal("split a code point")
		}
		if lines := strings.Count(res.Text, "\n"); lines > res.Shown+1 {
			t.Fatalf("%d line breaks for %d records: a value broke out of its line\n%s", lines, res.Shown, res.Text)
		}
		cut := res.ValuesCut > 0 || res.Truncated || res.Shown < res.Total
		if cut && !strings.Contains(res.Text, "Next:") {
			t.Fatalf("cut without saying so: %+v\n%s", res, res.Text)
		}
	})
}

func BenchmarkPreviewHundredWideRecords(b *testing.B) {
	var recs []string
	for i := range 100 {
		recs = append(recs, wideRecord(i, "cin_a"))
	}
	body := page(recs, "")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		Preview(body, PreviewOptions{Label: "notes", Scope: Scope{Stream: "notes"}})
	}
}

// BenchmarkPreviewScanBaseline is the floor under the benchmark above: one
// gjson pass over the same body, counting records.
func BenchmarkPreviewScanBaseline(b *testing.B) {
	var recs []string
	for i := range 100 {
		recs = append(recs, wideRecord(i, "cin_a"))
	}
	body := page(recs, "")
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		n := 0
		gjson.ParseBytes(body).Get("data").ForEach(func(_, _ gjson.Result) bool { n++; return true })
	}
}

func BenchmarkPreviewFixturePage(b *testing.B) {
	body := fixture(b, "records-messages-limit3")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		Preview(body, PreviewOptions{Label: `records from stream "messages"`, Scope: Scope{Stream: "messages"}})
	}
}

// A record leads with what identifies it: the title-like field, then its
// time, whatever the authored (often alphabetical) order; declared key fields
// replace the guess.
func TestPreviewLeadsWithTitleThenTime(t *testing.T) {
	rec := `{"object":"record","id":"m1","stream":"mail","connection_id":"c","data":{"attachments":0,"cc":"x@example.com","date":"2026-01-02","from":"a@example.com","received_at":"2026-01-02T10:00:00Z","subject":"Quarterly plan"}}`
	for _, tc := range []struct {
		keys []string
		want string
	}{
		{nil, `record[0] id=c/mail:m1 {"data":{"subject":"Quarterly plan","received_at":"2026-01-02T10:00:00Z","attachments":0,`},
		{[]string{"from", "date"}, `record[0] id=c/mail:m1 {"data":{"from":"a@example.com","date":"2026-01-02","attachments":0,`},
	} {
		res := Preview([]byte(`{"data":[`+rec+`]}`), PreviewOptions{Label: "l", KeyFields: tc.keys})
		checkPreview(t, res)
		if lines := strings.Split(res.Text, "\n"); len(lines) < 2 || !strings.HasPrefix(lines[1], tc.want) {
			t.Errorf("keys %v:\n got %q\nwant prefix %q", tc.keys, lines, tc.want)
		}
	}
}

// TestPreviewSpendsOnRolesAndDistinctValues: under a tight budget the
// declared title keeps its words before other strings, and a value that
// repeats another (a date equal to received_at) is dropped first.
func TestPreviewSpendsOnRolesAndDistinctValues(t *testing.T) {
	var rows []string
	for i := range 5 {
		fields := fmt.Sprintf(`"subject":"Library hold ready for pickup: The Overstory %d","received_at":"2026-01-23T12:21:00.000Z","date":"2026-01-23T12:21:00.000Z"`, i)
		for j := range 20 {
			fields += fmt.Sprintf(`,"f%02d":"%s"`, j, strings.Repeat(string(rune('a'+j)), 50))
		}
		rows = append(rows, fmt.Sprintf(`{"object":"record","id":"r%d","stream":"messages","connection_id":"cin_a","data":{%s}}`, i, fields))
	}
	body := `{"object":"list","data":[` + strings.Join(rows, ",") + `]}`
	for _, keys := range [][]string{{"subject", "received_at"}, nil} {
		res := Preview([]byte(body), PreviewOptions{Label: "records", KeyFields: keys})
		lines := strings.Split(res.Text, "\n")
		for i := range 5 {
			line := lines[1+i]
			if !strings.Contains(line, fmt.Sprintf(`"subject":"Library hold ready for pickup: The Overstory %d"`, i)) {
				t.Errorf("keys %v: the title is cut:\n%s", keys, line)
			}
			if !strings.Contains(line, `"received_at":"2026-01-23T12:21:00.000Z"`) || strings.Contains(line, `"date":`) {
				t.Errorf("keys %v: received_at missing or its repeat shown:\n%s", keys, line)
			}
		}
	}
}

// fit sizes the footer of each step with footerSizer instead of writing it:
// the size must be the written footer's length for every combination.
func TestFooterSizer(t *testing.T) {
	for _, h := range []handles{{}, {hasMore: true}, {hasMore: true, cursor: "c", cursorPages: true}, {cursorPages: true}} {
		for _, more := range []int{0, 1, 9, 10, 95} {
			f := footerSizer{h: h, more: more}
			for _, cv := range []int{0, 1, 2, 9, 10, 99, 100, 12345} {
				for _, ce := range []int{0, 1, 7} {
					n := counts{cutValues: cv, cutEntries: ce, binary: cv % 3}
					if got, want := f.size(n), len(footer(h, more, n, false)); got != want {
						t.Fatalf("%+v more=%d %+v: sized %d, written %d", h, more, n, got, want)
					}
				}
			}
		}
	}
}

// A line whose record nothing in a level's limits can cut reuses its
// unlimited rendering at that level: it must be what rendering at that
// level gives.
func checkLevelReuse(t *testing.T, body []byte, opts PreviewOptions) (reused int) {
	t.Helper()
	p := Preview(body, opts)
	for _, l := range p.lines {
		for level := 1; level < len(previewLevels); level++ {
			if !l.done[0] || !l.within(previewLevels[level]) {
				continue
			}
			reused++
			text, n, whole := l.renderAt(level)
			if text != l.text[0] || n != l.n[0] || !slices.Equal(whole, l.whole[0]) {
				t.Fatalf("level %d of %s:\n rendered %s %+v %v\n   reused %s %+v %v", level, l.rec.Raw, text, n, whole, l.text[0], l.n[0], l.whole[0])
			}
		}
	}
	return reused
}

func TestPreviewReusesUnlimitedRendering(t *testing.T) {
	short := `{"id":"s1","stream":"notes","data":{"title":"short","tags":["a","b"],"n":1}}`
	reused := 0
	for _, body := range [][]byte{
		fixture(t, "records-messages-limit3"), fixture(t, "records-messages-fields"), fixture(t, "owner-records-messages-expand"),
		page([]string{short, wideRecord(1, "c")}, ""),
		page([]string{`{"id":"b1","stream":"s","data":{"f":{"blob_id":"blob_1","mime_type":"text/plain"},"t":"x"}}`}, ""),
		page([]string{`{"id":"k1","stream":"s","data":{"title":"` + strings.Repeat("t", 130) + `","x":"y"}}`}, ""),
		page([]string{`{"id":"b2","stream":"s","data":{"f":{"blob_id":"blob_2","mime_type":"` + strings.Repeat("m", 170) + `"}}}`}, ""),
	} {
		for _, keys := range [][]string{nil, {"title", "subject"}} {
			reused += checkLevelReuse(t, body, PreviewOptions{Label: "l", Scope: Scope{Stream: "s"}, KeyFields: keys})
		}
	}
	// Strings and containers at each level's bounds and one past them.
	for _, lim := range previewLevels[1:] {
		for _, extra := range []int{0, 1} {
			long := `{"id":"e1","stream":"s","data":{"note":"` + strings.Repeat("n", lim.str+cutSlack+extra) + `"}}`
			wide := `{"id":"e2","stream":"s","data":{"list":[` + strings.Repeat(`1,`, lim.entries+extra-1) + `1]}}`
			for _, rec := range []string{long, wide} {
				reused += checkLevelReuse(t, page([]string{rec}, ""), PreviewOptions{Label: "l", Scope: Scope{Stream: "s"}})
			}
		}
	}
	if reused == 0 {
		t.Fatal("no rendering was reused: the cases do not test the shortcut")
	}
}
