package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/evidence"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// Search bounds.
const (
	// defaultSearchLimit is how many hits a search returns without limit.
	defaultSearchLimit = 25
	// searchTextBudget is the most bytes search text takes, however many hits.
	searchTextBudget = 1792
	// searchTextHits is the most hits the text lists.
	searchTextHits = 10
	// searchTextReads is how many listed hits also show a read of their
	// evidence.
	searchTextReads = 2
	// resultSnippetChars bounds structuredContent.results[].snippet.
	resultSnippetChars = 320
	// maxSourceMix bounds the source_mix entries in text.
	maxSourceMix = 8
	// largerSlack is room kept for what a larger page adds to the header
	// (more source_mix entries) before a larger limit is advised.
	largerSlack = 160
)

const searchInput = `{
 "type": "object",
 "properties": {
  "q": {"type": "string", "minLength": 1, "description": "What to find; lexical mode matches words."},
  "streams": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}, "description": "Only these streams."},
  "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "Hits to return, 1-100 (default 25)."},
  "cursor": {"type": "string", "minLength": 1, "description": "next_cursor of the previous page."},
  "mode": {"type": "string", "enum": ["lexical", "semantic", "hybrid"], "description": "Default lexical."},
  "filter": ` + filterProp + `,
  "connection_id": ` + connectionIDProp + `
 },
 "required": ["q"],
 "additionalProperties": false
}`

const searchOutput = `{
 "type": "object",
 "properties": {
  "data": {"type": "object"},
  "results": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}, "title": {"type": "string"}, "url": {"type": "string"}}, "required": ["id", "title", "url"]}},
  "content_ladder": {"type": "object"},
  "provider_url": {"type": "string"},
  "request_id": {"type": "string"},
  "error": {"type": "object"}
 }
}`

var searchTool = &spec[searchArgs]{
	def: &mcp.Tool{
		Name:  "search",
		Title: "Search PDPP records",
		Description: "Find records across granted streams. Read-only. " +
			"Page lexical and semantic results with cursor (hybrid has none). Each result id is a self-contained handle: pass it to fetch as shown, " +
			"with no connection_id. Searchable fields are flagged lex/sem in schema(stream).",
		Annotations:  readOnly("Search PDPP records"),
		InputSchema:  mustSchema("search", searchInput),
		OutputSchema: mustSchema("search", searchOutput),
	},
	args:  newArgSpec("search", searchInput, map[string]string{"filter": CodeInvalidFilter}),
	check: (*searchArgs).check,
	run:   runSearch,
}

type searchArgs struct {
	Q            string    `json:"q"`
	Streams      []string  `json:"streams"`
	Limit        *float64  `json:"limit"`
	Cursor       string    `json:"cursor"`
	Mode         string    `json:"mode"`
	Filter       filterArg `json:"filter"`
	ConnectionID string    `json:"connection_id"`
}

// searchPaths maps a mode to its RS route.
var searchPaths = map[string]string{"": "/v1/search", "lexical": "/v1/search", "semantic": "/v1/search/semantic", "hybrid": "/v1/search/hybrid"}

func (a *searchArgs) check() error {
	if strings.TrimSpace(a.Q) == "" {
		return &toolError{Code: CodeInvalidArguments, Param: "q", Message: "q is blank", Next: "pass the words to find"}
	}
	if a.Mode == "hybrid" && a.Cursor != "" {
		return &toolError{Code: CodeInvalidArguments, Param: "cursor",
			Message: "hybrid search returns a single page and takes no cursor",
			Next:    "drop cursor, or page with mode lexical or semantic"}
	}
	if len(a.Filter) > 0 && len(a.Streams) != 1 {
		return &toolError{Code: CodeInvalidFilter, Param: "filter",
			Message: "filter applies to one stream's fields, so search needs exactly one entry in streams with it",
			Next:    `pass streams: ["<stream>"] with filter, or drop filter`}
	}
	return nil
}

