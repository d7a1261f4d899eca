package pdpptest

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// GET /v1/search: lexical retrieval.
//
// The reference ranks with SQLite FTS5 over one index row per (connection,
// stream, record, lexical field), queries each (connection, stream, field)
// separately with bm25() and a candidate window of 200 rows, collapses field
// hits per record, orders each connection's hits by score and merges the
// connections round-robin. The double reproduces that: the same tokenizer
// rules (unicode61: letters and digits, case-folded, Latin diacritics removed),
// the same BM25 constants and statistics (over the whole index), the same
// snippet windows. On the gmail corpus its order and snippets equal the
// captured answers and its scores agree within rounding.

// lexicalCandidateWindow is the per-(connection, stream, field) candidate cap
// of the reference. A query that fills it may have missed matches, which the
// answer discloses in meta.recall.
const lexicalCandidateWindow = 200

// candidateWindow is the cap this server applies: the reference's unless
// Options.LexicalCandidateWindow lowers it.
func (svc *searchService) candidateWindow() int {
	if w := svc.s.opts.LexicalCandidateWindow; w > 0 {
		return w
	}
	return lexicalCandidateWindow
}

// bm25 constants of FTS5.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// snippetTokens is the snippet length the reference asks FTS5 for.
const snippetTokens = 48

// lexToken is one token of indexed or query text: its folded term and its
// byte span in the source text.
type lexToken struct {
	term       string
	start, end int
}

// tokenize splits s the way FTS5's unicode61 tokenizer does by default:
// tokens are runs of letters, digits and private-use characters; they are
// lower-cased and Latin diacritics are removed. Combining marks stay inside a
// token and are dropped from its term. Plain lower-case ASCII tokens reuse
// the text, which keeps index builds cheap.
func tokenize(s string) []lexToken {
	var out []lexToken
	for i := 0; i < len(s); {
		r, w := decodeRune(s, i)
		if !isTokenRune(r) {
			i += w
			continue
		}
		start, plain := i, true
		for i < len(s) {
			r, w = decodeRune(s, i)
			if !isTokenRune(r) {
				break
			}
			plain = plain && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
			i += w
		}
		term := s[start:i]
		if !plain {
			term = foldTerm(term)
		}
		if term != "" {
			out = append(out, lexToken{term: term, start: start, end: i})
		}
	}
	return out
}

// decodeRune reads the rune at byte i; invalid UTF-8 reads as U+FFFD, a
// separator.
func decodeRune(s string, i int) (rune, int) {
	if s[i] < utf8.RuneSelf {
		return rune(s[i]), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

func isTokenRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r) || unicode.Is(unicode.Mn, r)
}

// foldTerm folds every rune of a token.
func foldTerm(tok string) string {
	var b strings.Builder
	b.Grow(len(tok))
	for _, r := range tok {
		if f := foldRune(r); f != 0 {
			b.WriteRune(f)
		}
	}
	return b.String()
}

// foldRune lower-cases r and strips a Latin diacritic; combining marks fold
// to 0 (dropped).
func foldRune(r rune) rune {
	if unicode.Is(unicode.Mn, r) {
		return 0
	}
	r = unicode.ToLower(r)
	if base, ok := latinBase[r]; ok {
		return base
	}
	return r
}

// latinBase maps lower-case Latin letters with diacritics to their base
// letter, for Latin-1 Supplement and Latin Extended-A. Letters without a
// canonical decomposition (ø, æ, ß, ł, đ, ħ) keep their identity, as in FTS5.
var latinBase = func() map[rune]rune {
	groups := map[rune]string{
		'a': "àáâãäåāăą", 'c': "çćĉċč", 'd': "ď", 'e': "èéêëēĕėęě", 'g': "ĝğġģ", 'h': "ĥ",
		'i': "ìíîïĩīĭį", 'j': "ĵ", 'k': "ķ", 'l': "ĺļľ", 'n': "ñńņň", 'o': "òóôõöōŏő",
		'r': "ŕŗř", 's': "śŝşš", 't': "ţť", 'u': "ùúûüũūŭůűų", 'w': "ŵ", 'y': "ýÿŷ", 'z': "źżž",
	}
	m := map[rune]rune{}
	for base, letters := range groups {
		for _, r := range letters {
			m[r] = base
		}
	}
	return m
}()

