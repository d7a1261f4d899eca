package evidence

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/resultid"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// JSONCut is a record payload rendered as compact JSON for model-visible text
// (authored key order, binary values as metadata), bounded, with the reads that
// continue it from exactly where the text stops.
type JSONCut struct {
	// Text is the rendering, or its first ShownChars code points followed by "…".
	Text string
	// TotalChars and ShownChars count code points of the rendering.
	TotalChars, ShownChars int
	// CutField is the member the cut fell inside ("" when the cut fell between
	// members or the rendering is whole).
	CutField string
	// Next continues CutField with read_record_field from where Text stops: a
	// string member at that character of its value, any other member at that
	// character of its compact JSON rendering. nil when CutField is "".
	Next *Read
	// Rest reads the members after the cut with fetch(fields); nil when none.
	Rest *Read
	// Unaddressable counts members after the cut whose names no tool argument
	// can carry (see FieldPathOK); they are not in Rest.
	Unaddressable int
	// Whole names the members the text shows whole.
	Whole map[string]bool
}

// Cut reports whether the rendering was shortened.
func (c JSONCut) Cut() bool { return c.ShownChars < c.TotalChars }

// member is one rendered member of an object, with code point positions in
// the whole rendering.
type member struct {
	key        string
	node       *node
	valueStart int // first code point of the value
	valueEnd   int // one past its last code point
}

// BoundJSON renders v (a record payload object) as compact JSON of at most
// limit code points ("…" included); limit <= 0 means no bound. When the text is
// cut, Next and Rest together reach every member the text did not show in
// full, so a model can read all of it in bounded steps.
func BoundJSON(id string, v gjson.Result, limit int) JSONCut {
	root := parse(v, 0)
	return boundJSON(id, &root, limit)
}

// Payload is a record's payload (its data object) parsed once, for the
// text and the ladder entry fetch makes of the same record.
type Payload struct {
	tree node
}

// ParsePayload parses v (a record's data object) for BoundJSON and
// FetchEntryWith.
func ParsePayload(v gjson.Result) *Payload {
	return &Payload{tree: parse(v, 0)}
}

// BoundJSON is BoundJSON of the value p was parsed from.
func (p *Payload) BoundJSON(id string, limit int) JSONCut {
	return boundJSON(id, &p.tree, limit)
}

func boundJSON(id string, root *node, limit int) JSONCut {
	var r renderer
	if rid, err := resultid.Parse(id); err == nil {
		r.conn = rid.ConnectionID()
	}
	if root.kind != kindObject {
		text := string(r.value(nil, root, 0, false))
		total := Len(text)
		if limit <= 0 || total <= limit {
			return JSONCut{Text: text, TotalChars: total, ShownChars: total}
		}
		shown, n := cutJSONText(text, limit)
		return JSONCut{Text: shown, TotalChars: total, ShownChars: n}
	}

	b := []byte{'{'}
	pos := 1
	members := make([]member, 0, len(root.kids))
	for i := range root.kids {
		m := &root.kids[i]
		if i > 0 {
			b = append(b, ',')
			pos++
		}
		start := len(b)
		b = visible.AppendJSON(b, m.key)
		b = append(b, ':')
		pos += utf8.RuneCount(b[start:])
		vStart := len(b)
		b = r.value(b, m, 1, false)
		n := utf8.RuneCount(b[vStart:])
		members = append(members, member{key: m.key, node: m, valueStart: pos, valueEnd: pos + n})
		pos += n
	}
	b = append(b, '}')
	text := string(b)
	total := pos + 1
	c := JSONCut{Text: text, TotalChars: total, ShownChars: total, Whole: map[string]bool{}}
	if limit > 0 && total > limit {
		c.Text, c.ShownChars = cutJSONText(text, limit)
	}
	p := c.ShownChars
	for _, m := range members {
		if m.valueEnd <= p {
			c.Whole[m.key] = true
		}
	}
	if !c.Cut() {
		return c
	}

	rest := len(members) // index of the first member Rest reads
	for i := range members {
		if members[i].valueEnd > p {
			rest = c.continueMember(id, members, i, p)
			break
		}
	}
	var names []string
	for _, m := range members[rest:] {
		if FieldPathOK(m.key) {
			names = append(names, m.key)
		} else {
			c.Unaddressable++
		}
	}
	if len(names) > 0 {
		more := FetchFields(id, names...)
		c.Rest = &more
	}
	return c
}