func (a *searchArgs) query() rs.Query {
	q := rs.Query{{Key: "q", Value: a.Q}}
	for _, s := range a.Streams {
		q.Add("streams", s)
	}
	if a.Limit != nil {
		q.Add("limit", strconv.Itoa(int(*a.Limit)))
	}
	if a.Cursor != "" {
		q.Add("cursor", a.Cursor)
	}
	if a.ConnectionID != "" {
		q.Add("connection_id", a.ConnectionID)
	}
	return append(q, a.Filter...)
}

// searchResult is one entry of structuredContent.results.
type searchResult struct {
	ID           string `json:"id"`
	Title        string `json:"title"`
	URL          string `json:"url"`
	ConnectionID string `json:"connection_id,omitempty"`
	ConnectorKey string `json:"connector_key,omitempty"`
	Stream       string `json:"stream,omitempty"`
	RecordKey    string `json:"record_key,omitempty"`
	DisplayName  string `json:"display_name,omitempty"`
	// Title and Snippet are shown under the visible rule, like the text.
	Snippet string `json:"snippet,omitempty"`
	// marked is the hit's snippet text read once, for the text line.
	marked evidence.Marked
}

type searchStructured struct {
	Data          json.RawMessage `json:"data"`
	Results       []searchResult  `json:"results"`
	ContentLadder evidence.Ladder `json:"content_ladder"`
	ProviderURL   string          `json:"provider_url"`
	RequestID     string          `json:"request_id,omitempty"`
}

func runSearch(ctx context.Context, env *Env, a *searchArgs) (*mcp.CallToolResult, error) {
	path := searchPaths[a.Mode]
	// The declared roles are read (once per credential) beside the search.
	pending := env.startRoles(ctx)
	body, resp, err := getObject(ctx, env, path, a.query())
	if err != nil {
		return nil, err
	}
	doc := evidence.ParseBody(body)
	top := readSearchTop(doc)
	// Each hit is read once, here; shaping and the ladder use what was read.
	var hits []evidence.Hit
	top.data.ForEach(func(_, v gjson.Result) bool {
		h, _ := evidence.ReadHit(v)
		hits = append(hits, h)
		return true
	})
	limit := defaultSearchLimit
	if a.Limit != nil {
		limit = int(*a.Limit)
	}
	extra := 0
	if len(hits) > limit {
		// limit is the number of hits returned, whatever the RS sent.
		extra, hits = len(hits)-limit, hits[:limit]
	}
	scope := evidence.Scope{ConnectionID: a.ConnectionID}
	results := make([]searchResult, len(hits))
	base := providerURL(env, resp)
	roles := pending.roles(ctx)
	for i := range hits {
		results[i] = hitResult(base, &hits[i], scope, roles)
	}
	sc := &searchStructured{
		Data:          envelopeWithoutHits(doc, len(results)),
		Results:       results,
		ContentLadder: evidence.SearchLadder(hits, scope),
		ProviderURL:   providerURL(env, resp),
		RequestID:     resp.RequestID,
	}
	var l links
	for _, r := range results {
		l.record(r.ID)
	}
	res := &mcp.CallToolResult{
		Content:           append([]mcp.Content{&mcp.TextContent{Text: searchText(top, results, sc.ContentLadder, searchPage{extra: extra, limit: limit, hybrid: a.Mode == "hybrid", cursor: a.Cursor != ""})}}, l.out...),
		StructuredContent: sc,
	}
	if enc, ok := sc.encode(); ok {
		res.StructuredContent = enc
	}
	return res, nil
}

