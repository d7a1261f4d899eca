package probe

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	for _, tt := range []struct {
		name, in, want string
		n              int
	}{
		{"plain", "records: 3\n\tindented", "records: 3\n\tindented", 0},
		{"unicode kept", "Tomás — 日本 ✓", "Tomás — 日本 ✓", 0},
		{"CSI colour", "\x1b[31mred\x1b[0m", "␛[31mred␛[0m", 2},
		{"OSC title with BEL", "\x1b]0;pwned\x07rest", "␛]0;pwned␇rest", 2},
		{"OSC 8 hyperlink with ST", "\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\", "␛]8;;http://evil␛\\click␛]8;;␛\\", 4},
		{"clear screen", "\x1b[2J\x1b[H", "␛[2J␛[H", 2},
		{"carriage return overwrite", "safe\rEVIL", "safe␍EVIL", 1},
		{"backspace", "ab\bc", "ab␈c", 1},
		{"NUL and DEL", "a\x00b\x7f", "a␀b␡", 2},
		{"C1 CSI", "x\u009b31my", "x⟨U+009B⟩31my", 1},
		{"C1 OSC", "\u009d0;t\u009c", "⟨U+009D⟩0;t⟨U+009C⟩", 2},
		{"bidi override", "abc\u202edcba\u202c", "abc⟨U+202E⟩dcba⟨U+202C⟩", 2},
		{"bidi isolate", "\u2067x\u2069", "⟨U+2067⟩x⟨U+2069⟩", 2},
		{"raw 8-bit CSI byte", "a\x9bb", "a⟨0x9B⟩b", 1},
		{"invalid UTF-8", "\xff\xfe", "⟨0xFF⟩⟨0xFE⟩", 2},
		{"control pictures pass", "␛[31m", "␛[31m", 0},
		{"zero-width space", "a\u200bb", "a⟨U+200B⟩b", 1},
		{"tag characters spell", "hi\U000E0069\U000E0067\U000E006E!", "hi⟨tags “ign”⟩!", 3},
		{"emoji joiner kept", "👨\u200d👩", "👨\u200d👩", 0},
		{"server marks pass", "a⟦hidden U+200B⟧b ⟦hidden tags “x”⟧", "a⟦hidden U+200B⟧b ⟦hidden tags “x”⟧", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, n := Sanitize(tt.in)
			if got != tt.want || n != tt.n {
				t.Errorf("Sanitize(%q) = %q, %d; want %q, %d", tt.in, got, n, tt.want, tt.n)
			}
		})
	}
}

// terminalSafe reports the first character a terminal could act on.
func terminalSafe(s string) (rune, bool) {
	if !utf8.ValidString(s) {
		return utf8.RuneError, false
	}
	for i, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f || r >= 0x80 && hiddenAt(s, i) {
			return r, false
		}
	}
	return 0, true
}

func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b]0;t\x07", "\x1b[31m", "\u009b1m", "\xff", "a\r\nb", "\u202e", "⟨U+009B⟩",
		"\u200b\U000E0041\ufe0f", "⟦hidden U+200B⟧"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, n := Sanitize(s)
		if r, ok := terminalSafe(got); !ok {
			t.Fatalf("Sanitize(%q) = %q keeps %U", s, got, r)
		}
		if again, m := Sanitize(got); again != got || m != 0 {
			t.Fatalf("Sanitize is not idempotent on %q: %q then %q (%d)", s, got, again, m)
		}
		if _, safe := terminalSafe(s); safe && (got != s || n != 0) {
			t.Fatalf("Sanitize changed safe text %q to %q", s, got)
		}
		if strings.Count(s, "\n") != strings.Count(got, "\n") {
			t.Fatalf("Sanitize changed the line count of %q", s)
		}
	})
}

func TestEscapeJSONControls(t *testing.T) {
	in, _ := json.Marshal(map[string]string{"t": "a\x1b[31m\x7f\u009b\u202eb"})
	out := escapeJSONControls(in)
	if _, ok := terminalSafe(string(out)); !ok {
		t.Fatalf("escaped JSON %q still holds a control character", out)
	}
	var back map[string]string
	if err := json.Unmarshal(out, &back); err != nil || back["t"] != "a\x1b[31m\x7f\u009b\u202eb" {
		t.Fatalf("escaped JSON %q decodes to %q, %v", out, back["t"], err)
	}
}

func TestLineSanitizer(t *testing.T) {
	var b bytes.Buffer
	l := NewLineSanitizer(&b, "server: ")
	for _, chunk := range []string{"start\x1b[2", "J\nsecond ", "line\n\nlast \xe2\x9c", "\x93"} {
		if _, err := l.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	want := "server: start␛[2J\nserver: second line\nserver: \nserver: last ✓ (no newline at end)\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// A line longer than the hold-back bound is written in pieces, and a
// character split across writes is not broken.
func TestLineSanitizerLongLine(t *testing.T) {
	var b bytes.Buffer
	l := NewLineSanitizer(&b, "")
	long := strings.Repeat("é", maxPending/2+1) // 2 bytes each: one byte over
	l.Write([]byte(long[:len(long)-1]))         // ends inside the last é
	l.Write([]byte(long[len(long)-1:] + "\n"))
	l.Close()
	out := b.String()
	if strings.Contains(out, "⟨0x") {
		t.Fatal("a character split across writes was shown as invalid bytes")
	}
	if !strings.Contains(out, " ⏎ (line continues)\n") {
		t.Fatalf("a line over the bound was not marked as continuing: %d bytes out", len(out))
	}
	if got := strings.Count(out, "é"); got != maxPending/2+1 {
		t.Fatalf("%d é written, want %d", got, maxPending/2+1)
	}
}