// continueMember sets Next for member i, the first one the cut at p did not
// show whole, and returns the index of the first member Rest must read. Every
// call of a chain of continuations shows something new: a member the text has
// not reached is left to Rest only when earlier members were shown whole, and
// otherwise read from its start.
func (c *JSONCut) continueMember(id string, members []member, i, p int) int {
	m := members[i]
	started := p > m.valueStart
	switch {
	case !FieldPathOK(m.key) || m.node.kind == kindBase64:
		// No read can name the member, or its rendering is binary metadata
		// that no window reproduces (the content ladder lists it). Rest
		// shows it again unless it comes first, where that would not progress.
		if i == 0 {
			if !FieldPathOK(m.key) {
				c.Unaddressable++
			}
			return 1
		}
		return i
	case m.node.kind == kindString && m.node.chars == 0:
		return i + 1 // an empty string: nothing left to read
	case !started && i > 0:
		return i
	}
	offset := 0
	if started {
		offset = p - m.valueStart
		if m.node.kind == kindString {
			if m.node.raw == "" || m.node.raw[0] != '"' || m.node.hidden() {
				// Rendered under the visible rule, not copied.
				offset = visible.Text.JSONShown(m.node.str, offset)
			} else {
				offset = rawCharsShown(m.node.raw, offset)
			}
			if offset >= m.node.chars {
				return i + 1 // only the closing quote was cut
			}
		}
	}
	next := FieldRead(id, m.key, offset, WindowChars)
	c.CutField, c.Next = m.key, &next
	return i + 1
}

// cutJSONText cuts rendered JSON text to limit code points ("…" included),
// never inside a hidden-character mark, and returns how many code points of
// text it shows.
func cutJSONText(text string, limit int) (string, int) {
	shown, _ := visible.CutShown(text, limit)
	return shown, Len(shown) - 1
}

// rawCharsShown returns how many code points of a JSON string's value are
// wholly inside the first shown code points of its literal (quotes and
// escapes included). An escape sequence counts as the one code point it
// stands for; a surrogate pair as one.
func rawCharsShown(literal string, shown int) int {
	if shown <= 1 || literal == "" {
		return 0
	}
	used, count := 1, 0 // the opening quote
	for i := 1; i < len(literal); {
		c := literal[i]
		if c == '"' {
			break
		}
		width := 1
		size := 1
		switch {
		case c == '\\' && i+1 < len(literal) && literal[i+1] == 'u':
			size = 6
			if i+12 <= len(literal) && literal[i+6] == '\\' && literal[i+7] == 'u' && isHighSurrogate(literal[i+2:i+6]) {
				size = 12
			}
			width = size
		case c == '\\':
			size, width = 2, 2
		case c >= utf8.RuneSelf:
			_, size = utf8.DecodeRuneInString(literal[i:])
		}
		if used+width > shown {
			break
		}
		used += width
		count++
		i += size
	}
	return count
}

func isHighSurrogate(hex string) bool {
	h := strings.ToUpper(hex)
	return len(h) == 4 && h[0] == 'D' && h[1] >= '8' && h[1] <= 'B'
}

// WindowSelector picks a window of a text the way the RS field-window route
// does: from Offset, or around the first case-sensitive occurrence of Q with
// Before characters ahead of it. Limit is the window length; 0 means the
// route's default (4096, or Before+len(Q)+After in query mode when either
// context is set).
type WindowSelector struct {
	Offset        int
	Limit         int
	Q             string
	Before, After int
	// HasContext is true when Before or After was given.
	HasContext bool
}

// FieldWindow is a window of a field's text, with the members the RS
// field-window route returns (numbers in code points).
type FieldWindow struct {
	Complete       bool   `json:"complete"`
	EndChars       int    `json:"end_chars"`
	HasMore        bool   `json:"has_more"`
	LimitChars     int    `json:"limit_chars"`
	MatchEndChars  *int   `json:"match_end_chars"`
	MatchStart     *int   `json:"match_start_chars"`
	NextOffset     *int   `json:"next_offset_chars"`
	PreviousOffset *int   `json:"previous_offset_chars"`
	StartChars     int    `json:"start_chars"`
	Text           string `json:"text"`
	TotalChars     int    `json:"total_chars"`
}

// Window limits of the RS field-window route.
const (
	DefaultWindowChars = 4096
	MaxWindowChars     = 16384
	MaxContextChars    = 8192
)