// hitResult shapes one RS hit. Its id embeds the hit's connection whenever the
// hit (or the connection_id argument) names one, and is exactly the id text
// shows and fetch accepts. roles are the declared roles of the grant (nil
// when unknown).
func hitResult(base string, h *evidence.Hit, scope evidence.Scope, roles *roleTable) searchResult {
	r := searchResult{Stream: h.Stream, DisplayName: h.DisplayName, RecordKey: h.RecordKey}
	r.ConnectionID = cmp.Or(h.ConnectionID, scope.ConnectionID)
	r.ConnectorKey = evidence.ShortConnectorKey(h.ConnectorKey)
	id, ok := h.Identity(scope)
	if ok {
		r.ID = id.String()
		r.URL = recordURL(base, id, h.RecordURL)
	} else if h.RecordURL != "" && base != "" {
		r.URL = strings.TrimSuffix(base, "/") + h.RecordURL
	}
	// A hit carries no record fields; its snippet is the primary-title value
	// when it comes from that field and was not cut (no ellipsis at either
	// end).
	opts := evidence.TitleOptions{Stream: r.Stream, Fallback: r.ID}
	text, hasText := h.SnippetText()
	var marked evidence.Marked // text normalised once for both its forms
	if hasText {
		marked = evidence.Mark(text)
	}
	if f := roles.lookup(r.Stream, r.ConnectionID).title(); f != "" {
		opts.PrimaryTitleField = f
		// The whole snippet, as the RS wrote it: Title applies the
		// visible rule (and the length bound) to what it picks.
		if hasText && h.SnippetField() == f {
			if t := marked.Text(); !wasCut(t) {
				opts.PrimaryTitle = t
			}
		}
	}
	r.Title = evidence.Title(h.Raw, opts)
	if hasText {
		r.Snippet = marked.Snippet(resultSnippetChars)
		r.marked = marked
	}
	return r
}

// searchTop holds the top-level members of a search answer that shaping
// reads, taken in one pass: a gjson Get per member would skip over every hit
// again for each.
type searchTop struct {
	data, hasMore, nextCursor, url, meta gjson.Result
}

// readSearchTop reads doc's members; of a repeated name the first counts, as
// with gjson's Get.
func readSearchTop(doc gjson.Result) searchTop {
	var t searchTop
	doc.ForEach(func(k, v gjson.Result) bool {
		var dst *gjson.Result
		switch k.Str {
		case "data":
			dst = &t.data
		case "has_more":
			dst = &t.hasMore
		case "next_cursor":
			dst = &t.nextCursor
		case "url":
			dst = &t.url
		case "meta":
			dst = &t.meta
		}
		if dst != nil && !dst.Exists() {
			*dst = v
		}
		return true
	})
	return t
}

// envelopeWithoutHits is the RS envelope with its hit array replaced by a
// count and a pointer to structuredContent.results, key order kept.
func envelopeWithoutHits(doc gjson.Result, n int) json.RawMessage {
	var w jsonWriter
	w.beginObject()
	doc.ForEach(func(k, v gjson.Result) bool {
		if k.Str == "data" && v.IsArray() {
			return true
		}
		w.member(k.Str, v.Raw)
		return true
	})
	w.member("result_count", strconv.Itoa(n))
	w.member("results_ref", `"structuredContent.results"`)
	w.endObject()
	return w.bytes()
}

// searchPage is what searchText needs to know about the call beyond the
// answer: it decides which continuation advice is true for this answer.
type searchPage struct {
	// extra counts hits the RS sent beyond limit (dropped).
	extra, limit int
	hybrid       bool
	// cursor: the call passed a cursor.
	cursor bool
}

