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
)

const searchInput = `{
 "type": "object",
 "properties": {
  "q": {"type": "string", "minLength": 1, "description": "What to find; lexical mode matches words."},
  "streams": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}, "description": "Only these streams."},
  "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "Hits to return, 1-100 (default 25)."},
  "cursor": {"type": "string", "minLength": 1, "description": "next_cursor of the previous page (not in hybrid mode)."},
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
  "data": {"type": "object", "description": "The RS envelope (paging, counts, recall) without its hits."},
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
		Description: "Find records across granted streams (GET /v1/search, /v1/search/semantic, /v1/search/hybrid). Read-only. " +
			"limit is capped at 100; page lexical and semantic results with cursor (hybrid has none). Each result id is a self-contained handle: pass it to fetch as shown, " +
			"with no connection_id. Results name connection_id and connector_key; searchable fields are flagged lex/sem in /v1/schema.",
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
	Snippet      string `json:"snippet,omitempty"`
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
	body, resp, err := getObject(ctx, env, path, a.query())
	if err != nil {
		return nil, err
	}
	doc := gjson.ParseBytes(body)
	top := readSearchTop(doc)
	var hits []gjson.Result
	top.data.ForEach(func(_, h gjson.Result) bool {
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
	for i, h := range hits {
		results[i] = hitResult(providerURL(env, resp), h, scope)
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
	return &mcp.CallToolResult{
		Content:           append([]mcp.Content{&mcp.TextContent{Text: searchText(top, results, sc.ContentLadder, extra, limit, a.Mode == "hybrid")}}, l.out...),
		StructuredContent: sc,
	}, nil
}

// hitResult shapes one RS hit. Its id embeds the hit's connection whenever the
// hit (or the connection_id argument) names one, and is exactly the id text
// shows and fetch accepts.
func hitResult(base string, h gjson.Result, scope evidence.Scope) searchResult {
	var r searchResult
	// One pass over the hit's members; a Get per member would rescan it.
	var m struct{ conn, alias, key, connector, recordKey, recordID, recordURL string }
	var snippet gjson.Result
	h.ForEach(func(k, v gjson.Result) bool {
		if k.Str == "snippet" {
			snippet = v
		}
		if v.Type != gjson.String {
			return true
		}
		switch k.Str {
		case "connection_id":
			m.conn = v.Str
		case "connector_instance_id":
			m.alias = v.Str
		case "connector_key":
			m.key = v.Str
		case "connector_id":
			m.connector = v.Str
		case "stream":
			r.Stream = v.Str
		case "record_key":
			m.recordKey = v.Str
		case "record_id":
			m.recordID = v.Str
		case "display_name":
			r.DisplayName = v.Str
		case "record_url":
			m.recordURL = v.Str
		}
		return true
	})
	r.ConnectionID = cmp.Or(m.conn, m.alias, scope.ConnectionID)
	r.ConnectorKey = evidence.ShortConnectorKey(cmp.Or(m.key, m.connector))
	r.RecordKey = cmp.Or(m.recordKey, m.recordID)
	id, ok := evidence.Identity(h, scope)
	if ok {
		r.ID = id.String()
		r.URL = recordURL(base, id, m.recordURL)
	} else if m.recordURL != "" && base != "" {
		r.URL = strings.TrimSuffix(base, "/") + m.recordURL
	}
	r.Title = evidence.Title(h, evidence.TitleOptions{Stream: r.Stream, Fallback: r.ID})
	if snippet.IsObject() {
		snippet = snippet.Get("text")
	}
	if snippet.Type == gjson.String {
		r.Snippet = evidence.Snippet(snippet.Str, resultSnippetChars)
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

// searchText is the model-visible answer, at most searchTextBudget bytes:
//
//	search: N hit(s) has_more=true next_cursor="…" first_fetch_id=<id> source_mix=… — [how to reach more hits] [recall warning]
//	1. id=<id> connector_key=… stream=… display_name="…" title="…" snippet="…"
//	   evidence field_path=… read_record_field args={…}
//	…
//	<what is not shown and how to get it; how to fetch>
//
// The header and footer are never cut; hits are listed while they fit. Ids
// are never shortened.
func searchText(top searchTop, results []searchResult, ladder evidence.Ladder, extra, limit int, hybrid bool) string {
	// Handles are separated by spaces and never followed by punctuation, so
	// a tokenizer or a key=(\S+) regex takes them whole; prose comes after
	// a dash.
	var head strings.Builder
	head.WriteString("search: " + strconv.Itoa(len(results)) + " hit(s)")
	hasMore := top.hasMore.Type == gjson.True || extra > 0
	if hasMore {
		head.WriteString(" has_more=true")
	}
	if c := top.nextCursor.Str; c != "" {
		head.WriteString(" next_cursor=" + jsonString(c))
	}
	meta := top.meta
	if c := meta.Get("count"); c.Type == gjson.Number {
		head.WriteString(" total_matches=" + c.Raw)
		if acc := meta.Get("count_accuracy").Str; acc != "" {
			head.WriteString(" count_accuracy=" + inline(acc))
		}
	}
	if len(results) > 0 && results[0].ID != "" {
		head.WriteString(" first_fetch_id=" + results[0].ID)
	}
	if mix := sourceMix(results); mix != "" {
		head.WriteString(" source_mix=" + mix)
	}
	var codes []string
	meta.Get("warnings").ForEach(func(_, w gjson.Result) bool {
		if c := w.Get("code").Str; c != "" {
			codes = append(codes, inline(c))
		}
		return true
	})
	if len(codes) > 0 {
		head.WriteString(" warnings=" + strings.Join(codes, ","))
	}
	var prose []string
	if extra > 0 {
		prose = append(prose, fmt.Sprintf("The resource server sent %d hits beyond limit=%d; they are not included.", extra, limit))
	}
	if m := moreHits(hybrid, top.nextCursor.Str != "", limit); hasMore && m != "" {
		prose = append(prose, m)
	}
	if w := recallWarning(meta); w != "" {
		prose = append(prose, w)
	}
	prose = append(prose, sourceWarnings(meta)...)
	if len(prose) > 0 {
		head.WriteString(" — " + strings.Join(prose, " "))
	}

	reads := map[string]evidence.TextField{}
	for _, e := range ladder.Records {
		if len(e.FieldWindows) > 0 {
			reads[e.ID] = e.FieldWindows[0]
		}
	}
	footer := func(shown int) string {
		if len(results) == 0 {
			return ""
		}
		var f []string
		if rest := len(results) - shown; rest > 0 {
			how := "or search with a smaller limit and page by cursor"
			if hybrid {
				how = "or search with a smaller limit (hybrid search has no cursor)"
			}
			f = append(f, fmt.Sprintf("%d more hit(s) not listed: ids in structuredContent.results, %s.", rest, how))
		}
		f = append(f, "fetch(id) with an id exactly as shown (it names its connection); read_record_field with the args shown reads more of a field.")
		return strings.Join(f, " ")
	}
	// Hits that can be listed, each with the read of its best evidence.
	type item struct {
		line, read string
		withRead   bool
	}
	var items []item
	for i, r := range results {
		if len(items) == searchTextHits {
			break
		}
		if r.ID == "" {
			continue // no record identity: nothing to fetch; counted in the footer
		}
		it := item{line: hitLine(i+1, r)}
		if w, ok := reads[r.ID]; ok {
			it.read = "\n   evidence field_path=" + inline(w.FieldPath) + " read_record_field args=" + compactJSON(w.Read.Args)
		}
		items = append(items, it)
	}
	// Fill the budget in order of value: the first three hits, then the
	// evidence reads of the first two, then further hits.
	size, shown := head.Len(), 0
	fits := func(extra, shownAfter int) bool {
		return size+extra+1+len(footer(shownAfter)) <= searchTextBudget
	}
	addHits := func(upTo int) {
		for shown < min(upTo, len(items)) && fits(1+len(items[shown].line), shown+1) {
			size += 1 + len(items[shown].line)
			shown++
		}
	}
	addHits(3)
	for i := 0; i < min(searchTextReads, shown); i++ {
		if items[i].read != "" && fits(len(items[i].read), shown) {
			items[i].withRead = true
			size += len(items[i].read)
		}
	}
	addHits(len(items))
	var lines []string
	for _, it := range items[:shown] {
		if it.withRead {
			it.line += it.read
		}
		lines = append(lines, it.line)
	}
	out := head.String()
	if len(lines) > 0 {
		out += "\n" + strings.Join(lines, "\n")
	}
	if f := footer(shown); f != "" {
		out += "\n" + f
	}
	return out
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
		b.WriteString(" connector_key=" + shorten(inline(r.ConnectorKey), 60))
	}
	if r.Stream != "" {
		b.WriteString(" stream=" + shorten(inline(r.Stream), 60))
	}
	// A title built from the source label already names it.
	if r.DisplayName != "" && !strings.HasPrefix(r.Title, r.DisplayName+" / ") {
		b.WriteString(" display_name=" + jsonString(shorten(r.DisplayName, 60)))
	}
	if r.Title != "" && r.Title != r.ID {
		b.WriteString(" title=" + jsonString(shorten(r.Title, 80)))
	}
	if r.Snippet != "" {
		b.WriteString(" snippet=" + jsonString(evidence.Snippet(r.Snippet, 96)))
	}
	return b.String()
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

// moreHits says how to reach the hits beyond this page. Hybrid search has no
// cursor: the way on is a larger limit, or a paged mode.
func moreHits(hybrid, hasCursor bool, limit int) string {
	switch {
	case hybrid && limit < 100:
		return "More hits exist: search again with a larger limit (up to 100), or with mode lexical or semantic to page through every match."
	case hybrid:
		return "More hits exist beyond the 100 hybrid search returns: narrow q or streams, or search with mode lexical or semantic to page through every match."
	case hasCursor:
		return "" // next_cursor says it
	}
	return "More hits exist but no next_cursor came back: pass connection_id to page one connection at a time."
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

// maxSourceWarnings bounds the source_unavailable messages a text repeats.
const maxSourceWarnings = 3

// sourceWarnings are the messages of meta.warnings[code=source_unavailable]:
// a source of a package that did not answer, so the answer is partial.
func sourceWarnings(meta gjson.Result) []string {
	var out []string
	n := 0
	meta.Get("warnings").ForEach(func(_, w gjson.Result) bool {
		if w.Get("code").Str != "source_unavailable" {
			return true
		}
		n++
		if len(out) < maxSourceWarnings {
			out = append(out, evidence.Snippet(w.Get("message").Str, 200))
		}
		return true
	})
	if n > len(out) {
		out = append(out, fmt.Sprintf("%d more source(s) unavailable (structuredContent.data.meta.warnings).", n-len(out)))
	}
	return out
}
