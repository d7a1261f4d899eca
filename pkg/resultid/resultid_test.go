package resultid

import (
	"encoding/base64"
	"errors"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
	"strings"
	"testing"
)

// handleOf encodes a JSON payload the way a client building handles by hand would.
func handleOf(json string) string {
	return RecordScheme + base64.RawURLEncoding.EncodeToString([]byte(json))
}

func TestParseAccepts(t *testing.T) {
	tests := []struct {
		in                       string
		connection, stream, recd string
	}{
		{"cin_a/orders:o1", "cin_a", "orders", "o1"},
		{"orders:o1", "", "orders", "o1"},
		{"cin_gmail_personal/messages:p_msg_003", "cin_gmail_personal", "messages", "p_msg_003"},
		// record ids may contain further ":"; streams cannot
		{"slack:C1:171.0", "", "slack", "C1:171.0"},
		{"cin/slack:C1:171.0", "cin", "slack", "C1:171.0"},
		// ".." inside a longer key is an ordinary key
		{"cin/contacts:john..doe@x.example", "cin", "contacts", "john..doe@x.example"},
		{"cin/s:...", "cin", "s", "..."},
		{"cin/s:..a", "cin", "s", "..a"},
		// compound keys and arbitrary punctuation
		{`cin/balances:["acct_1","2026-04-01"]`, "cin", "balances", `["acct_1","2026-04-01"]`},
		{"cin/s:a b, c [x] {y} @z %41 #h ?q=1", "cin", "s", "a b, c [x] {y} @z %41 #h ?q=1"},
		{"cin/s: leading and trailing ", "cin", "s", " leading and trailing "},
		{"cin/s:café ☕ 𝄞", "cin", "s", "café ☕ 𝄞"},
		// a connection id may contain ":" (the first "/" ends it)
		{"tenant:7/orders:o1", "tenant:7", "orders", "o1"},
		// URI-encoded textual ids
		{"pdpp://record/cin_a%2Forders%3Ao1", "cin_a", "orders", "o1"},
		{"pdpp://record/orders:o1", "", "orders", "o1"},
		{"pdpp://record/cin%2Fs%3Aa%20b", "cin", "s", "a b"},
		// base64url JSON handles, key order as written
		{handleOf(`{"v":1,"kind":"record","connection_id":"cin_a","stream":"orders","record_id":"o1"}`), "cin_a", "orders", "o1"},
		{handleOf(`{"v":1,"kind":"record","stream":"orders","record_id":"o1"}`), "", "orders", "o1"},
		// any key order and whitespace decode the same
		{handleOf(`{ "record_id":"o1", "stream":"orders", "kind":"record", "connection_id":"cin_a", "v":1 }`), "cin_a", "orders", "o1"},
		// handles carry what the textual grammar cannot
		{handleOf(`{"v":1,"kind":"record","connection_id":"cin_a","stream":"pages","record_id":"https://x.example/a/b?c=d"}`), "cin_a", "pages", "https://x.example/a/b?c=d"},
		{handleOf(`{"v":1,"kind":"record","connection_id":"cin_a","stream":"files","record_id":"C:\\Users\\a.txt"}`), "cin_a", "files", `C:\Users\a.txt`},
		{handleOf(`{"v":1,"kind":"record","connection_id":"cin_a","stream":"ns:items","record_id":"x"}`), "cin_a", "ns:items", "x"},
		{handleOf(`{"v":1,"kind":"record","connection_id":"cin_a","stream":"s","record_id":"\u00e9\ud834\udd1e"}`), "cin_a", "s", "é𝄞"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			id, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if id.ConnectionID() != tt.connection || id.Stream() != tt.stream || id.RecordID() != tt.recd {
				t.Fatalf("Parse(%q) = (%q, %q, %q), want (%q, %q, %q)", tt.in,
					id.ConnectionID(), id.Stream(), id.RecordID(), tt.connection, tt.stream, tt.recd)
			}
			if id.HasConnection() != (tt.connection != "") {
				t.Errorf("HasConnection = %v", id.HasConnection())
			}
			back, err := Parse(id.String())
			if err != nil || back != id {
				t.Errorf("String() = %q parses to %+v, %v; want %+v", id.String(), back, err, id)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		in   string
		part Part
		why  string // substring of the message
	}{
		// the anchor's test-pinned rejections
		{"cin/orders:../../etc/passwd", PartNone, `more than one "/"`},
		{"../cin/orders:o1", PartConnection, "path traversal"},
		{"cin/", PartNone, `no ":"`},
		{"/orders:o1", PartConnection, "is empty"},
		{"cin/orders", PartNone, `no ":"`},
		{"cin/extra/orders:o1", PartNone, `more than one "/"`},
		{"noseparator", PartNone, `no ":"`},
		{"orders:", PartRecord, "is empty"},
		{":o1", PartStream, "is empty"},
		{"", PartNone, "the id is empty"},
		// traversal and separators in every segment
		{"cin/orders:..", PartRecord, "path traversal"},
		{"cin/orders:.", PartRecord, "path traversal"},
		{"./orders:o1", PartConnection, "path traversal"},
		{"cin/..:o1", PartStream, "path traversal"},
		{"orders:..", PartRecord, "path traversal"},
		{"..:o1", PartStream, "path traversal"},
		{`cin/orders:a\b`, PartRecord, `"\\"`},
		{`ci\n/orders:o1`, PartConnection, `"\\"`},
		{`cin/or\ders:o1`, PartStream, `"\\"`},
		{`orders:..\..\x`, PartRecord, `"\\"`},
		{"cin/:o1", PartStream, "is empty"},
		{"cin//orders:o1", PartNone, `more than one "/"`},
		// control characters and bad UTF-8
		{"cin/orders:o\x001", PartRecord, "control character"},
		{"cin/orders:o\n1", PartRecord, "control character"},
		{"cin/orders:o1\r", PartRecord, "control character"},
		{"cin/orders:o\x7f", PartRecord, "control character"},
		{"cin/orders:o\u0085", PartRecord, "control character"},
		{"c\tin/orders:o1", PartConnection, "control character"},
		{"cin/ord\x1bers:o1", PartStream, "control character"},
		{"cin/orders:\xff", PartRecord, "UTF-8"},
		// pdpp://record/ forms
		{"pdpp://record/", PartHandle, "nothing follows"},
		{"pdpp://record/%zz", PartHandle, "neither a base64url handle nor"},
		{"pdpp://record/cin_a%2Forders%2Fx%3Ao1", PartNone, `more than one "/"`},
		{"pdpp://record/cin_a%2F..%3Ao1", PartStream, "path traversal"},
		{"pdpp://record/cin%2Fs%3Ao%001", PartRecord, "control character"},
		{"pdpp://record/pdpp:%2F%2Frecord%2Fs:r", PartHandle, "nests"},
		{"pdpp://record/A", PartHandle, "base64url"},
		{"pdpp://record/" + base64.URLEncoding.EncodeToString([]byte(`{"v":1,"kind":"record","stream":"s","record_id":"r1"}`)), PartHandle, "unpadded"},
		{"pdpp://record/b3JkZXJz", PartHandle, "JSON"},
		{handleOf(`[1,2]`), PartHandle, "JSON object"},
		{handleOf(`{"v":1,"kind":"record","stream":"s"`), PartHandle, "JSON"},
		{handleOf(`{"v":2,"kind":"record","stream":"s","record_id":"r"}`), PartHandle, "version"},
		{handleOf(`{"v":"1","kind":"record","stream":"s","record_id":"r"}`), PartHandle, "version"},
		{handleOf(`{"v":1.0,"kind":"record","stream":"s","record_id":"r"}`), PartHandle, "version"},
		{handleOf(`{"kind":"record","stream":"s","record_id":"r"}`), PartHandle, "version"},
		{handleOf(`{"V":1,"KIND":"record","stream":"s","record_id":"r"}`), PartHandle, "version"},
		{handleOf(`{"v":1,"kind":"field-window","connection_id":"c","stream":"s","record_id":"r","field_path":"body"}`), PartHandle, "wrong kind"},
		{handleOf(`{"v":1,"kind":"record","stream":"s","record_id":"r","extra":true}`), PartHandle, "unknown key"},
		{handleOf(`{"v":1,"kind":"record","stream":"s","record_id":"r","record_id":"q"}`), PartHandle, "repeats"},
		{handleOf(`{"v":1,"kind":"record","connection_id":7,"stream":"s","record_id":"r"}`), PartConnection, "not a string"},
		{handleOf(`{"v":1,"kind":"record","connection_id":null,"stream":"s","record_id":"r"}`), PartConnection, "not a string"},
		{handleOf(`{"v":1,"kind":"record","connection_id":"","stream":"s","record_id":"r"}`), PartConnection, "is empty"},
		{handleOf(`{"v":1,"kind":"record","connection_id":"a/b","stream":"s","record_id":"r"}`), PartConnection, `"/"`},
		{handleOf(`{"v":1,"kind":"record","connection_id":"c","stream":"a/b","record_id":"r"}`), PartStream, `"/"`},
		{handleOf(`{"v":1,"kind":"record","connection_id":"c","record_id":"r"}`), PartStream, "no stream"},
		{handleOf(`{"v":1,"kind":"record","connection_id":"c","stream":"s"}`), PartRecord, "no record_id"},
		{handleOf(`{"v":1,"kind":"record","connection_id":"c","stream":"s","record_id":".."}`), PartRecord, "path traversal"},
		{handleOf(`{"v":1,"kind":"record","connection_id":"c","stream":"s","record_id":""}`), PartRecord, "is empty"},
		{handleOf(`{"v":1,"kind":"record","connection_id":"c","stream":"s","record_id":"a\nb"}`), PartRecord, "control character"},
		{handleOf(`{"v":1,"kind":"record","connection_id":"c","stream":"s","record_id":"a\u0000b"}`), PartRecord, "control character"},
	}
	for _, tt := range tests {
		t.Run(strings.ToValidUTF8(tt.in, "?"), func(t *testing.T) {
			id, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %+v, want an error", tt.in, id)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not *Error", err)
			}
			if e.Code != CodeInvalidID {
				t.Errorf("Code = %q, want %q", e.Code, CodeInvalidID)
			}
			if e.Input != tt.in {
				t.Errorf("Input = %q, want the verbatim input", e.Input)
			}
			if e.Part != tt.part {
				t.Errorf("Part = %q, want %q (message %q)", e.Part, tt.part, e.Message)
			}
			if !strings.Contains(e.Message, tt.why) {
				t.Errorf("Message %q does not say %q", e.Message, tt.why)
			}
			if !strings.Contains(e.Message, "connection_id/stream:record_id") {
				t.Errorf("Message %q does not name the expected form", e.Message)
			}
			// Shown under the visible rule, a control character in the
			// input is a mark, never raw and never an escape.
			if shown := visible.String(e.Message); strings.ContainsAny(shown, "\x00\n\r\x1b") || strings.Contains(shown, `\x1b`) || strings.Contains(shown, `\x00`) {
				t.Errorf("Message %q, shown as %q, repeats control characters raw or escaped", e.Message, shown)
			}
		})
	}
}