// searchText is the model-visible answer, at most searchTextBudget bytes:
//
//	search: [K of] N hit(s) [listed] has_more=true next_cursor="…" first_fetch_id=<id> source_mix=… — [recall warning]
//	1. id=<id> connector_key=… stream=… display_name="…" title="…" snippet="…"
//	   evidence field_path=… read_record_field args={…}
//	…
//	<what is not listed and how to reach it; how to fetch>
//
// The header and footer are never cut; hits are listed while they fit. Ids
// are never shortened. The header counts what the text lists, and says the
// total when it lists fewer; every step the text advises works for this
// answer: a larger limit only when it would list more, a smaller limit only
// where a cursor pages on from it, args lines only when one is shown.
func searchText(top searchTop, results []searchResult, ladder evidence.Ladder, pg searchPage) string {
	rsMore := top.hasMore.Type == gjson.True
	a := searchAdvice{
		tail:    searchTail(top, results, pg),
		pg:      pg,
		hasMore: rsMore || pg.extra > 0,
		// A cursor pages on from a smaller limit unless the RS answered
		// with more hits and no cursor (a package searched without
		// connection_id).
		cursorPages: !pg.hybrid && (top.nextCursor.Str != "" || !rsMore),
	}
	if searchMarks(a.tail, results, ladder) {
		a.reserve = noteRoom
	}
	items := searchItems(results, ladder)
	shown, withReads, size := a.fill(items, len(results))
	larger := a.largerLists(items, shown, len(results), size, withReads)
	var b strings.Builder
	b.WriteString(a.header(shown, len(results)))
	for i := range items[:shown] {
		it := &items[i]
		b.WriteString("\n" + it.text())
		if it.withRead {
			b.WriteString(it.read)
		}
	}
	if f := a.footer(shown, len(results), withReads, larger); f != "" {
		b.WriteString("\n" + f)
	}
	if n := visible.Count(b.String()); n > 0 {
		b.WriteString("\n" + visible.Note(n))
	}
	return b.String()
}

// noteRoom is the room the line counting hidden-character marks takes, for
// any count a text can hold.
var noteRoom = 1 + len(visible.Note(99999))

// searchMarks reports whether the text of an answer may hold marks: its
// header tail does, or a hit's title, snippet, labels or evidence read do.
func searchMarks(tail string, results []searchResult, ladder evidence.Ladder) bool {
	if strings.Contains(tail, visible.Open) {
		return true
	}
	for _, e := range ladder.Records {
		if len(e.FieldWindows) > 0 && (strings.Contains(e.FieldWindows[0].FieldPath, visible.Open) ||
			strings.Contains(e.FieldWindows[0].Read.Args.Q, visible.Open)) {
			return true
		}
	}
	for _, r := range results {
		if strings.Contains(r.Title, visible.Open) || strings.Contains(r.Snippet, visible.Open) ||
			!visible.Clean(r.ConnectionID) || !visible.Clean(r.ConnectorKey) || !visible.Clean(r.Stream) || !visible.Clean(r.DisplayName) {
			return true
		}
	}
	return false
}

// searchTail is what follows the header's count: the page's handles
// (has_more, next_cursor, first_fetch_id), totals, warnings, then prose
// after a dash. Handles are separated by spaces and never followed by
// punctuation, so a tokenizer or a key=(\S+) regex takes them whole.
func searchTail(top searchTop, results []searchResult, pg searchPage) string {
	var tail strings.Builder
	if top.hasMore.Type == gjson.True || pg.extra > 0 {
		tail.WriteString(" has_more=true")
	}
	if c := top.nextCursor.Str; c != "" {
		tail.WriteString(" next_cursor=" + jsonString(c))
	}
	meta := top.meta
	if c := meta.Get("count"); c.Type == gjson.Number {
		tail.WriteString(" total_matches=" + c.Raw)
		if acc := meta.Get("count_accuracy").Str; acc != "" {
			tail.WriteString(" count_accuracy=" + inline(acc))
		}
	}
	if len(results) > 0 && results[0].ID != "" {
		tail.WriteString(" first_fetch_id=" + results[0].ID)
	}
	if mix := sourceMix(results); mix != "" {
		tail.WriteString(" source_mix=" + mix)
	}
	var codes []string
	meta.Get("warnings").ForEach(func(_, w gjson.Result) bool {
		if c := w.Get("code").Str; c != "" {
			codes = append(codes, inline(c))
		}
		return true
	})
	if len(codes) > 0 {
		tail.WriteString(" warnings=" + strings.Join(codes, ","))
	}
	var prose []string
	if pg.extra > 0 {
		prose = append(prose, fmt.Sprintf("The resource server sent %d hits beyond limit=%d; they are not included.", pg.extra, pg.limit))
	}
	if w := recallWarning(meta); w != "" {
		prose = append(prose, w)
	}
	for _, w := range sourceWarnings(meta) {
		prose = append(prose, w.message)
	}
	if len(prose) > 0 {
		tail.WriteString(" — " + strings.Join(prose, " "))
	}
	return tail.String()
}

