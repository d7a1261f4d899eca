package resultid

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// FuzzParse: Parse never panics, and anything it accepts formats back (String,
// Handle and, when offered, Text) to an id that parses to the same value.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"cin_a/orders:o1", "orders:o1", "slack:C1:171.0", "cin/contacts:john..doe", `cin/b:["a","b"]`,
		"cin/orders:../../etc/passwd", "../cin/orders:o1", "cin/", "/orders:o1", "cin/orders",
		"cin/extra/orders:o1", "noseparator", "orders:", ":o1", "", "pdpp://record/cin_a%2Forders%3Ao1",
		handleOf(`{"v":1,"kind":"record","connection_id":"c","stream":"s","record_id":"a/b"}`),
		handleOf(`{"v":1,"kind":"record","stream":"s:t","record_id":"\\"}`),
		"pdpp://record/", "pdpp://record/%zz", "a:b/c:d", "s:a\x00", "s:\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := Parse(s)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Parse(%q) returned %T, want *Error", s, err)
			}
			return
		}
		checkRoundTrip(t, id)
	})
}

// FuzzNew: any triple New accepts has a working id.
func FuzzNew(f *testing.F) {
	f.Add("cin", "s", "r")
	f.Add("", "s", "a/b:c")
	f.Add("c:1", "ns:x", `C:\x`)
	f.Fuzz(func(t *testing.T, c, s, r string) {
		id, err := New(c, s, r)
		if err != nil {
			return
		}
		if id.ConnectionID() != c || id.Stream() != s || id.RecordID() != r {
			t.Fatalf("New(%q, %q, %q) = %+v", c, s, r, id)
		}
		checkRoundTrip(t, id)
	})
}

// FuzzParseFieldWindowURI: never panics; accepted handles re-encode to an
// equal window.
func FuzzParseFieldWindowURI(f *testing.F) {
	f.Add(fieldWindowURI(`{"v":1,"kind":"field-window","connection_id":"c","stream":"s","record_id":"r","field_path":"f","offset_chars":3}`))
	f.Add("pdpp://field-window/")
	f.Fuzz(func(t *testing.T, uri string) {
		w, err := ParseFieldWindowURI(uri)
		if err != nil {
			return
		}
		again, err := w.URI()
		if err != nil {
			t.Fatalf("accepted %q but URI() fails: %v", uri, err)
		}
		back, err := ParseFieldWindowURI(again)
		if err != nil || back.Record != w.Record || back.FieldPath != w.FieldPath || back.Q != w.Q || back.Cursor != w.Cursor {
			t.Fatalf("re-encoded %q parses to %+v, %v; want %+v", again, back, err, w)
		}
	})
}

func checkRoundTrip(t *testing.T, id ID) {
	t.Helper()
	if id.IsZero() {
		t.Fatal("accepted the zero id")
	}
	if !copyable(id.String()) {
		t.Fatalf("String() = %q cannot be copied out of text whole", id.String())
	}
	forms := []string{id.String(), id.Handle()}
	if text, ok := id.Text(); ok {
		forms = append(forms, text)
		if copyable(text) && id.String() != text {
			t.Fatalf("String() = %q but Text() = %q round-trips", id.String(), text)
		}
	}
	for _, form := range forms {
		back, err := Parse(form)
		if err != nil {
			t.Fatalf("%+v formats as %q, which does not parse: %v", id, form, err)
		}
		if back != id {
			t.Fatalf("%+v formats as %q, which parses to %+v", id, form, back)
		}
	}
}

// TestRoundTripProperty builds many ids from an alphabet rich in separators,
// dots, escapes and multi-byte characters and checks every accepted one.
func TestRoundTripProperty(t *testing.T) {
	alphabet := []string{"a", "Z", "0", "/", "\\", ":", ".", "..", " ", "%", "%2F", "é", "𝄞", "[", "\"", ",", "@", "?", "#", "=", "+", "-", "_", "pdpp://record/"}
	rng := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		var b strings.Builder
		for n := rng.IntN(5); n >= 0; n-- {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	accepted := 0
	for range 20000 {
		c := ""
		if rng.IntN(2) == 0 {
			c = word()
		}
		id, err := New(c, word(), word())
		if err != nil {
			continue
		}
		accepted++
		checkRoundTrip(t, id)
		// Whatever textual spelling Parse accepts must agree with New on the parts.
		if text, ok := id.Text(); ok {
			if got := mustID(t, text); got != id {
				t.Fatalf("Text %q parses to %+v, want %+v", text, got, id)
			}
		}
	}
	if accepted < 1000 {
		t.Fatalf("only %d generated ids were accepted; the generator no longer exercises the formatter", accepted)
	}
}
