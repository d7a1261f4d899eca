package visible

import (
	"strconv"
	"unicode/utf8"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
)

// Bounds of the marks.
const (
	// ExactBytes is the longest string (in bytes) whose marks are exact.
	// Every identifier a model passes back (names, record keys, filter
	// values) is shorter, so its marks always decode.
	ExactBytes = 1024
	// MaxMarkBytes bounds what a mark in a longer string lists; the rest of
	// its run is counted (" …+N more").
	MaxMarkBytes = 160
)

// escapedOpen is how a literal Open is written.
const escapedOpen = Open + "U+27E6" + Close

// A Rule renders text for a model. The zero Rule is the character rule:
// runs of hidden characters become marks. With HTML set it also names, as
// hidden, the parts of an HTML text a mail reader would not show (see
// htmlSpans); use it for the values of text fields (bodies, snippets), never
// for names and identifiers, whose marks must decode.
type Rule struct {
	HTML bool
}

// Text is the rule for the values of text fields: mail bodies, snippets,
// record values shown as JSON.
var Text = Rule{HTML: true}

// String returns s as a model may see it: s itself when nothing in it is
// hidden, else s with each run of hidden characters replaced by its mark.
func String(s string) string { return Rule{}.String(s) }

// String is the package's String under r.
func (r Rule) String(s string) string {
	c, ok := r.changes(s, true)
	if !ok {
		return s
	}
	return string(c.render(make([]byte, 0, len(s)+32)))
}

// MarkHidden is String for text assembled from pieces already rendered (a
// whole tool result, a JSON document): it marks hidden characters and leaves
// "⟦" alone, since the marks already there must stay marks. It is the safety
// net behind the rendering of each string, not a replacement for it: only
// String keeps a literal "⟦" of the source from reading as a mark.
func MarkHidden(s string) string {
	c, ok := Rule{}.changes(s, false)
	if !ok {
		return s
	}
	return string(c.render(make([]byte, 0, len(s)+32)))
}

// AppendJSON appends String(s) as a JSON string literal (jsonw.AppendString's
// escaping): JSON text shown to a model holds marks, never a \u escape of a
// hidden character.
func AppendJSON(b []byte, s string) []byte { return Rule{}.AppendJSON(b, s) }

// AppendJSON is the package's AppendJSON under r.
func (r Rule) AppendJSON(b []byte, s string) []byte {
	c, ok := r.changes(s, true)
	if !ok {
		return jsonw.AppendString(b, s)
	}
	var buf [256]byte
	return jsonw.AppendString(b, string(c.render(buf[:0])))
}

// Clean reports whether r renders s unchanged.
func (r Rule) Clean(s string) bool {
	_, changed := r.changes(s, true)
	return !changed
}

// changes readies the walk over what r changes in s; false when nothing.
// open says whether a literal Open is escaped (String) or left alone
// (MarkHidden).
func (r Rule) changes(s string, open bool) (*changes, bool) {
	first := scan(s, 0, open)
	var spans []span
	if r.HTML {
		spans = htmlSpans(s)
	}
	if first < 0 && len(spans) == 0 {
		return nil, false
	}
	limit := -1
	if len(s) > ExactBytes {
		limit = MaxMarkBytes
	}
	return &changes{s: s, open: open, spans: spans, limit: limit, first: first}, true
}

// changes walks the changes the rule makes in s, in order: runs of hidden
// characters, literal Opens, hidden HTML parts.
type changes struct {
	s     string
	open  bool
	spans []span
	limit int // the marks' item bound (appendMark)
	first int // the first hidden character or Open, or -1
	buf   [256]byte
}

// next returns the first change at or after byte i: where it starts and
// ends in s, and its mark (valid until the next call); ok is false when
// there is none.
func (c *changes) next(i int) (start, end int, mark []byte, ok bool) {
	j := c.first
	if j < i {
		j = scan(c.s, i, c.open)
	}
	for len(c.spans) > 0 && c.spans[0].start < i {
		c.spans = c.spans[1:]
	}
	// A hidden HTML part starts at a "<", which no run of hidden
	// characters holds, so the two never overlap at their starts.
	if len(c.spans) > 0 && (j < 0 || c.spans[0].start <= j) {
		sp := c.spans[0]
		c.spans = c.spans[1:]
		return sp.start, sp.end, append(c.buf[:0], sp.mark...), true
	}
	if j < 0 {
		return 0, 0, nil, false
	}
	end = runEnd(c.s, j)
	if end == j { // a literal Open
		return j, j + len(Open), append(c.buf[:0], escapedOpen...), true
	}
	return j, end, appendMark(c.buf[:0], c.s[j:end], c.limit), true
}

