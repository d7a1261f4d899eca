package evidence

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// TitleOptions configure Title.
type TitleOptions struct {
	// PrimaryTitleField is the field the stream's schema declares with
	// x_pdpp_role "primary-title", if the caller knows it.
	PrimaryTitleField string
	// EventTimeField is the field declared with x_pdpp_role "event-time".
	EventTimeField string
	// Stream is used when the record does not name its stream.
	Stream string
	// PrimaryTitle is the whole value of the primary-title field when the
	// caller has it from elsewhere (a search snippet of that whole field).
	PrimaryTitle string
	// Fallback is the title when nothing else is available (usually the id).
	Fallback string
}

// TitleMaxChars bounds a title: a primary-title field can hold a whole body.
const TitleMaxChars = 160

// titleFields lead a preview's record, in order, when no primary-title
// field is declared. Titles never guess from them.
var titleFields = [...]string{"title", "name", "subject", "summary"}

// authoredTimes are when the content happened, preferred over emitted_at
// (when the RS ingested it).
var authoredTimes = [...]string{
	"sent_at", "sentAt", "received_at", "receivedAt", "authored_at", "authoredAt",
	"created_at", "createdAt", "source_created_at", "sourceCreatedAt", "occurred_at", "occurredAt",
	"published_at", "publishedAt", "date", "updated_at", "updatedAt",
}

// Title returns a readable identity for a record wrapper or search hit, on one
// line: the value of the field the schema declares primary-title (from the
// record, else opts.PrimaryTitle) when it has at most TitleMaxChars code
// points, else "<source> / <stream> / <timestamp>" with the parts that exist,
// else opts.Fallback. It never guesses a title from field names. A fallback
// longer than TitleMaxChars code points is cut with "…".
func Title(rec gjson.Result, opts TitleOptions) string {
	var b displayBufs
	v := readDisplayView(rec, &b)
	t, _ := visible.Cut(title(v, opts), TitleMaxChars)
	return t
}

// displayView is a record wrapper or search hit read once for display: the
// members of the record and of its data and source objects. Finding a title
// looks up dozens of keys, and a gjson Get per key would rescan the record
// each time.
type displayView struct {
	rec, data, source members
	// payload is the record's field object: data when "data" is an object
	// (the RS record wrapper), else rec.
	payload members
}

// displayBufs hold the members of a typical record. Callers declare them
// next to the view, so both stay on the stack.
type displayBufs struct {
	rec, data [24]keyValue
	source    [4]keyValue
}

func readDisplayView(rec gjson.Result, b *displayBufs) displayView {
	var v displayView
	v.rec = readMembers(b.rec[:], rec)
	data := v.rec.get("data")
	v.data = readMembers(b.data[:], data)
	v.source = readMembers(b.source[:], v.rec.get("source"))
	v.payload = v.rec
	if data.IsObject() {
		v.payload = v.data
	}
	return v
}

func title(v displayView, opts TitleOptions) string {
	// A declared title longer than a title can be is a body (a body stream
	// declares its text primary-title): its start says less than where the
	// record is from.
	if opts.PrimaryTitleField != "" {
		if t := oneLine(v.payload.firstString(opts.PrimaryTitleField)); t != "" && Len(t) <= TitleMaxChars {
			return t
		}
	}
	if t := oneLine(opts.PrimaryTitle); t != "" && Len(t) <= TitleMaxChars {
		return t
	}
	stream := v.rec.firstString("stream", "stream_name")
	if stream == "" {
		stream = opts.Stream
	}
	var parts []string
	for _, p := range [...]string{sourceLabel(v), stream, timestamp(v, opts.EventTimeField)} {
		if p = oneLine(p); p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) > 0 {
		return strings.Join(parts, " / ")
	}
	return opts.Fallback
}

// sourceLabel names where a record came from: display_name, else the short
// connector key, else the connection id ("" when none is known).
func sourceLabel(v displayView) string {
	for _, m := range [...]members{v.rec, v.data, v.source} {
		if s := m.firstString("display_name"); s != "" {
			return s
		}
	}
	for _, m := range [...]members{v.rec, v.data, v.source} {
		if s := m.firstString("connector_key", "connector_id"); s != "" {
			return ShortConnectorKey(s)
		}
	}
	return v.rec.firstString("connection_id", "connector_instance_id")
}

