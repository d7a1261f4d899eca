package jsonw

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// rawCases are inputs AppendRaw must treat exactly as json.Marshal treats a
// json.RawMessage: same bytes out, or an error for both.
var rawCases = []string{
	`{}`, `[]`, `0`, `-0`, `1.5e+10`, `-12.0E-3`, `true`, `false`, `null`, `""`,
	" { \"a\" : [ 1 , 2 , { } , [ ] ] ,\n\t\"b\":null } \r\n",
	`{"html":"<a href=\"x\">&amp;</a>","ls":"` + "\u2028\u2029" + `"}`,
	`["\u003c\/\b\f\n\r\t\\\"\u00e9\uD83D\uDE00"]`,
	"[\"\xff\xfe invalid utf-8 kept\"]",
	"[\"\xe2\x80\"]", "[\"\xe2\"]", "\"\xe2\x80\xa8\"",
	`{"a":1,}`, `[1,]`, `[1 2]`, `{"a" 1}`, `{1:2}`, `01`, `1.`, `.5`, `1e`, `-`, `+1`,
	`tru`, `truex`, `nul`, `[`, `{`, `"abc`, `"\x"`, `"\u12g4"`, "\"a\x01b\"", `{} {}`, `[]]`,
	`{"a":}`, `}`, ` `, `"\`, `"\u12`, `[1,2`, `{"a":1`, `{"a"`,
}

func TestAppendRawMatchesMarshal(t *testing.T) {
	deep := strings.Repeat("[", maxNesting) + strings.Repeat("]", maxNesting)
	tooDeep := "[" + deep + "]"
	for _, in := range append(rawCases, deep, tooDeep) {
		checkRaw(t, in)
	}
	// nil and empty: what json.Marshal makes of a nil and an empty
	// json.RawMessage.
	if got, err := AppendRaw([]byte("x"), nil); err != nil || string(got) != "xnull" {
		t.Errorf("nil: %q, %v", got, err)
	}
	if _, err := json.Marshal(json.RawMessage{}); err == nil {
		t.Fatal("json.Marshal accepts an empty RawMessage")
	}
	if got, err := AppendRaw([]byte("x"), []byte{}); err == nil || string(got) != "x" {
		t.Errorf("empty: %q, %v", got, err)
	}
}

func checkRaw(t *testing.T, in string) {
	t.Helper()
	want, wantErr := json.Marshal(json.RawMessage(in))
	got, err := AppendRaw([]byte("prefix"), []byte(in))
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%.80q: error %v, json.Marshal's %v", in, err, wantErr)
	}
	if err != nil {
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%.80q: error %v does not wrap ErrInvalid", in, err)
		}
		if string(got) != "prefix" {
			t.Errorf("%.80q: dst changed on error: %.80q", in, got)
		}
		return
	}
	if string(got) != "prefix"+string(want) {
		t.Errorf("%.80q:\n got %.200q\nwant %.200q", in, got[len("prefix"):], want)
	}
}

func FuzzAppendRaw(f *testing.F) {
	for _, in := range rawCases {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if len(in) == 0 {
			return // a nil RawMessage marshals as null; callers write that
		}
		checkRaw(t, in)
	})
}

func TestEncodedMarshalsAsItself(t *testing.T) {
	b, err := json.Marshal(struct {
		A Encoded `json:"a"`
		B Encoded `json:"b"`
	}{A: Encoded(`{"x":"\u003c"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"a":{"x":"\u003c"},"b":null}` {
		t.Errorf("got %s", b)
	}
}

func BenchmarkAppendRaw(b *testing.B) {
	page := []byte(`{"data":[` + strings.TrimSuffix(strings.Repeat(`{"id":"m_1","subject":"Lisbon <trip> & more","from":{"name":"Ana","email":"ana@example.com"},"labels":["inbox","travel"],"size":12345,"sent_at":"2026-01-02T03:04:05Z","snippet":"Tickets for the trip are attached, see you on the 3rd"},`, 60), ",") + `],"next_cursor":null}`)
	b.SetBytes(int64(len(page)))
	b.Run("AppendRaw", func(b *testing.B) {
		var dst []byte
		for b.Loop() {
			dst, _ = AppendRaw(dst[:0], page)
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		for b.Loop() {
			_, _ = json.Marshal(json.RawMessage(page))
		}
	})
}

// TestTwice: the structured copy Twice derives is json.Marshal's encoding
// of the same value, and the text is Compact's.
func TestTwice(t *testing.T) {
	type inner struct {
		S string          `json:"s"`
		R json.RawMessage `json:"r,omitempty"`
		M Encoded         `json:"m,omitempty"`
	}
	tricky := "a<b>&c \u2028\u2029 \xff \x00 \"q\" é 😀"
	for name, v := range map[string]any{
		"strings":     map[string]any{"k<": tricky, "n": 1.5, "z": nil, "b": true},
		"raw":         inner{S: tricky, R: json.RawMessage(" {\"x\" : \"<\u2028\\u003c\\/\xff\" } ")},
		"encoded":     inner{M: Encoded(`{"y":"\u003c"}`)},
		"nested":      []any{inner{S: "&"}, []string{"<", ">"}, map[string]inner{"a": {R: json.RawMessage(`[1,2]`)}}},
		"unencodable": map[string]any{"f": func() {}},
		"bad raw":     inner{R: json.RawMessage(`{`)},
	} {
		text, m, err := Twice(v)
		want, wantErr := json.Marshal(v)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%s: error %v, json.Marshal's %v", name, err, wantErr)
		}
		if err != nil {
			continue
		}
		if string(m) != string(want) {
			t.Errorf("%s: structured\n got %s\nwant %s", name, m, want)
		}
		if c := Compact(v); text != c {
			t.Errorf("%s: text\n got %s\nwant %s", name, text, c)
		}
	}
}