// render appends the rendering of c's string.
func (c *changes) render(b []byte) []byte {
	i := 0
	for {
		start, end, mark, ok := c.next(i)
		if !ok {
			return append(b, c.s[i:]...)
		}
		b = append(b, c.s[i:start]...)
		b = append(b, mark...)
		i = end
	}
}

// runEnd returns the end of the run of hidden characters starting at i (i
// itself when s[i:] starts with a literal Open).
func runEnd(s string, i int) int {
	for i < len(s) {
		h, size := hiddenAt(s, i)
		if !h {
			break
		}
		i += size
	}
	return i
}

// tag characters U+E0020..U+E007E spell printable ASCII.
const (
	tagLo = 0xE0020
	tagHi = 0xE007E
)

// appendMark appends the mark of run, a non-empty run of hidden characters.
// Items name each code point (U+XXXX, ×N for repeats) or spell a run of tag
// characters (tags “…”). limit < 0 lists everything; otherwise the items
// stop once they would pass limit bytes and the mark counts what it left
// out.
func appendMark(b []byte, run string, limit int) []byte {
	b = append(b, hiddenPrefix...)
	start := len(b)
	first := true
	for i := 0; i < len(run); {
		r, size := utf8.DecodeRuneInString(run[i:])
		sep := 0
		if !first {
			sep = 1
		}
		if r >= tagLo && r <= tagHi {
			// Spell the tag characters, as many as fit; with no room to
			// spell one, still say they are tags.
			if limit >= 0 && len(b)-start+sep+len(`tags “x”`) > limit {
				if first && len("tags") <= limit {
					b = append(b, "tags"...)
					first = false
				}
				return closeCut(b, run[i:], first)
			}
			if !first {
				b = append(b, ' ')
			}
			b = append(b, "tags “"...)
			for i < len(run) {
				t, n := utf8.DecodeRuneInString(run[i:])
				if t < tagLo || t > tagHi {
					break
				}
				if limit >= 0 && len(b)-start+1+len("”") > limit {
					b = append(b, "”"...)
					return closeCut(b, run[i:], false)
				}
				b = append(b, byte(t-tagLo+0x20))
				i += n
			}
			b = append(b, "”"...)
			first = false
			continue
		}
		reps := 1
		for i+reps*size < len(run) {
			q, n := utf8.DecodeRuneInString(run[i+reps*size:])
			if q != r || n != size {
				break
			}
			reps++
		}
		var ib [24]byte
		item := appendCode(ib[:0], r, reps)
		if limit >= 0 && len(b)-start+sep+len(item) > limit {
			return closeCut(b, run[i:], first)
		}
		if !first {
			b = append(b, ' ')
		}
		b = append(b, item...)
		first = false
		i += reps * size
	}
	return append(b, Close...)
}

// appendCode appends U+XXXX (at least four hex digits), with ×N for N > 1.
func appendCode(b []byte, r rune, n int) []byte {
	b = append(b, 'U', '+')
	h := strconv.FormatInt(int64(r), 16)
	for range 4 - len(h) {
		b = append(b, '0')
	}
	for _, c := range []byte(h) {
		if c >= 'a' {
			c -= 'a' - 'A'
		}
		b = append(b, c)
	}
	if n > 1 {
		b = append(b, "×"...)
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return b
}

// cutNote ends a mark that lists only part of its run.
const cutNote = " …+"

// closeCut ends a mark whose items stopped before rest (code points of the
// run it does not list); first says it lists nothing.
func closeCut(b []byte, rest string, first bool) []byte {
	if first {
		b = append(b, cutNote[1:]...)
	} else {
		b = append(b, cutNote...)
	}
	b = strconv.AppendInt(b, int64(utf8.RuneCountInString(rest)), 10)
	b = append(b, " more"...)
	return append(b, Close...)
}

// Quote returns s in double quotes for a message that is rendered under the
// rule afterwards (an error message, a warning): '"' and '\\' are escaped,
// and tab, line feed and carriage return written as \t, \n and \r, as
// strconv.Quote writes them; every other character is left as it is, so the
// rendering shows a hidden one as its mark. (strconv.Quote would write
// \u200b, which reads as nothing to a person and as the character to a
// model.)
func Quote(s string) string {
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\t':
			b = append(b, '\\', 't')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			b = append(b, c)
		}
	}
	return string(append(b, '"'))
}
