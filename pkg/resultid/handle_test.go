package resultid

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func intp(n int) *int { return &n }

func fieldWindowURI(json string) string {
	return FieldWindowScheme + base64.RawURLEncoding.EncodeToString([]byte(json))
}

func mustID(t *testing.T, s string) ID {
	t.Helper()
	id, err := Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return id
}

func TestFieldWindowRoundTrip(t *testing.T) {
	url := mustID(t, handleOf(`{"v":1,"kind":"record","connection_id":"c","stream":"pages","record_id":"https://x.example/a"}`))
	tests := []FieldWindow{
		{Record: mustID(t, "cin_a/message_bodies:p_msg_002_body"), FieldPath: "body_text"},
		{Record: mustID(t, "cin_a/message_bodies:p_msg_002_body"), FieldPath: "body_text", OffsetChars: intp(0), LimitChars: intp(4096)},
		{Record: mustID(t, "cin_a/s:r"), FieldPath: "body", Cursor: "108", LimitChars: intp(8)},
		{Record: mustID(t, "cin_a/s:r"), FieldPath: "body", Q: "Lisbon <mark>", BeforeChars: intp(0), AfterChars: intp(8192)},
		{Record: mustID(t, "s:r"), FieldPath: "body"},
		{Record: url, FieldPath: "weird key/with slash"},
	}
	for _, w := range tests {
		uri, err := w.URI()
		if err != nil {
			t.Fatalf("URI(%+v): %v", w, err)
		}
		back, err := ParseFieldWindowURI(uri)
		if err != nil {
			t.Fatalf("ParseFieldWindowURI(%q): %v", uri, err)
		}
		if diff := cmp.Diff(w, back, cmp.AllowUnexported(ID{})); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	}
}

func TestFieldWindowEncoding(t *testing.T) {
	w := FieldWindow{Record: mustID(t, "cin_a/orders:o1"), FieldPath: "body", Cursor: "12", OffsetChars: intp(3),
		LimitChars: intp(8), Q: "x", BeforeChars: intp(1), AfterChars: intp(2)}
	uri, err := w.URI()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(uri, FieldWindowScheme))
	want := `{"v":1,"kind":"field-window","connection_id":"cin_a","stream":"orders","record_id":"o1","field_path":"body",` +
		`"cursor":"12","offset_chars":3,"limit_chars":8,"q":"x","before_chars":1,"after_chars":2}`
	if string(raw) != want {
		t.Errorf("handle JSON\n got %s\nwant %s", raw, want)
	}
}

