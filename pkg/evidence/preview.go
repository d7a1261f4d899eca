package evidence

import (
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/resultid"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// Preview bounds.
const (
	// PreviewBudget is the most UTF-8 bytes (hence characters) a preview has.
	PreviewBudget = 1792
	// PreviewRecords is how many records a preview shows by default.
	PreviewRecords = 5
	// maxPreviewRecords caps PreviewOptions.MaxRecords.
	maxPreviewRecords = 100
	// handleInline is the longest paging handle printed inline; longer ones are
	// pointed at instead, so handles can never crowd out the budget.
	handleInline = 300
	// labelMax bounds the caller's label.
	labelMax = 200
	// minLineJSON is the least JSON a hard-cut line keeps after its id.
	minLineJSON = 24
)

// previewLevels go from faithful to terse. A record that does not fit moves
// down one level at a time, widest record first.
var previewLevels = [...]limits{
	{},
	{str: 256, entries: 64},
	{str: 120, entries: 32},
	{str: 64, entries: 16},
	{str: 40, entries: 10},
	{str: 24, entries: 8},
	{str: 16, entries: 5},
}

// defaultLead leads a record's data when the schema's roles are not known:
// its title-like field, then its authored time.
var defaultLead = [][]string{titleFields[:], authoredTimes[:]}

// PreviewOptions configure Preview.
type PreviewOptions struct {
	// Label starts the text, e.g. `records from stream "messages"`.
	Label string
	// Scope supplies the stream and connection records do not carry.
	Scope Scope
	// MaxRecords is how many records to show at most (default PreviewRecords,
	// at most 100).
	MaxRecords int
	// KeyFields lead every record's data and are kept when records must be
	// shown tersely: typically the fields the stream's schema declares with
	// x_pdpp_role primary-title, then event-time. Without them, the first
	// present of title, name, subject and summary leads, then the first
	// authored time (sent_at, received_at, …, date), so a page of mail shows
	// subjects before addresses.
	KeyFields []string
}

// PreviewResult is a page preview and what it left out.
type PreviewResult struct {
	// Text is the model-visible preview, at most PreviewBudget bytes.
	Text string
	// Total is the number of records in the page; Shown how many have a line.
	Total, Shown int
	// ValuesCut counts string values shortened to "…[N chars]".
	ValuesCut int
	// Truncated reports entries left out of shown records or a record line cut short.
	Truncated bool
	// BinaryValues counts binary values shown as metadata.
	BinaryValues int
	// Whole holds, per shown record (by page position), the members of its
	// data the line shows whole (for a line cut short, those before the cut).
	// RecordSetFor leaves those fields out of the ladder.
	Whole []map[string]bool

	// lines hold each previewed record's id and parsed tree, which
	// RecordSetFor reuses rather than reading the records again.
	lines []*previewLine
	// rowsRead: lines hold the page's first records and tailIDs and
	// tailNoIDs count the records after them with and without an id.
	rowsRead           bool
	tailIDs, tailNoIDs int
}

// rowID is a record of the page and its id.
type rowID struct {
	rec gjson.Result
	id  resultid.ID
	ok  bool
}

// Preview renders a page of records (an RS list body) as bounded text:
//
//	<label>: N record(s) has_more=true next_cursor="…" next_changes_since="…" count=exact:N — Showing up to K:
//	record[0] id=<fetch id> {compact JSON}
//	…
//	<footer: what was cut and how to get it>
//
// Each line starts with the record's fetch id (self-contained when the
// connection is known); the wrapper members that id spells out (object, id,
// stream, connection_id, connector_instance_id) are not repeated in the JSON.
// Binary values appear as metadata. When the page does not fit, long string
// values of the widest records are shortened first ("…[N chars]"), then
// containers keep fewer entries ("…":"+N more"), then whole lines are cut, and
// only then are fewer records shown. Paging handles are never cut. The
// result shares body's memory: body must not change while it is in use.
func Preview(body []byte, opts PreviewOptions) PreviewResult {
	env := readEnvelope(ParseBody(body))
	limit := opts.MaxRecords
	if limit <= 0 {
		limit = PreviewRecords
	}
	limit = min(limit, maxPreviewRecords)
	// One pass over each record's members finds its id and its
	// connection_id; the ladder (RecordSetFor) then needs no pass of its own.
	var items []rowID
	total, tailIDs, tailNoIDs := 0, 0, 0
	firstConn, multiConn := "", false
	env.rows.ForEach(func(_, v gjson.Result) bool {
		var c string
		id, ok := identityOf(v, opts.Scope, &c)
		if total < limit {
			items = append(items, rowID{v, id, ok})
		} else if ok {
			tailIDs++
		} else {
			tailNoIDs++
		}
		total++
		if opts.Scope.ConnectionID == "" && !multiConn {
			if total == 1 {
				firstConn = c
			}
			multiConn = c != firstConn
		}
		return true
	})
	h := env.handles
	// A smaller limit reaches the records a preview leaves out only when a
	// cursor pages on from it: not when the page merges several connections
	// without one (the header then says to pass connection_id).
	h.cursorPages = h.cursor != "" || (!h.hasMore && !multiConn)
	// The label is the caller's text, already under the visible rule.
	label, _ := visible.CutShown(oneLine(opts.Label), labelMax)
	var keys *keySet
	lead := defaultLead
	if len(opts.KeyFields) > 0 {
		keys = newKeySet(opts.KeyFields)
		lead = make([][]string, len(opts.KeyFields))
		for i := range opts.KeyFields {
			lead[i] = opts.KeyFields[i : i+1 : i+1]
		}
	}
	k := len(items)
	lines := make([]*previewLine, k)
	shared := &lineScratch{}
	for i := range k {
		lines[i] = newPreviewLine(i, items[i], opts.Scope, keys, lead, shared)
	}
	for ; k > 0; k-- {
		if text, res, ok := fit(label, h, lines[:k], total); ok {
			res.Text = text
			res.lines = lines
			res.tailIDs, res.tailNoIDs, res.rowsRead = tailIDs, tailNoIDs, true
			return res
		}
	}
	head := header(label, h, total, 0)
	foot := footer(h, total, counts{}, false)
	return PreviewResult{Text: joinLines(head, nil, foot, markNote(visible.Count(head))), Total: total}
}

// previewLine is one record and its renderings, computed on demand per level
// from one parse of the record.
type previewLine struct {
	prefix  string
	rec     gjson.Result
	scope   Scope
	id      resultid.ID
	hasID   bool
	scratch *lineScratch
	tree    *node
	fold    *identity
	keys    *keySet
	lead    [][]string
	text    [len(previewLevels)]string
	n       [len(previewLevels)]counts
	whole   [len(previewLevels)][]memberEnd
	memo    dataMemo
	size    sizeStats // of the tree, once sized
	sized   bool
	done    [len(previewLevels)]bool
	level   int
}

// lineScratch is working memory the lines of one preview share.
type lineScratch struct {
	parser parser
	buf    []byte // a rendering before it is kept as a string
}

func newPreviewLine(i int, row rowID, scope Scope, keys *keySet, lead [][]string, scratch *lineScratch) *previewLine {
	l := &previewLine{prefix: "record[" + strconv.Itoa(i) + "] ", rec: row.rec, scope: scope, keys: keys, lead: lead, scratch: scratch}
	if row.ok {
		id := row.id
		l.id, l.hasID = id, true
		l.prefix += "id=" + id.String() + " "
		l.fold = &identity{record: id.RecordID(), stream: id.Stream(), connection: id.ConnectionID()}
	}
	return l
}

func (l *previewLine) render(level int) (string, counts) {
	if !l.done[level] && level > 0 && l.done[0] && l.within(previewLevels[level]) {
		// Nothing in the record reaches these limits: the rendering is
		// the unlimited one.
		l.text[level], l.n[level], l.whole[level], l.done[level] = l.text[0], l.n[0], l.whole[0], true
	}
	if !l.done[level] {
		l.text[level], l.n[level], l.whole[level] = l.renderAt(level)
		l.done[level] = true
	}
	return l.text[level], l.n[level]
}

// renderAt renders the line at level.
func (l *previewLine) renderAt(level int) (string, counts, []memberEnd) {
	r := renderer{lim: previewLevels[level], fold: l.fold, keys: l.keys, lead: l.lead, trackWhole: true, conn: l.scope.ConnectionID, memo: &l.memo}
	b := append(l.scratch.buf[:0], l.prefix...)
	b = r.value(b, l.parsed(), 0, false)
	l.scratch.buf = b
	text := string(b)
	if strings.Contains(text, visible.Open) {
		r.n.marks = visible.Count(text)
	}
	return text, r.n, r.whole
}

// within reports whether rendering the record under lim gives what the
// unlimited rendering gives: no string is long enough to be cut (a key
// field's limit is only larger), no object or array has more entries than
// lim keeps, and no blob's metadata is shown (whose strings are capped
// under any limit).
func (l *previewLine) within(lim limits) bool {
	if !l.sized {
		l.size = treeSize(l.parsed())
		l.sized = true
	}
	return !l.size.blob && l.size.chars <= lim.str+cutSlack && l.size.entries <= lim.entries
}

// sizeStats are the largest string and container of a tree, and whether it
// holds a blob.
type sizeStats struct {
	chars, entries int
	blob           bool
}

func treeSize(n *node) sizeStats {
	var s sizeStats
	switch n.kind {
	case kindString:
		s.chars = n.chars
	case kindBlob:
		s.blob = true
	case kindObject, kindArray:
		s.entries = len(n.kids)
		for i := range n.kids {
			k := treeSize(&n.kids[i])
			s.chars, s.entries, s.blob = max(s.chars, k.chars), max(s.entries, k.entries), s.blob || k.blob
		}
	}
	return s
}

// parsed returns the record's tree, parsing it on first use.
func (l *previewLine) parsed() *node {
	if l.tree == nil {
		t := l.scratch.parser.parse(l.rec, 0)
		l.tree = &t
	}
	return l.tree
}

// entry is the ladder rung of the line's record (see recordEntry), built from
// the tree the preview parsed.
func (l *previewLine) entry(shown map[string]bool) (Entry, bool) {
	if !l.hasID {
		return Entry{}, false
	}
	return entryFor(l.id, l.parsed().child("data"), shown), true
}

// wholeBefore returns the data members the line's current rendering shows
// whole within its first n bytes.
func (l *previewLine) wholeBefore(n int) map[string]bool {
	out := map[string]bool{}
	for _, m := range l.whole[l.level] {
		// A repeated member name counts as its last rendering.
		if m.end <= n {
			out[m.key] = true
		} else {
			delete(out, m.key)
		}
	}
	return out
}

// fit tries to show lines within the budget, tightening the widest line first
// and cutting lines as a last resort. It reports false when even cut lines of
// this many records cannot fit.
func fit(label string, h handles, lines []*previewLine, total int) (string, PreviewResult, bool) {
	for _, l := range lines {
		l.level = 0
	}
	head := header(label, h, total, len(lines))
	texts := make([]string, len(lines))
	foot := footerSizer{h: h, more: total - len(lines)}
	for {
		var n counts
		size := len(head)
		widest := -1
		for i, l := range lines {
			t, c := l.render(l.level)
			texts[i] = t
			n.add(c)
			size += 1 + len(t)
			if l.level < len(previewLevels)-1 && (widest < 0 || len(t) > len(texts[widest])) {
				widest = i
			}
		}
		if fl := foot.size(n); fl > 0 {
			size += 1 + fl
		}
		// The note that counts the marks is part of the budget.
		note := markNote(n.marks + visible.Count(head))
		if note != "" {
			size += 1 + len(note)
		}
		if size <= PreviewBudget {
			res := result(total, len(lines), n, false)
			for _, l := range lines {
				res.Whole = append(res.Whole, l.wholeBefore(len(l.text[l.level])))
			}
			return joinLines(head, texts, footer(h, total-len(lines), n, false), note), res, true
		}
		if widest < 0 {
			return cutLines(h, head, texts, lines, total, n)
		}
		lines[widest].level++
	}
}

// cutLines shortens the longest lines to a common length so all fit. Each line
// keeps its prefix (and so its id) plus at least minLineJSON bytes.
func cutLines(h handles, head string, texts []string, lines []*previewLine, total int, n counts) (string, PreviewResult, bool) {
	foot := footer(h, total-len(lines), n, true)
	// Room for the note as long as the uncut lines would need (cutting
	// only ever leaves fewer marks).
	note := markNote(n.marks + visible.Count(head))
	avail := PreviewBudget - len(head) - 1 - len(foot) - len(texts)
	if note != "" {
		avail -= 1 + len(note)
	}
	floor := 0
	for _, l := range lines {
		floor = max(floor, len(l.prefix)+minLineJSON)
	}
	// The largest per-line cap c with sum(min(len, c)) <= avail.
	sizes := make([]int, len(texts))
	for i, t := range texts {
		sizes[i] = len(t)
	}
	slices.Sort(sizes)
	c, used := 0, 0
	for i, s := range sizes {
		rest := len(sizes) - i
		if used+s*rest <= avail {
			used += s
			c = s
			continue
		}
		c = (avail - used) / rest
		break
	}
	if c < floor {
		return "", PreviewResult{}, false
	}
	out := make([]string, len(texts))
	res := result(total, len(lines), n, true)
	marks := visible.Count(head)
	for i, t := range texts {
		shown := len(t)
		if len(t) > c {
			t = cutBytes(t, c)
			shown = len(t) - len(Ellipsis)
		}
		out[i] = t
		marks += visible.Count(t)
		res.Whole = append(res.Whole, lines[i].wholeBefore(shown))
	}
	return joinLines(head, out, foot, markNote(marks)), res, true
}

// markNote is the line that counts n hidden-character marks (visible.Note),
// or "" when there are none.
func markNote(n int) string {
	if n == 0 {
		return ""
	}
	return visible.Note(n)
}

func result(total, shown int, n counts, cut bool) PreviewResult {
	return PreviewResult{Total: total, Shown: shown, ValuesCut: n.cutValues, Truncated: cut || n.cutEntries > 0, BinaryValues: n.binary}
}

func joinLines(head string, lines []string, foot, note string) string {
	var b strings.Builder
	b.WriteString(head)
	for _, l := range lines {
		b.WriteByte('\n')
		b.WriteString(l)
	}
	for _, s := range [...]string{foot, note} {
		if s != "" {
			b.WriteByte('\n')
			b.WriteString(s)
		}
	}
	return b.String()
}

// header is the first line. shown = 0 leaves out "Showing up to". Handles
// are separated by spaces and never followed by punctuation, so a tokenizer
// or a key=(\S+) regex takes them whole; prose comes after a dash.
func header(label string, h handles, total, shown int) string {
	var b strings.Builder
	b.WriteString(label)
	b.WriteString(": ")
	b.WriteString(strconv.Itoa(total))
	b.WriteString(" record(s)")
	if h.hasMore {
		b.WriteString(" has_more=true")
	}
	if h.cursor != "" {
		b.WriteString(" " + handle("next_cursor", h.cursor))
	}
	if h.changesSince != "" {
		b.WriteString(" " + handle("next_changes_since", h.changesSince))
	}
	if h.count != "" {
		b.WriteString(" count=" + h.count)
	}
	if len(h.warnings) > 0 {
		b.WriteString(" warnings=")
		b.WriteString(strings.Join(h.warnings, ","))
	}
	var prose []string
	if h.hasMore && h.cursor == "" && h.changesSince == "" {
		prose = append(prose, "no next_cursor: pass connection_id to page one connection at a time.")
	}
	if shown > 0 {
		prose = append(prose, "Showing up to "+strconv.Itoa(shown)+":")
	}
	if len(prose) > 0 {
		b.WriteString(" — ")
		b.WriteString(strings.Join(prose, " "))
	}
	return b.String()
}

// handle prints name="value" (JSON-quoted), or a pointer to where the value is
// when it is too long to print.
func handle(name, value string) string {
	if len(value) > handleInline {
		return name + "=(" + strconv.Itoa(len(value)) + " bytes, too long for this preview: read structuredContent.data." + name + ")"
	}
	return name + "=" + string(jsonw.AppendString(nil, value))
}

// footerSizer measures footer(h, more, n, false) without writing it for
// every step of fit. The counts enter that text only as whether values were
// cut, whether entries were cut, and the number of values cut; so its length
// is that of the text for one cut value (one of four texts, each written
// once) plus the digits the actual number adds.
type footerSizer struct {
	h     handles
	more  int
	texts [2][2]string
	done  [2][2]bool
}

func (f *footerSizer) size(n counts) int {
	v, e := 0, 0
	if n.cutValues > 0 {
		v = 1
	}
	if n.cutEntries > 0 {
		e = 1
	}
	if !f.done[v][e] {
		f.texts[v][e], f.done[v][e] = footer(f.h, f.more, counts{cutValues: v, cutEntries: e}, false), true
	}
	size := len(f.texts[v][e])
	if v == 1 {
		size += len(strconv.Itoa(n.cutValues)) - 1
	}
	return size
}

// footer says what the preview left out and how to get it ("" when nothing).
// It advises only what works for this page: a smaller limit when a cursor
// pages on from it, fewer fields when fields were cut.
func footer(h handles, more int, n counts, lineCut bool) string {
	var facts, next []string
	if more > 0 {
		facts = append(facts, "more_records="+strconv.Itoa(more))
	}
	if n.cutValues > 0 {
		facts = append(facts, "values_cut="+strconv.Itoa(n.cutValues)+` (shown as "…[N chars]")`)
	}
	truncated := lineCut || n.cutEntries > 0
	if truncated {
		facts = append(facts, "record_preview_truncated=true")
	}
	if len(facts) == 0 {
		return ""
	}
	if n.cutValues > 0 || truncated {
		next = append(next, "fetch a shown id (or read_record_field with that id and a field_path) for full values")
	}
	switch {
	case more > 0 && h.cursorPages && truncated:
		next = append(next, "rerun with fewer fields, or a smaller limit from the same cursor, to preview every record here")
	case more > 0 && h.cursorPages:
		next = append(next, "rerun with a smaller limit from the same cursor to preview every record here")
	case more > 0 && !h.hasMore:
		// The header says nothing about paging here: say it.
		next = append(next, "pass connection_id to page one connection at a time and preview every record")
	}
	if truncated && !(more > 0 && h.cursorPages) {
		next = append(next, "rerun with fewer fields to see whole records")
	}
	return strings.Join(facts, "; ") + ". Next: " + strings.Join(next, "; ") + ". Machine envelope: structuredContent.data."
}