// parseLexicalQuery turns q into FTS5 phrases the way the reference does: q
// is split on white space, each piece is one quoted phrase, and all phrases
// must match (implicit AND). A piece without any token (punctuation only)
// constrains nothing and is dropped.
func parseLexicalQuery(q string) [][]string {
	var phrases [][]string
	for _, piece := range strings.Fields(q) {
		var terms []string
		for _, t := range tokenize(piece) {
			terms = append(terms, t.term)
		}
		if len(terms) > 0 {
			phrases = append(phrases, terms)
		}
	}
	return phrases
}

// lexRow is one index row: one lexical field of one record.
type lexRow struct {
	id     int
	cs     *connectorState
	conn   string
	stream string
	field  string
	rec    *storedRecord
	text   string
	toks   []lexToken
}

// posting is one occurrence of a term: row id and token position.
type posting struct {
	row, pos int32
}

// lexicalIndex is the whole store's lexical index. BM25 statistics (row count,
// average row length, rows per phrase) are over all of it, as FTS5 computes
// them over the whole table whatever the query's WHERE clause.
type lexicalIndex struct {
	rows        []*lexRow
	postings    map[string][]posting
	totalTokens int
}

func buildLexicalIndex(st *store) *lexicalIndex {
	idx := &lexicalIndex{postings: map[string][]posting{}}
	for _, cs := range st.connectors {
		for _, conn := range cs.ds.Connections {
			for _, decl := range cs.manifest.Streams {
				if len(decl.Query.LexicalFields) == 0 {
					continue
				}
				for _, rec := range st.current(conn.ID, decl.Name) {
					for _, f := range decl.Query.LexicalFields {
						text, ok := rec.value(f).(string)
						if !ok || text == "" {
							continue
						}
						row := &lexRow{id: len(idx.rows), cs: cs, conn: conn.ID, stream: decl.Name, field: f, rec: rec, text: text, toks: tokenize(text)}
						idx.rows = append(idx.rows, row)
						idx.totalTokens += len(row.toks)
						for i, t := range row.toks {
							idx.postings[t.term] = append(idx.postings[t.term], posting{int32(row.id), int32(i)})
						}
					}
				}
			}
		}
	}
	return idx
}

// phraseMatches returns, per row containing the phrase, the token positions
// where it starts.
func (idx *lexicalIndex) phraseMatches(terms []string) map[int][]int {
	out := map[int][]int{}
	for _, p := range idx.postings[terms[0]] {
		toks := idx.rows[p.row].toks
		ok := int(p.pos)+len(terms) <= len(toks)
		for k := 1; ok && k < len(terms); k++ {
			ok = toks[int(p.pos)+k].term == terms[k]
		}
		if ok {
			out[int(p.row)] = append(out[int(p.row)], int(p.pos))
		}
	}
	return out
}

// lexicalMatch is a row matching every phrase, with its score and the phrase
// instances for the snippet.
type lexicalMatch struct {
	row   *lexRow
	score float64
	insts []phraseInst
}

// phraseInst is one phrase occurrence in a row.
type phraseInst struct {
	phrase, pos, size int
}

// match finds the rows matching all phrases and scores them with FTS5's bm25:
// lower is better.
func (idx *lexicalIndex) match(phrases [][]string) []*lexicalMatch {
	if len(phrases) == 0 || len(idx.rows) == 0 {
		return nil
	}
	hits := make([]map[int][]int, len(phrases))
	for i, ph := range phrases {
		hits[i] = idx.phraseMatches(ph)
	}
	n := float64(len(idx.rows))
	avgdl := float64(idx.totalTokens) / n
	idf := make([]float64, len(phrases))
	for i := range phrases {
		nHit := float64(len(hits[i]))
		idf[i] = math.Log((n - nHit + 0.5) / (nHit + 0.5))
		if idf[i] <= 0 {
			idf[i] = 1e-6
		}
	}
	var out []*lexicalMatch
	for rowID := range hits[0] {
		m := &lexicalMatch{row: idx.rows[rowID]}
		d := float64(len(m.row.toks))
		all := true
		for i := range phrases {
			pos, ok := hits[i][rowID]
			if !ok {
				all = false
				break
			}
			tf := float64(len(pos))
			// FTS5's bm25() term in its operation order; the conversion
			// keeps the compiler from fusing the multiply-add, so scores
			// agree with the reference's within rounding.
			m.score += float64(idf[i] * ((tf * (bm25K1 + 1.0)) / (tf + bm25K1*(1-bm25B+bm25B*d/avgdl))))
			for _, p := range pos {
				m.insts = append(m.insts, phraseInst{phrase: i, pos: p, size: len(phrases[i])})
			}
		}
		if !all {
			continue
		}
		m.score = -1.0 * m.score
		slices.SortFunc(m.insts, func(a, b phraseInst) int {
			if a.pos != b.pos {
				return a.pos - b.pos
			}
			return a.phrase - b.phrase
		})
		out = append(out, m)
	}
	return out
}