// timestamp returns the record's most meaningful time: the declared
// event-time field, else the first authored time (sent_at, received_at,
// authored_at, created_at, …) on the record and then in its data, else
// emitted_at. "" when there is none.
func timestamp(v displayView, eventTimeField string) string {
	if eventTimeField != "" {
		if t := v.payload.firstString(eventTimeField); t != "" {
			return t
		}
	}
	// v.data is empty unless "data" is an object.
	levels := [...]members{v.rec, v.data}
	for _, m := range levels {
		if t := m.firstString(authoredTimes[:]...); t != "" {
			return t
		}
	}
	for _, m := range levels {
		if t := m.firstString("emitted_at", "emittedAt"); t != "" {
			return t
		}
	}
	return ""
}

// ShortConnectorKey returns the short key of a connector: the last path
// segment of a registry URI ("https://registry.pdpp.dev/connectors/gmail" →
// "gmail"), or the key unchanged.
func ShortConnectorKey(key string) string {
	if !strings.Contains(key, "://") {
		return key
	}
	rest := key
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	rest = strings.TrimRight(rest, "/")
	if i := strings.LastIndexByte(rest, '/'); i >= 0 && i+1 < len(rest) && !strings.HasSuffix(rest[:i], ":/") {
		return rest[i+1:]
	}
	return key
}

// oneLine collapses whitespace to single spaces and trims the ends. Other
// control characters stay, for the visible rule to mark.
func oneLine(s string) string {
	if s == "" {
		return ""
	}
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

const (
	markOpen  = "<mark>"
	markClose = "</mark>"
)

// Snippet shapes highlighted search text for one line of model-visible text:
// whitespace collapses to single spaces, hidden characters are marked
// (package visible), <mark> tags are balanced (a stray </mark> or nested
// <mark> is dropped, an unclosed one is closed, an empty pair removed), and
// the result has at most max code points, tags included. When cut it ends in
// "…" and never leaves a <mark> open or a hidden-character mark in pieces.
func Snippet(s string, max int) string { return Mark(s).Snippet(max) }

// Marked is a highlighted text normalised once (whitespace collapsed,
// <mark> tags balanced), for a caller that needs more than one Snippet or
// PlainSnippet of the same text.
type Marked struct {
	norm string // normalised
	// shown is norm under the visible rule: what Snippet and Plain cut.
	shown string
}

// Mark normalises s for Snippet and PlainSnippet.
func Mark(s string) Marked {
	norm := balanceMarks(s)
	return Marked{norm: norm, shown: visible.Text.String(norm)}
}

// Text is the text m was made from, normalised, without its <mark> tags and
// uncut, as the resource server wrote it (before the visible rule).
func (m Marked) Text() string {
	return plainTags.Replace(strings.ReplaceAll(strings.ReplaceAll(m.norm, markOpen, ""), markClose, ""))
}

// Snippet is Snippet(s, max) of the text m was made from. Hidden characters
// are shown as the visible rule marks them; a mark is never cut.
func (m Marked) Snippet(max int) string {
	norm := m.shown
	if Len(norm) <= max {
		return norm
	}
	if max < 1 {
		return ""
	}
	var b []byte
	used, open, openAt := 0, false, -1
	for i := 0; i < len(norm); {
		switch {
		case strings.HasPrefix(norm[i:], markOpen):
			// room for the tag, one character, the closing tag and the ellipsis
			if used+len(markOpen)+1+len(markClose)+1 > max {
				return finish(b, open, openAt)
			}
			openAt = len(b)
			b = append(b, markOpen...)
			used += len(markOpen)
			open = true
			i += len(markOpen)
		case strings.HasPrefix(norm[i:], markClose):
			b = append(b, markClose...) // its room was reserved when the tag opened
			used += len(markClose)
			open, openAt = false, -1
			i += len(markClose)
		default:
			reserve := 1
			if open {
				reserve += len(markClose)
			}
			// A hidden-character mark is one piece: whole, shortened to
			// the room left, or not at all.
			size, width := atom(norm[i:])
			if used+width+reserve > max {
				if width > 1 {
					if m, ok := visible.Shorten(norm[i:i+size], max-used-reserve); ok {
						b = append(b, m...)
						used += Len(m)
						openAt = -1
					}
				}
				return finish(b, open, openAt)
			}
			b = append(b, norm[i:i+size]...)
			used += width
			openAt = -1
			i += size
		}
	}
	return finish(b, open, openAt)
}

// atom returns the size in bytes and code points of the piece s starts
// with: a visible-rule mark, or one code point.
func atom(s string) (size, width int) {
	if strings.HasPrefix(s, visible.Open) {
		if end := strings.Index(s, visible.Close); end > 0 {
			size = end + len(visible.Close)
			return size, Len(s[:size])
		}
	}
	_, size = utf8.DecodeRuneInString(s)
	return size, 1
}

// finish closes a cut snippet: an open mark with no text yet is dropped, any
// other open mark is closed, and the ellipsis follows.
func finish(b []byte, open bool, openAt int) string {
	if open {
		if openAt >= 0 {
			b = b[:openAt]
		} else {
			b = append(b, markClose...)
		}
	}
	return strings.TrimRight(string(b), " ") + Ellipsis
}

// balanceMarks normalises whitespace and makes <mark> tags balanced.
func balanceMarks(s string) string {
	var b []byte
	var lts []int // where literal '<' went in b
	open, space, openAt := false, false, -1
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], markOpen):
			i += len(markOpen)
			if open {
				continue
			}
			if space && b[len(b)-1] != ' ' {
				b = append(b, ' ')
			}
			space = false
			openAt = len(b)
			b = append(b, markOpen...)
			open = true
		case strings.HasPrefix(s[i:], markClose):
			i += len(markClose)
			if !open {
				continue
			}
			if openAt >= 0 { // nothing inside: drop the pair
				b = b[:openAt]
			} else {
				b = append(b, markClose...)
			}
			open, openAt = false, -1
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			i += size
			if unicode.IsSpace(r) {
				space = len(b) > 0
				continue
			}
			if space && b[len(b)-1] != ' ' {
				b = append(b, ' ')
			}
			space = false
			if r == '<' {
				lts = append(lts, len(b))
			}
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = utf8.AppendRune(b, r)
			}
			openAt = -1
		}
	}
	if open {
		if openAt >= 0 {
			b = b[:openAt]
		} else {
			b = append(b, markClose...)
		}
	}
	return neutralizeLiteralTags(b, lts)
}