// searchAdvice writes the header and footer of one search answer. Each
// takes the number of hits listed and the page's hit count n, so the text
// of a larger page can be sized before advising one.
type searchAdvice struct {
	tail                 string
	pg                   searchPage
	hasMore, cursorPages bool
	// reserve is room kept for the line that counts marks (noteRoom) when
	// the answer may hold some.
	reserve int
}

func (a searchAdvice) header(shown, n int) string {
	if shown < n {
		return "search: " + strconv.Itoa(shown) + " of " + strconv.Itoa(n) + " hit(s) listed" + a.tail
	}
	return "search: " + strconv.Itoa(n) + " hit(s)" + a.tail
}

// hybridPaging is the way through every match of a hybrid search, which has
// no cursor. A hybrid hit may come from either ranking alone, so both are
// paged. A semantic ranking takes its candidates from the nearest fields of
// each connection, as many as its page size calls for: paged with fewer hits
// per page than the hybrid search took, it ranks fewer and never reaches the
// deeper matches, so the pages are the largest there are.
const hybridPaging = "search with mode lexical and with mode semantic, both with limit=100, and page each by its next_cursor to reach every match"

// reach says what is not listed and the one step that reaches it in this
// answer, or "".
func (a searchAdvice) reach(shown, n int, larger bool) string {
	unlisted := n - shown
	what := ""
	switch {
	case unlisted > 0:
		what = strconv.Itoa(unlisted) + " more hit(s) not listed (ids in structuredContent.results)"
	case a.hasMore && a.pg.hybrid && larger:
		return "More hits exist: search again with a larger limit (up to 100), or " + hybridPaging + "."
	case a.hasMore && !a.cursorPages && !a.pg.hybrid:
		what = "More hits exist but no next_cursor came back"
	case a.hasMore && a.pg.hybrid:
		what = "More hits exist"
	default:
		return ""
	}
	switch {
	case a.pg.hybrid:
		return what + ": hybrid search has no cursor, so " + hybridPaging + ", or narrow q or streams."
	case !a.cursorPages:
		return what + ": pass connection_id to page one connection at a time."
	case shown == 0:
		return what + ": narrow q or streams."
	}
	// A cursor is bound to its query, limit included (a package's cursors
	// are): a smaller limit starts again from the first page.
	from := ""
	if a.pg.cursor {
		from = " and no cursor"
	}
	return what + ": to list them, search again with limit=" + strconv.Itoa(shown) + from + ", then page by next_cursor."
}

func (a searchAdvice) footer(shown, n int, withReads, larger bool) string {
	var f []string
	if r := a.reach(shown, n, larger); r != "" {
		f = append(f, r)
	}
	if shown > 0 {
		s := "fetch(id) with an id exactly as shown (it names its connection)"
		if withReads {
			s += "; read_record_field with the args shown reads more of a field"
		}
		f = append(f, s+".")
	}
	return strings.Join(f, " ")
}

// total is the size of the answer whose listed lines take size bytes.
func (a searchAdvice) total(size, shown, n int, withReads, larger bool) int {
	t := len(a.header(shown, n)) + size + a.reserve
	if f := a.footer(shown, n, withReads, larger); f != "" {
		t += 1 + len(f)
	}
	return t
}

// searchItem is a hit that can be listed, with the read of its best
// evidence. Its line is written when first needed: the budget stops
// listing at the first line that does not fit, and the lines after it are
// never read.
type searchItem struct {
	n        int // the hit's position, from 1
	result   *searchResult
	line     string
	lineDone bool
	read     string
	withRead bool
}