func TestFieldWindowDecodesAnchorHandle(t *testing.T) {
	// The TypeScript adapter's payload order: connection_id, stream, record_id, field_path, offset_chars, limit_chars.
	uri := fieldWindowURI(`{"v":1,"kind":"field-window","connection_id":"cin_a","stream":"orders","record_id":"o1","field_path":"body","offset_chars":100,"limit_chars":8}`)
	w, err := ParseFieldWindowURI(uri)
	if err != nil {
		t.Fatal(err)
	}
	want := FieldWindow{Record: mustID(t, "cin_a/orders:o1"), FieldPath: "body", OffsetChars: intp(100), LimitChars: intp(8)}
	if diff := cmp.Diff(want, w, cmp.AllowUnexported(ID{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestFieldWindowRejects(t *testing.T) {
	tests := []struct {
		uri string
		why string
	}{
		{"pdpp://field-window/", "does not match"},
		{"pdpp://record/abc", "does not match"},
		{"pdpp://field-window/a%2Fb", "does not match"},
		{"pdpp://field-window/A", "base64url"},
		{fieldWindowURI(`{"v":1,"kind":"record","connection_id":"c","stream":"s","record_id":"r"}`), "wrong kind"},
		{fieldWindowURI(`{"v":2,"kind":"field-window","connection_id":"c","stream":"s","record_id":"r","field_path":"f"}`), "version"},
		{fieldWindowURI(`{"v":1,"kind":"field-window","connection_id":"c","stream":"s","record_id":"r"}`), "no field_path"},
		{fieldWindowURI(`{"v":1,"kind":"field-window","connection_id":"c","stream":"s","record_id":"r","field_path":""}`), "no field_path"},
		{fieldWindowURI(`{"v":1,"kind":"field-window","connection_id":"c","stream":"s","record_id":"r","field_path":".."}`), "path traversal"},
		{fieldWindowURI(`{"v":1,"kind":"field-window","connection_id":"c","stream":"s","record_id":"r","field_path":"a\u0000"}`), "control"},
		{fieldWindowURI(`{"v":1,"kind":"field-window","connection_id":"c","stream":"s","record_id":"r","field_path":7}`), "not a string"},
		{fieldWindowURI(`{"v":1,"kind":"field-window","connection_id":"c","stream":"s","record_id":"r","field_path":"f","offset_chars":-1}`), "non-negative integer"},
		{fieldWindowURI(`{"v":1,"kind":"field-window","connection_id":"c","stream":"s","record_id":"r","field_path":"f","offset_chars":1.5}`), "non-negative integer"},
		{fieldWindowURI(`{"v":1,"kind":"field-window","connection_id":"c","stream":"s","record_id":"r","field_path":"f","offset_chars":"1"}`), "non-negative integer"},
		{fieldWindowURI(`{"v":1,"kind":"field-window","connection_id":"c","stream":"s","record_id":"r","field_path":"f","limit_chars":0}`), "limit_chars is below 1"},
		{fieldWindowURI(`{"v":1,"kind":"field-window","connection_id":"c","stream":"s","record_id":"r","field_path":"f","limit_chars":99999999999999999999}`), "non-negative integer"},
		{fieldWindowURI(`{"v":1,"kind":"field-window","connection_id":"c","stream":"s","record_id":"r","field_path":"f","cursor":12}`), "not a string"},
		{fieldWindowURI(`{"v":1,"kind":"field-window","connection_id":"c","stream":"s","record_id":"r","field_path":"f","bogus":1}`), "unknown key"},
		{fieldWindowURI(`{"v":1,"kind":"field-window","connection_id":"../x","stream":"s","record_id":"r","field_path":"f"}`), `"/"`},
		{fieldWindowURI(`{"v":1,"kind":"field-window","connection_id":"c","stream":"s","record_id":"..","field_path":"f"}`), "path traversal"},
	}
	for _, tt := range tests {
		_, err := ParseFieldWindowURI(tt.uri)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("ParseFieldWindowURI(%q) error = %v, want *Error", tt.uri, err)
			continue
		}
		if e.Code != CodeInvalidResourceURI || !strings.Contains(e.Message, tt.why) {
			t.Errorf("ParseFieldWindowURI(%q) = %s %q, want %s mentioning %q", tt.uri, e.Code, e.Message, CodeInvalidResourceURI, tt.why)
		}
	}
	if _, err := (FieldWindow{FieldPath: "f"}).URI(); err == nil {
		t.Error("URI of a field window without a record must fail")
	}
	if _, err := (FieldWindow{Record: mustID(t, "c/s:r"), FieldPath: "f", LimitChars: intp(0)}).URI(); err == nil {
		t.Error("URI with limit_chars 0 must fail")
	}
}

func TestStreamURI(t *testing.T) {
	for _, name := range []string{"messages", "ns:items", "a b", "café", "x%y"} {
		uri := StreamURI(name)
		got, err := ParseStreamURI(uri)
		if err != nil || got != name {
			t.Errorf("ParseStreamURI(StreamURI(%q) = %q) = %q, %v", name, uri, got, err)
		}
	}
	if got, err := ParseStreamURI("pdpp://stream/messages"); err != nil || got != "messages" {
		t.Errorf("ParseStreamURI = %q, %v", got, err)
	}
	for _, bad := range []string{"pdpp://stream/", "pdpp://stream/a/b", "pdpp://stream/..", "pdpp://stream/a%2Fb",
		"pdpp://stream/%zz", "pdpp://stream/a%00", "pdpp://record/x", "messages"} {
		_, err := ParseStreamURI(bad)
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeInvalidResourceURI {
			t.Errorf("ParseStreamURI(%q) error = %v, want %s", bad, err, CodeInvalidResourceURI)
		}
	}
}
