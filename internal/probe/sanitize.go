package probe

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// Sanitize makes server text inert on a terminal and returns how many
// characters it replaced. Line feeds and tabs are kept. Every other control
// character is replaced by a visible stand-in, so an escape sequence cannot
// act (no ESC, CSI, OSC or BEL byte is left to start or end one) and the
// reader still sees that the model received it:
//
//   - C0 controls and DEL become their Unicode control pictures: ESC is ␛,
//     BEL ␇, CR ␍, NUL ␀, DEL ␡;
//   - C1 controls (U+0080–U+009F, which some terminals read as ESC-prefixed
//     sequences: U+009B is CSI) and every other character the server's
//     visible rule marks (package visible: format characters such as the
//     bidirectional overrides and isolates, which reorder what is displayed,
//     zero-width characters, surplus variation selectors) become ⟨U+XXXX⟩,
//     and a run of tag characters (invisible ASCII) ⟨tags “…”⟩ with what it
//     spells, so what a third-party server sends raw is seen too;
//   - a byte that is not UTF-8 becomes ⟨0xXX⟩, since a terminal in an 8-bit
//     mode would read 0x9B as CSI.
//
// The server's own marks (⟦hidden …⟧) are plain visible text and pass
// unchanged. Sanitize is idempotent: its output contains nothing it would
// replace.
func Sanitize(s string) (string, int) {
	if !needsSanitizing(s) {
		return s, 0
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, "⟨0x%02X⟩", s[i])
			n++
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20:
			b.WriteRune(0x2400 + r)
			n++
		case r == 0x7f:
			b.WriteRune('␡')
			n++
		case isTag(r) && hiddenAt(s, i):
			j := i
			b.WriteString("⟨tags “")
			for j < len(s) {
				t, k := utf8.DecodeRuneInString(s[j:])
				if !isTag(t) {
					break
				}
				b.WriteByte(byte(t - 0xE0000))
				j += k
				n++
			}
			b.WriteString("”⟩")
			i = j
			continue
		case r >= 0x80 && r <= 0x9f || hiddenAt(s, i):
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
			n++
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String(), n
}

// isTag is a tag character that spells printable ASCII.
func isTag(r rune) bool { return r >= 0xE0020 && r <= 0xE007E }

// hiddenAt reports whether the character at s[i] is one the visible rule
// marks.
func hiddenAt(s string, i int) bool {
	h, _ := visible.Hidden(s, i)
	return h
}

func needsSanitizing(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r >= 0x80 && r <= 0x9f || hiddenAt(s, i) {
			return true
		}
		i += size
	}
	return false
}

// escapeJSONControls rewrites, in JSON text, the characters Sanitize replaces
// but encoding/json leaves raw (DEL, C1 controls, the characters the visible
// rule marks) as \u escapes. The JSON stays valid and means the same: such
// characters can only occur inside strings.
func escapeJSONControls(b []byte) []byte {
	s := string(b)
	if !needsSanitizing(s) {
		return b
	}
	var out bytes.Buffer
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError && (r == 0x7f || r >= 0x80 && r <= 0x9f || r >= 0x80 && hiddenAt(s, i)) {
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&out, `\u%04x`, u)
			}
		} else {
			out.WriteString(s[i : i+size])
		}
		i += size
	}
	return out.Bytes()
}

// LineSanitizer writes untrusted text (a spawned server's stderr) to w one
// sanitised line at a time, each with a prefix. Close writes what is left.
type LineSanitizer struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

// NewLineSanitizer returns a LineSanitizer over w.
func NewLineSanitizer(w io.Writer, prefix string) *LineSanitizer {
	return &LineSanitizer{w: w, prefix: prefix}
}

// maxPending bounds a line held back waiting for its end; a longer one is
// written in pieces, each marked as continuing.
const maxPending = 64 << 10

// Write implements io.Writer.
func (l *LineSanitizer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		if err := l.emit(l.buf[:i], ""); err != nil {
			return len(p), err
		}
		l.buf = l.buf[i+1:]
	}
	if len(l.buf) > maxPending {
		cut := len(l.buf)
		// Keep a character split across writes whole for the next piece.
		for k := cut - 1; k >= 0 && k >= cut-utf8.UTFMax; k-- {
			if utf8.RuneStart(l.buf[k]) {
				if !utf8.FullRune(l.buf[k:]) {
					cut = k
				}
				break
			}
		}
		if err := l.emit(l.buf[:cut], " ⏎ (line continues)"); err != nil {
			return len(p), err
		}
		l.buf = append(l.buf[:0], l.buf[cut:]...)
	}
	return len(p), nil
}

// Close writes a final line that had no line feed.
func (l *LineSanitizer) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) == 0 {
		return nil
	}
	err := l.emit(l.buf, " (no newline at end)")
	l.buf = nil
	return err
}

func (l *LineSanitizer) emit(line []byte, note string) error {
	s, _ := Sanitize(string(line))
	_, err := io.WriteString(l.w, l.prefix+s+note+"\n")
	return err
}
