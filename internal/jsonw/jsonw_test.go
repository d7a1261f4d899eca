package jsonw

import (
	"encoding/json"
	"testing"
)

func TestAppendString(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain", `"plain"`},
		{`<a href="x">&</a>`, `"<a href=\"x\">&</a>"`},
		{"tab\tnl\ncr\r\x01\\", `"tab\tnl\ncr\r\u0001\\"`},
		{"caf\xc3\xa9 \xff", `"café \ufffd"`},
		{"\u2028", "\"\u2028\""},
		{"bell\b form\f", `"bell\u0008 form\u000c"`},
	} {
		got := String(tt.in)
		if got != tt.want {
			t.Errorf("String(%q) = %s, want %s", tt.in, got, tt.want)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Errorf("%s is not JSON: %v", got, err)
		}
	}
}

// The SDK encodes a result's text with json.Marshal, and pkg/server writes
// results itself in its place: AppendMarshalString must match it byte for
// byte.
func TestAppendMarshalString(t *testing.T) {
	for _, s := range []string{"", "plain", "\x00\b\f\n\r\t\"\\", "\u2028\u2029", "\xff", "é😀", "<>&", "\x7f", "a\xc3"} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendMarshalString(nil, s); string(got) != string(want) {
			t.Errorf("AppendMarshalString(%q) = %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendMarshalString(f *testing.F) {
	for _, s := range []string{"", "plain", "\x00\b\f\n\r\t\"\\", "\u2028\u2029", "\xff", "é😀", "<>&", "\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendMarshalString(nil, s); string(got) != string(want) {
			t.Errorf("%q:\n got %s\nwant %s", s, got, want)
		}
	})
}

func TestCompact(t *testing.T) {
	if got := Compact(map[string]any{"q": "<b>", "n": 1}); got != `{"n":1,"q":"<b>"}` {
		t.Errorf("Compact = %s", got)
	}
	if got := Compact(func() {}); got != "null" {
		t.Errorf("Compact(func) = %s", got)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\xff\xfe", "<&>", "\u2028\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := AppendString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%q gave invalid JSON %s: %v", s, b, err)
		}
		if want := string([]rune(s)); back != want {
			t.Fatalf("%q round-trips to %q, want %q", s, back, want)
		}
	})
}

func TestArray(t *testing.T) {
	for _, tc := range []struct {
		items []string
		want  string
	}{
		{nil, `[]`},
		{[]string{`1`}, `[1]`},
		{[]string{`{"a":1}`, `"x"`, `null`}, `[{"a":1},"x",null]`},
	} {
		if got := string(Array(tc.items)); got != tc.want {
			t.Errorf("Array(%q) = %s, want %s", tc.items, got, tc.want)
		}
		raw := make([][]byte, len(tc.items))
		for i, s := range tc.items {
			raw[i] = []byte(s)
		}
		if got := string(Array(raw)); got != tc.want {
			t.Errorf("Array(bytes %q) = %s, want %s", tc.items, got, tc.want)
		}
	}
}
