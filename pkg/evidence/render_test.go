package evidence

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestVisibleJSON(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("\x00\x01binary\xff", 40)))
	tests := []struct {
		name, in, want string
	}{
		{"authored order and compaction",
			`{ "z": 1, "a": [ true, null, 2.50 ], "m": {"y": "x"} }`,
			`{"z":1,"a":[true,null,2.50],"m":{"y":"x"}}`},
		// anchor bug 9.1.1: nested objects with id or url stay visible
		{"author and link stay data",
			`{"author":{"id":"u1","name":"Maya","email":"maya@x.example"},"link":{"url":"https://x.example","title":"X"}}`,
			`{"author":{"id":"u1","name":"Maya","email":"maya@x.example"},"link":{"url":"https://x.example","title":"X"}}`},
		{"array elements with id stay data",
			`{"participants":[{"id":"u1","name":"A"},{"id":"u2","url":"https://x.example/u2"}]}`,
			`{"participants":[{"id":"u1","name":"A"},{"id":"u2","url":"https://x.example/u2"}]}`},
		{"blob_ref becomes metadata",
			`{"blob_ref":{"blob_id":"b1","mime_type":"image/png","size_bytes":9,"sha256":"ab","fetch_url":"/v1/blobs/b1","inline":"` + b64 + `"}}`,
			`{"blob_ref":{"binary":"blob_ref","blob_id":"b1","mime_type":"image/png","size_bytes":9,"fetch":"pdpp://blob/b1"}}`},
		{"an opaque id carries the record's digest",
			`{"blob_ref":{"blob_id":"b1","mime_type":"image/png","sha256":"` + strings.Repeat("AB", 32) + `"}}`,
			`{"blob_ref":{"binary":"blob_ref","blob_id":"b1","mime_type":"image/png","fetch":"pdpp://blob/b1?sha256=` + strings.Repeat("ab", 32) + `"}}`},
		{"nested blob in an array",
			`{"files":[{"name":"a.png","ref":{"blob_id":"b1","size_bytes":3}}]}`,
			`{"files":[{"name":"a.png","ref":{"binary":"blob_ref","blob_id":"b1","size_bytes":3,"fetch":"pdpp://blob/b1"}}]}`},
		{"inline base64 becomes metadata",
			`{"content":"` + b64 + `","name":"x"}`,
			`{"content":{"binary":"base64","size_chars":` + itoa(len(b64)) + `},"name":"x"}`},
		{"escapes kept valid, HTML left alone",
			`{"s":"a\"b\\c\n\u00e9 <b>&amp;</b> é"}`,
			`{"s":"a\"b\\c\n\u00e9 <b>&amp;</b> é"}`},
		{"hidden characters marked, escaped or not",
			`{"s\u200b":"\u0001x` + "\u200b" + `\udb40\udc68\udb40\udc69 ⟦"}`,
			`{"s⟦hidden U+200B⟧":"⟦hidden U+0001⟧x⟦hidden U+200B tags “hi”⟧ ⟦U+27E6⟧"}`},
		{"null blob_ref stays null", `{"blob_ref":null}`, `{"blob_ref":null}`},
	}
	for _, tt := range tests {
		got := VisibleJSON(gjson.Parse(tt.in))
		if got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("%s: output is not valid JSON: %s", tt.name, got)
		}
		if strings.Contains(got, b64[:64]) {
			t.Errorf("%s: binary body reached the output", tt.name)
		}
	}
}

func TestVisibleJSONFixture(t *testing.T) {
	got := VisibleJSON(gjson.ParseBytes(fixture(t, "record-attachments-with-blob")))
	if !strings.HasPrefix(got, `{"connector_key":"https://registry.pdpp.dev/connectors/gmail","connection_id":"cin_gmail_personal","data":{"blob_ref":{"binary":"blob_ref","blob_id":"blob_sha256_c514`) {
		t.Errorf("authored order or blob metadata lost: %.200s", got)
	}
	// The handle names the record's connection, so a read of it is never
	// ambiguous; the RS-relative fetch_url needs a bearer and is left out.
	if !strings.Contains(got, `"fetch":"pdpp://blob/cin_gmail_personal/blob_sha256_c514bff25a8680e2bda41ec474006756282def0bcc3690db3cf55dad1c4837e6"`) ||
		strings.Contains(got, "fetch_url") {
		t.Errorf("blob handle missing or fetch_url kept: %s", got)
	}
	if !json.Valid([]byte(got)) {
		t.Error("invalid JSON")
	}
}

func TestRendererLimits(t *testing.T) {
	in := gjson.Parse(`{"long":"` + strings.Repeat("x", 100) + `","near":"` + strings.Repeat("y", 20) + `","n":1,"e":[],"z":null,"arr":[1,2,3,4,5],"b":true}`)
	r := renderer{lim: limits{str: 10, entries: 4}}
	got := render(&r, in)
	// "near" is within the slack and kept whole; strings first, then numbers, booleans, containers, empties; kept in authored order
	want := `{"long":"xxxxxxxxx…[100 chars]","near":"yyyyyyyyyyyyyyyyyyyy","n":1,"b":true,"…":"+3 more"}`
	if got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	if r.n.cutValues != 1 || r.n.cutEntries != 3 {
		t.Errorf("counts = %+v", r.n)
	}
	// a string only a little over the limit is kept whole: the note would cost more
	r = renderer{lim: limits{str: 10}}
	if got := render(&r, gjson.Parse(`"`+strings.Repeat("y", 22)+`"`)); got != `"`+strings.Repeat("y", 22)+`"` {
		t.Errorf("near-limit string = %s", got)
	}
	r = renderer{lim: limits{entries: 2}}
	if got := render(&r, gjson.Parse(`[1,2,3,4]`)); got != `[1,2,"…+2 more"]` {
		t.Errorf("array = %s", got)
	}
}

func TestRendererDepth(t *testing.T) {
	deep := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	got := VisibleJSON(gjson.Parse(deep))
	if !json.Valid([]byte(got)) || !strings.Contains(got, "nested deeper") {
		t.Errorf("deep nesting not bounded: %s", got)
	}
}

func render(r *renderer, v gjson.Result) string {
	n := parse(v, 0)
	return string(r.value(nil, &n, 0, false))
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