// text is the item's line (hitLine).
func (it *searchItem) text() string {
	if !it.lineDone {
		it.line, it.lineDone = hitLine(it.n, *it.result), true
	}
	return it.line
}

func searchItems(results []searchResult, ladder evidence.Ladder) []searchItem {
	reads := map[string]evidence.TextField{}
	for _, e := range ladder.Records {
		if len(e.FieldWindows) > 0 {
			reads[e.ID] = e.FieldWindows[0]
		}
	}
	var items []searchItem
	for i, r := range results {
		if len(items) == searchTextHits {
			break
		}
		if r.ID == "" {
			continue // no record identity: nothing to fetch; counted in the footer
		}
		it := searchItem{n: i + 1, result: &results[i]}
		// fill shows the reads of the first searchTextReads items only.
		if w, ok := reads[r.ID]; ok && len(items) < searchTextReads {
			// Ladder strings are already under the visible rule.
			it.read = "\n   evidence field_path=" + inlineShown(w.FieldPath) + " read_record_field args=" + compactJSON(w.Read.Args)
		}
		items = append(items, it)
	}
	return items
}

// fill chooses what the budget lists, in order of value: the first three
// hits, then the evidence reads of the first two, then further hits. It
// marks the items whose read is shown and returns how many are listed and
// the bytes they take.
func (a searchAdvice) fill(items []searchItem, n int) (shown int, withReads bool, size int) {
	fits := func(extra, shownAfter int, readsAfter bool) bool {
		return a.total(size, shownAfter, n, readsAfter, false)+extra <= searchTextBudget
	}
	addHits := func(upTo int) {
		for shown < min(upTo, len(items)) && fits(1+len(items[shown].text()), shown+1, withReads) {
			size += 1 + len(items[shown].text())
			shown++
		}
	}
	addHits(3)
	for i := 0; i < min(searchTextReads, shown); i++ {
		if items[i].read != "" && fits(len(items[i].read), shown, true) {
			items[i].withRead, withReads = true, true
			size += len(items[i].read)
		}
	}
	addHits(len(items))
	return shown, withReads, size
}

// largerLists reports whether a larger limit would list more: only for
// hybrid search (which has no cursor), when every hit is listed, the text
// lists fewer than it can, and the text of a page of 100 hits would still
// fit another line as long as the longest here (with room for a wider
// source_mix).
func (a searchAdvice) largerLists(items []searchItem, shown, n, size int, withReads bool) bool {
	if !a.pg.hybrid || a.pg.limit >= 100 || shown != n || shown == 0 || shown >= searchTextHits {
		return false
	}
	longest := 0
	for i := range items[:shown] {
		longest = max(longest, len(items[i].text()))
	}
	return a.total(size, shown+1, 100, withReads, false)+1+longest+largerSlack <= searchTextBudget
}

// hitLine lists one hit: its complete id, source labels, title and snippet.
// Labels are shortened to keep the line short; the id never is.
func hitLine(n int, r searchResult) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(n) + ". id=" + r.ID)
	if r.ConnectionID != "" && !strings.HasPrefix(r.ID, r.ConnectionID+"/") {
		b.WriteString(" connection_id=" + inline(r.ConnectionID))
	}
	if r.ConnectorKey != "" {
		b.WriteString(" connector_key=" + inline(shorten(r.ConnectorKey, 60)))
	}
	if r.Stream != "" {
		b.WriteString(" stream=" + inline(shorten(r.Stream, 60)))
	}
	// A title built from the source label already names it. The title and
	// snippet are already under the visible rule; the labels are not.
	if r.DisplayName != "" && !strings.HasPrefix(r.Title, visible.String(r.DisplayName)+" / ") {
		b.WriteString(" display_name=" + jsonString(shorten(r.DisplayName, 60)))
	}
	if r.Title != "" && r.Title != r.ID {
		t, _ := visible.CutShown(r.Title, 80)
		b.WriteString(" title=" + shownJSON(t))
	}
	// A snippet that is the whole title adds only its highlights.
	if r.Snippet != "" {
		if m := r.marked; m.Plain(evidence.TitleMaxChars+1) != r.Title {
			b.WriteString(" snippet=" + shownJSON(m.Snippet(96)))
		}
	}
	return b.String()
}