// snippet renders FTS5's snippet(): the best window of snippetTokens tokens
// (favouring distinct phrases, then sentence starts), matches wrapped in
// <mark>…</mark>, and "…" where text was cut at either end.
func snippet(m *lexicalMatch, nPhrase int) string {
	toks := m.row.toks
	n := len(toks)
	starts := sentenceStarts(m.row.text, toks)
	bestScore, bestStart := 0, 0
	for _, in := range m.insts {
		if s, adj := snippetScore(m.insts, nPhrase, n, in.pos); s > bestScore {
			bestScore, bestStart = s, adj
		}
		if len(starts) == 0 || n <= snippetTokens {
			continue
		}
		j := 0
		for ; j < len(starts)-1; j++ {
			if starts[j+1] > in.pos {
				break
			}
		}
		if starts[j] < in.pos {
			s, _ := snippetScore(m.insts, nPhrase, n, starts[j])
			if starts[j] == 0 {
				s += 120
			} else {
				s += 100
			}
			if s > bestScore {
				bestScore, bestStart = s, starts[j]
			}
		}
	}
	return highlight(m.row.text, toks, m.insts, bestStart, bestStart+snippetTokens-1)
}

// snippetScore scores the window starting at token from: 1000 per distinct
// phrase seen, 1 per repeat. adj is the start that centres the matches found.
func snippetScore(insts []phraseInst, nPhrase, nTokens, from int) (score, adj int) {
	seen := make([]bool, nPhrase)
	first, last := -1, 0
	for _, in := range insts {
		if in.pos < from || in.pos >= from+snippetTokens {
			continue
		}
		if seen[in.phrase] {
			score++
		} else {
			score += 1000
		}
		seen[in.phrase] = true
		if first < 0 {
			first = in.pos
		}
		last = in.pos + in.size
	}
	adj = first - (snippetTokens-(last-first))/2
	if adj+snippetTokens > nTokens {
		adj = nTokens - snippetTokens
	}
	return score, max(adj, 0)
}

// sentenceStarts lists the tokens that start a sentence: the first token and
// every token preceded by white space that follows a '.' or ':'.
func sentenceStarts(text string, toks []lexToken) []int {
	var out []int
	for i, t := range toks {
		if i == 0 {
			out = append(out, 0)
			continue
		}
		j := t.start - 1
		for j >= 0 && strings.IndexByte(" \t\n\r", text[j]) >= 0 {
			j--
		}
		if j != t.start-1 && j >= 0 && (text[j] == '.' || text[j] == ':') {
			out = append(out, i)
		}
	}
	return out
}