func TestErrorQuotesLongInputBriefly(t *testing.T) {
	long := "cin/" + strings.Repeat("s", 5000)
	_, err := Parse(long)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Parse: %v", err)
	}
	if len(e.Message) > 600 {
		t.Errorf("message is %d bytes; the quoted input should be bounded", len(e.Message))
	}
	if !strings.Contains(e.Message, "of 5004 characters") {
		t.Errorf("message %q does not say the quote was shortened", e.Message)
	}
	if e.Input != long {
		t.Error("Input must keep the full input")
	}
}

func TestStringChoosesTextOrHandle(t *testing.T) {
	tests := []struct {
		connection, stream, record string
		want                       string // "" means: a handle
	}{
		{"cin_a", "orders", "o1", "cin_a/orders:o1"},
		{"", "orders", "o1", "orders:o1"},
		{"cin_a", "slack", "C1:171.0", "cin_a/slack:C1:171.0"},
		{"tenant:7", "orders", "o1", "tenant:7/orders:o1"},
		// ids a tokenizer or a regex would cut are shown as handles
		{"cin_a", "s", `["a","b"]`, ""},
		{"cin_a", "s", "two words", ""},
		{"cin_a", "s", "a,b", ""},
		{"cin_a", "s", `say "hi"`, ""},
		{"cin_a", "s", "ends.", ""},
		{"cin_a", "s", "a.b", "cin_a/s:a.b"},
		{"cin_a", "s", "john..doe", "cin_a/s:john..doe"},
		{"cin_a", "pages", "https://x.example/a", ""},
		{"cin_a", "files", `C:\a.txt`, ""},
		{"cin_a", "ns:items", "x", ""},
		// legacy id whose key contains "/": textually it would read as a connection
		{"", "s", "a/b:c", ""},
		{"", "s", "/", ""},
	}
	for _, tt := range tests {
		id, err := New(tt.connection, tt.stream, tt.record)
		if err != nil {
			t.Fatalf("New(%q, %q, %q): %v", tt.connection, tt.stream, tt.record, err)
		}
		got := id.String()
		if tt.want != "" && got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
		if tt.want == "" {
			if !strings.HasPrefix(got, RecordScheme) {
				t.Errorf("String() = %q, want a pdpp://record/ handle", got)
			}
			if text, ok := id.Text(); ok && copyable(text) {
				t.Errorf("Text() claims %q round-trips and is copyable", text)
			}
		}
		back, err := Parse(got)
		if err != nil || back != id {
			t.Errorf("Parse(String()) = %+v, %v; want %+v", back, err, id)
		}
		back, err = Parse(id.Handle())
		if err != nil || back != id {
			t.Errorf("Parse(Handle()) = %+v, %v; want %+v", back, err, id)
		}
	}
}