// wasCut reports whether a snippet is an excerpt: an ellipsis at either end.
func wasCut(s string) bool {
	s = strings.TrimSpace(s)
	for _, e := range []string{"…", "..."} {
		if strings.HasPrefix(s, e) || strings.HasSuffix(s, e) {
			return true
		}
	}
	return s == ""
}

func shorten(s string, n int) string {
	out, _ := evidence.Cut(s, n)
	return out
}

// sourceMix counts hits per connection when they come from more than one:
// {connection_id:…,connector_key:…,count:N}|…, at most maxSourceMix entries.
func sourceMix(results []searchResult) string {
	type source struct {
		conn, key string
		n         int
	}
	var order []*source
	by := map[string]*source{}
	for _, r := range results {
		k := r.ConnectionID + "\x00" + r.ConnectorKey
		s := by[k]
		if s == nil {
			s = &source{conn: r.ConnectionID, key: r.ConnectorKey}
			by[k] = s
			order = append(order, s)
		}
		s.n++
	}
	if len(order) < 2 {
		return ""
	}
	var parts []string
	for i, s := range order {
		if i == maxSourceMix {
			parts = append(parts, "more:"+strconv.Itoa(len(order)-maxSourceMix))
			break
		}
		p := "{connection_id:" + cmp.Or(inline(s.conn), "none")
		if s.key != "" {
			p += ",connector_key:" + inline(s.key)
		}
		parts = append(parts, p+",count:"+strconv.Itoa(s.n)+"}")
	}
	return strings.Join(parts, "|")
}

// recallWarning says when the RS ranked a bounded candidate window rather
// than every match, from meta.recall only (never from has_more or counts).
func recallWarning(meta gjson.Result) string {
	r := meta.Get("recall")
	if !r.IsObject() || (r.Get("ranking_scope").Str != "candidate_window" && r.Get("complete").Type != gjson.False) {
		return ""
	}
	var facts []string
	for _, k := range []string{"ranked_candidate_count", "candidate_window_limit", "truncated_source_count"} {
		if v := r.Get(k); v.Type == gjson.Number {
			facts = append(facts, k+"="+v.Raw)
		}
	}
	s := "Recall: ranked over a bounded candidate window, not all matches"
	if len(facts) > 0 {
		s += " (" + strings.Join(facts, ", ") + ")"
	}
	return s + "; more matches may exist, so this page is not exhaustive."
}

// maxSourceWarnings bounds the source messages a text repeats.
const maxSourceWarnings = 3

// sourceCodes are the warnings a package adds about one of its sources: a
// source that did not answer (the answer is partial), and a source whose
// answer named connections it does not hold (those entries are left out).
var sourceCodes = map[string]bool{
	"source_unavailable":     true,
	"source_entries_refused": true,
	"source_hits_refused":    true,
}

// sourceWarning is one of those warnings, its message bounded.
type sourceWarning struct{ code, message string }

// sourceWarnings are the source warnings of meta.warnings, at most
// maxSourceWarnings of them, then one that counts the rest.
func sourceWarnings(meta gjson.Result) []sourceWarning {
	var out []sourceWarning
	n := 0
	meta.Get("warnings").ForEach(func(_, w gjson.Result) bool {
		code := w.Get("code").Str
		if !sourceCodes[code] {
			return true
		}
		n++
		if len(out) < maxSourceWarnings {
			out = append(out, sourceWarning{code, evidence.Snippet(w.Get("message").Str, 200)})
		}
		return true
	})
	if n > len(out) {
		out = append(out, sourceWarning{"more_source_warnings", fmt.Sprintf("%d more source warning(s) (structuredContent.data.meta.warnings).", n-len(out))})
	}
	return out
}