// highlight copies tokens [from, to] of text with overlapping phrase
// instances merged and marked. Text before the first token is kept when the
// window starts at the beginning, text after the last when it reaches the end.
func highlight(text string, toks []lexToken, insts []phraseInst, from, to int) string {
	type span struct{ start, end int }
	var spans []span
	for _, in := range insts {
		end := in.pos + in.size - 1
		if len(spans) > 0 && in.pos <= spans[len(spans)-1].end {
			spans[len(spans)-1].end = max(spans[len(spans)-1].end, end)
			continue
		}
		spans = append(spans, span{in.pos, end})
	}
	k := 0
	for k < len(spans) && spans[k].start < from {
		k++
	}
	var b strings.Builder
	if from > 0 {
		b.WriteString("…")
	}
	off, open := 0, false
	for pos := from; pos <= to && pos < len(toks); pos++ {
		t := toks[pos]
		if pos == from && from > 0 {
			off = t.start
		}
		if k < len(spans) && pos == spans[k].start {
			b.WriteString(text[off:t.start])
			b.WriteString("<mark>")
			off, open = t.start, true
		}
		if k < len(spans) && pos == spans[k].end {
			b.WriteString(text[off:t.end])
			b.WriteString("</mark>")
			off, open = t.end, false
			k++
		}
		if pos == to {
			b.WriteString(text[off:t.end])
			off = t.end
			if open {
				b.WriteString("</mark>")
			}
		}
	}
	if to >= len(toks)-1 {
		b.WriteString(text[off:])
	} else {
		b.WriteString("…")
	}
	return b.String()
}

// storeSignature changes whenever any (connection, stream) table is written:
// table versions only grow.
func storeSignature(st *store) string {
	st.mu.RLock()
	defer st.mu.RUnlock()
	var b strings.Builder
	for _, cs := range st.connectors {
		for _, conn := range cs.ds.Connections {
			for _, decl := range cs.manifest.Streams {
				if t := st.tables[tableKey{conn.ID, decl.Name}]; t != nil {
					fmt.Fprintf(&b, "%d,", t.version)
				}
			}
		}
	}
	return b.String()
}

// lexicalHit is one record in a lexical result list.
type lexicalHit struct {
	src     *searchSource
	stream  string
	rec     *storedRecord
	matched []string
	score   float64
	// best is the best-scoring field match, which gives the snippet;
	// nPhrase is the query's phrase count.
	best    *lexicalMatch
	nPhrase int
}

// snippet is the hit's snippet: field and marked text. It is computed when
// a page is rendered, from the immutable row, so only shown hits pay for it.
func (h *lexicalHit) snippet() (field, text string) {
	return h.best.row.field, snippet(h.best, h.nPhrase)
}

// lexicalRecall is what meta.recall and meta.count disclose about a ranking.
type lexicalRecall struct {
	ranked, sources, truncatedSources int
	// window is the candidate cap the ranking ran with.
	window int
}

// lexicalRank ranks the sources for q: per source, one query per (stream,
// field) capped at the candidate window, field hits collapsed per record
// (best score wins the snippet), hits ordered by score; sources merged
// round-robin so none dominates the first pages.
func (svc *searchService) lexicalRank(q string, sources []*searchSource) ([]*lexicalHit, *lexicalRecall) {
	idx := svc.lex.get(svc.s.store, buildLexicalIndex)
	phrases := parseLexicalQuery(q)
	type scope struct{ conn, stream, field string }
	byScope := map[scope][]*lexicalMatch{}
	for _, m := range idx.match(phrases) {
		k := scope{m.row.conn, m.row.stream, m.row.field}
		byScope[k] = append(byScope[k], m)
	}
	window := svc.candidateWindow()
	recall := &lexicalRecall{sources: len(sources), window: window}
	perSource := make([][]*lexicalHit, len(sources))
	for i, src := range sources {
		truncated := false
		collapsed := map[string]*lexicalHit{}
		var order []*lexicalHit
		for _, e := range src.entries {
			for _, f := range e.fields {
				var rows []*lexicalMatch
				for _, m := range byScope[scope{src.conn.ID, e.sc.decl.Name, f}] {
					if e.allowed(m.row.rec) {
						rows = append(rows, m)
					}
				}
				slices.SortFunc(rows, func(a, b *lexicalMatch) int {
					if c := cmp.Compare(a.score, b.score); c != 0 {
						return c
					}
					return a.row.id - b.row.id
				})
				if len(rows) >= window {
					rows, truncated = rows[:window], true
				}
				for _, m := range rows {
					h := collapsed[e.sc.decl.Name+"\x00"+m.row.rec.key]
					if h == nil {
						h = &lexicalHit{src: src, stream: e.sc.decl.Name, rec: m.row.rec, score: m.score,
							best: m, nPhrase: len(phrases), matched: []string{f}}
						collapsed[e.sc.decl.Name+"\x00"+m.row.rec.key] = h
						order = append(order, h)
						continue
					}
					if !slices.Contains(h.matched, f) {
						h.matched = append(h.matched, f)
					}
					if m.score < h.score {
						h.score, h.best = m.score, m
					}
				}
			}
		}
		slices.SortStableFunc(order, func(a, b *lexicalHit) int { return cmp.Compare(a.score, b.score) })
		perSource[i] = order
		recall.ranked += len(order)
		if truncated {
			recall.truncatedSources++
		}
	}
	var merged []*lexicalHit
	for depth := 0; ; depth++ {
		progress := false
		for _, hits := range perSource {
			if depth < len(hits) {
				merged = append(merged, hits[depth])
				progress = true
			}
		}
		if !progress {
			return merged, recall
		}
	}
}