// lookalikeLT replaces the '<' of text that spells a mark tag.
const lookalikeLT = "‹"

// neutralizeLiteralTags turns a literal '<' (at the offsets lts, ascending)
// that begins "<mark>" or "</mark>" into a look-alike. Dropping an empty
// pair can join text into a tag ("<ma<mark></mark>rk>"), and a tag in
// the text would unbalance the marks once cut or stripped.
func neutralizeLiteralTags(b []byte, lts []int) string {
	for i := len(lts) - 1; i >= 0; i-- {
		p := lts[i]
		if p >= len(b) {
			continue
		}
		if rest := string(b[p:]); strings.HasPrefix(rest, markOpen) || strings.HasPrefix(rest, markClose) {
			b = append(b[:p], append([]byte(lookalikeLT), b[p+1:]...)...)
		}
	}
	return string(b)
}

// plainTags neutralises tags that stripping the marks joined together
// ("<ma</mark>rk>").
var plainTags = strings.NewReplacer(markOpen, lookalikeLT+markOpen[1:], markClose, lookalikeLT+markClose[1:])

// FirstMark returns the text inside the first non-empty <mark>…</mark> pair of
// s, verbatim ("" when s highlights nothing).
func FirstMark(s string) string {
	for {
		i := strings.Index(s, markOpen)
		if i < 0 {
			return ""
		}
		s = s[i+len(markOpen):]
		j := strings.Index(s, markClose)
		if j < 0 {
			return ""
		}
		if k := strings.Index(s[:j], markOpen); k >= 0 {
			// a nested or unclosed open tag: the text after the last one
			s = s[k:]
			continue
		}
		if m := s[:j]; strings.TrimSpace(m) != "" {
			return m
		}
		s = s[j+len(markClose):]
	}
}

// PlainSnippet is Snippet with the <mark> tags removed: plain prose.
func PlainSnippet(s string, max int) string { return Mark(s).Plain(max) }

// Plain is PlainSnippet(s, max) of the text m was made from.
func (m Marked) Plain(max int) string {
	norm := m.shown
	norm = strings.ReplaceAll(strings.ReplaceAll(norm, markOpen, ""), markClose, "")
	norm = plainTags.Replace(norm)
	out, _ := visible.CutShown(norm, max)
	return out
}