// WindowOf cuts text as the RS field-window route would. It reports false when
// Q is set and does not occur in text.
func WindowOf(text string, sel WindowSelector) (FieldWindow, bool) {
	limit := sel.Limit
	if limit <= 0 {
		limit = DefaultWindowChars
		if sel.Q != "" && sel.HasContext {
			limit = sel.Before + Len(sel.Q) + sel.After
		}
	}
	limit = min(limit, MaxWindowChars)
	total := Len(text)
	w := FieldWindow{LimitChars: limit, TotalChars: total}
	offset := sel.Offset
	if sel.Q != "" {
		start := IndexFold(text, sel.Q)
		if start < 0 {
			return FieldWindow{}, false
		}
		end := start + Len(sel.Q)
		w.MatchStart, w.MatchEndChars = &start, &end
		offset = max(0, start-sel.Before)
	}
	w.StartChars = min(offset, total)
	w.EndChars = min(w.StartChars+limit, total)
	if strings.Contains(text, visible.Open) {
		w.StartChars, w.EndChars = markBounds(text, w.StartChars, limit, total)
	}
	w.Complete = w.StartChars == 0 && w.EndChars >= total
	w.HasMore = w.EndChars < total
	if w.HasMore {
		next := w.EndChars
		w.NextOffset = &next
	}
	if w.StartChars > 0 {
		prev := max(0, w.StartChars-limit)
		w.PreviousOffset = &prev
	}
	w.Text = codePoints(text, w.StartChars, w.EndChars)
	return w, true
}

// markBounds places the window of limit code points starting at start in
// rendered text (total code points long) off hidden-character marks
// (package visible): an end inside a mark moves back to where the mark
// starts, so a window holds whole marks and the next one starts with the
// mark. The end stays put when moving it would empty the window (a mark
// longer than the window is split rather than never read).
func markBounds(text string, start, limit, total int) (int, int) {
	byteAt := func(n int) int {
		i := 0
		for k := 0; k < n && i < len(text); k++ {
			_, size := utf8.DecodeRuneInString(text[i:])
			i += size
		}
		return i
	}
	bs := byteAt(start)
	if b := visible.Boundary(text, bs); b < bs {
		start -= Len(text[b:bs])
		bs = b
	}
	end := min(start+limit, total)
	be := byteAt(end)
	if b := visible.Boundary(text, be); b < be && b > bs {
		end -= Len(text[b:be])
	}
	return start, end
}

// codePoints returns code points [from, to) of s.
func codePoints(s string, from, to int) string {
	if from >= to {
		return ""
	}
	i, n, start := 0, 0, -1
	for i < len(s) {
		if n == from {
			start = i
		}
		if n == to {
			return s[start:i]
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n++
	}
	if start < 0 {
		return ""
	}
	return s[start:]
}

// LooksBinary reports whether a window of a string field is base64-encoded
// binary: at least Base64MinLen bytes of the standard base64 alphabet (at most
// two trailing "=") with at least 4 distinct characters. Unlike IsBase64Blob it
// does not require a multiple of 4, because a window can start and end
// anywhere in the encoded body.
func LooksBinary(s string) bool {
	body := strings.TrimRight(s, "=")
	if len(body) < Base64MinLen || len(s)-len(body) > 2 {
		return false
	}
	// Complete the last quantum with a character already present, so the
	// distinct-character count is unchanged.
	return IsBase64Blob(body + strings.Repeat(body[:1], (4-len(body)%4)%4))
}

// IndexFold returns the position, in code points, of the first
// case-insensitive occurrence of q in text, or -1: how the resource server
// matches a field-window q. Lowering maps each code point to one code point,
// so positions in the lowered text are positions in text.
//
// An exact occurrence counts too, so that bytes lowering would replace
// (invalid UTF-8) still match themselves; the earlier of the two wins.
func IndexFold(text, q string) int {
	exact := -1
	if i := strings.Index(text, q); i >= 0 {
		exact = utf8.RuneCountInString(text[:i])
	}
	lt := strings.Map(unicode.ToLower, text)
	i := strings.Index(lt, strings.Map(unicode.ToLower, q))
	if i < 0 {
		return exact
	}
	folded := utf8.RuneCountInString(lt[:i])
	if exact >= 0 {
		return min(exact, folded)
	}
	return folded
}