// handleLexical answers GET /v1/search.
func (svc *searchService) handleLexical(c *call) error {
	p, snap, off, aerr := svc.pagedSearch(c, modeLexical, lexicalFieldsOf, "",
		func(snap *searchSnapshot, p *searchParams, sources []*searchSource) {
			snap.lexical, snap.recall = svc.lexicalRank(p.q, sources)
		})
	if aerr != nil {
		return aerr
	}
	from, to, more := pageBounds(len(snap.lexical), off, p.limit)
	data := make([]any, 0, to-from)
	for _, h := range snap.lexical[from:to] {
		data = append(data, lexicalHitObject(c.who.owner(), h))
	}
	body := obj("has_more", more, "object", "list", "url", "/v1/search")
	body.setIf(more, "next_cursor", encodeSearchCursor("", snap.id, to))
	body.set("data", data)
	body.set("meta", lexicalMeta(snap.recall, p.warnings))
	return c.ok(body)
}

// lexicalHitObject renders one search_result in the reference's key order.
func lexicalHitObject(owner bool, h *lexicalHit) *object {
	o := &object{}
	if at, ok := authoredAt(h.rec); ok {
		o.set("authored_at", at)
	}
	o.set("connector_id", h.src.cs.key())
	o.set("emitted_at", h.rec.emittedAt)
	o.set("matched_fields", h.matched)
	o.set("object", "search_result")
	o.set("record_key", h.rec.key)
	o.set("record_url", recordURL(owner, h.src.cs, h.stream, h.rec.key))
	o.set("stream", h.stream)
	addConnection(o, h.src.conn)
	field, text := h.snippet()
	o.set("snippet", obj("field", field, "text", text))
	read := obj("field", field, "method", "GET", "object", "field_window_read", "record_id", h.rec.key,
		"route", "/v1/streams/"+encodeURIComponent(h.stream)+"/records/"+encodeURIComponent(h.rec.key)+"/field-window",
		"stream", h.stream, "connection_id", h.src.conn.ID)
	// truncated is always true: the excerpt is a snippet, never the field.
	o.set("evidence_excerpts", []any{obj("field_path", field, "object", "evidence_excerpt",
		"preview_text", text, "provenance", "lexical_match", "read", read, "truncated", true)})
	o.set("score", obj("kind", "bm25", "order", "lower_is_better", "value", h.score))
	return o
}

// lexicalMeta is the lexical envelope's meta: an integer count, how exact it
// is, and the recall disclosure. A window that filled up makes the count a
// lower bound and the ranking incomplete.
func lexicalMeta(r *lexicalRecall, warnings []any) *object {
	if r.truncatedSources == 0 {
		return obj("count", r.ranked, "count_accuracy", "exact",
			"recall", obj("complete", true, "ranked_candidate_count", r.ranked, "ranking_scope", "all_matches",
				"sources_searched_count", r.sources, "truncated", false),
			"warnings", warningsOrEmpty(warnings))
	}
	return obj("count", r.ranked, "count_accuracy", "lower_bound",
		"recall", obj("complete", false, "ranked_candidate_count", r.ranked, "ranking_scope", "candidate_window",
			"truncated", true, "candidate_window_limit", r.window,
			"sources_searched_count", r.sources, "truncated_source_count", r.truncatedSources),
		"warnings", warningsOrEmpty(warnings))
}