func TestHandleEncoding(t *testing.T) {
	id, err := New("cin_a", "orders", "<o&1>")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(id.Handle(), RecordScheme))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"v":1,"kind":"record","connection_id":"cin_a","stream":"orders","record_id":"<o&1>"}`
	if string(raw) != want {
		t.Errorf("handle JSON = %s, want %s", raw, want)
	}
	legacy, _ := New("", "orders", "o1")
	raw, _ = base64.RawURLEncoding.DecodeString(strings.TrimPrefix(legacy.Handle(), RecordScheme))
	if want := `{"v":1,"kind":"record","stream":"orders","record_id":"o1"}`; string(raw) != want {
		t.Errorf("legacy handle JSON = %s, want %s", raw, want)
	}
}

func TestNewRejects(t *testing.T) {
	tests := []struct {
		connection, stream, record string
		part                       Part
	}{
		{"a/b", "s", "r", PartConnection},
		{"..", "s", "r", PartConnection},
		{"c", "", "r", PartStream},
		{"c", "a/b", "r", PartStream},
		{"c", "s", "", PartRecord},
		{"c", "s", "..", PartRecord},
		{"c", "s", ".", PartRecord},
		{"c", "s", "a\x00", PartRecord},
		{"c", "s", "\xc3", PartRecord},
	}
	for _, tt := range tests {
		_, err := New(tt.connection, tt.stream, tt.record)
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeInvalidID || e.Part != tt.part {
			t.Errorf("New(%q, %q, %q) error = %v, want invalid_id at %q", tt.connection, tt.stream, tt.record, err, tt.part)
		}
	}
}

func TestZeroID(t *testing.T) {
	var id ID
	if !id.IsZero() || id.String() != "" {
		t.Errorf("zero ID: IsZero=%v String=%q", id.IsZero(), id.String())
	}
	if _, ok := id.Text(); ok {
		t.Error("zero ID must have no textual form")
	}
}

func TestWithConnection(t *testing.T) {
	scoped, _ := Parse("cin_a/orders:o1")
	legacy, _ := Parse("orders:o1")
	tests := []struct {
		id      ID
		arg     string
		want    string
		errCode string
	}{
		{legacy, "", "orders:o1", ""},
		{legacy, "cin_b", "cin_b/orders:o1", ""},
		{scoped, "", "cin_a/orders:o1", ""},
		{scoped, "cin_a", "cin_a/orders:o1", ""},
		{scoped, "cin_b", "", CodeConflictingConnection},
		{legacy, "..", "", CodeInvalidID},
		{legacy, "a/b", "", CodeInvalidID},
	}
	for _, tt := range tests {
		got, err := tt.id.WithConnection(tt.arg)
		if tt.errCode != "" {
			var e *Error
			if !errors.As(err, &e) || e.Code != tt.errCode {
				t.Errorf("%v.WithConnection(%q) error = %v, want %s", tt.id, tt.arg, err, tt.errCode)
			}
			continue
		}
		if err != nil || got.String() != tt.want {
			t.Errorf("%v.WithConnection(%q) = %q, %v; want %q", tt.id, tt.arg, got.String(), err, tt.want)
		}
	}
	_, err := scoped.WithConnection("cin_b")
	want := "id embeds connection_id 'cin_a' but the connection_id argument is 'cin_b'; pass the self-contained id alone, or make both handles agree"
	if err == nil || err.Error() != want {
		t.Errorf("conflict message = %v, want %q", err, want)
	}
}

func TestCheckConnectionID(t *testing.T) {
	for in, ok := range map[string]bool{
		"cin_gmail_work": true, "cin..x": true, "a:b": true,
		"": false, ".": false, "..": false, "a/b": false, `a\b`: false, "a\x00": false, "\xff": false,
	} {
		err := CheckConnectionID(in)
		var e *Error
		switch {
		case ok && err != nil:
			t.Errorf("%q rejected: %v", in, err)
		case !ok && (!errors.As(err, &e) || e.Code != CodeInvalidID || e.Part != PartConnection):
			t.Errorf("%q: %v", in, err)
		}
	}
}

// An id holding a character a person cannot see is printed as its handle:
// one token that spells every character, rather than a textual id the
// visible rule would show with a mark (which has spaces).
func TestHiddenCharacterIDIsAHandle(t *testing.T) {
	for _, key := range []string{"m\u200b1", "m\u202e1", "m\U000E0041", "m⟦1"} {
		id, err := New("cin_a", "messages", key)
		if err != nil {
			t.Fatal(err)
		}
		s := id.String()
		if !strings.HasPrefix(s, RecordScheme) {
			t.Errorf("%+q printed as %+q, not a handle", key, s)
		}
		if back, err := Parse(s); err != nil || back != id {
			t.Errorf("%+q: %s parses to %v, %v", key, s, back, err)
		}
	}
}
