package pdpptest

import (
	"crypto/sha512"
	"math"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// GET /v1/search/semantic: semantic retrieval.
//
// The reference's configured backend in the captures is its deterministic
// stub ("pdpp-reference-stub-embed-v0", 64 dimensions, cosine): a text's
// vector is its SHA-512 digest, one byte per dimension mapped to [-1, 1] and
// normalised. The double embeds the same way and computes distances in the
// same float32 arithmetic, so its distances equal the captured ones. Like the
// stub, it captures exact-text matches, not meaning.

const (
	semanticDimensions = 64
	semanticModel      = "pdpp-reference-stub-embed-v0"
	// semanticInputMax is how much of a field is embedded, in UTF-16 code
	// units as the reference (a JavaScript server) counts them.
	semanticInputMax = 2048
	// semanticExcerptMax bounds snippet.text, in UTF-16 code units.
	semanticExcerptMax = 160
)

type semVector [semanticDimensions]float32

// embedText is the stub embedding. Every step rounds to float32 exactly
// where the reference stores into a Float32Array.
func embedText(text string) semVector {
	var v semVector
	if text == "" {
		return v
	}
	digest := sha512.Sum512([]byte(text))
	var norm float64
	for i := range v {
		v[i] = float32(float64(digest[i%len(digest)])/127.5 - 1.0)
		norm += float64(v[i]) * float64(v[i])
	}
	norm = math.Sqrt(norm)
	if norm == 0 {
		norm = 1
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / norm)
	}
	return v
}

// semanticDistance is the cosine distance of two unit vectors, accumulated
// in float32. The explicit conversions keep the compiler from fusing the
// multiply-add, which would change the last bits.
func semanticDistance(a, b *semVector) float32 {
	var dot float32
	for i := range a {
		p := float32(a[i] * b[i])
		dot = float32(dot + p)
	}
	return float32(1 - dot)
}

// utf16Prefix is s cut to at most n UTF-16 code units, as JavaScript's
// slice(0, n) cuts it; a surrogate pair split in half becomes U+FFFD, which
// is what the half encodes to in UTF-8. cut reports whether anything was
// removed.
func utf16Prefix(s string, n int) (prefix string, cut bool) {
	units := 0
	for i, r := range s {
		w := utf16.RuneLen(r)
		if w < 0 {
			w = 1
		}
		if units+w > n {
			if w == 2 && units+1 == n {
				return s[:i] + string(utf8.RuneError), true
			}
			return s[:i], true
		}
		units += w
	}
	return s, false
}

// utf16Len counts UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if w := utf16.RuneLen(r); w > 0 {
			n += w
		} else {
			n++
		}
	}
	return n
}

// semanticExcerpt is the semantic snippet: the field's start, up to
// semanticExcerptMax units, cut at the last space when that keeps more than
// 40 units, with "…" when anything was cut.
func semanticExcerpt(text string) string {
	head, cut := utf16Prefix(text, semanticExcerptMax)
	if !cut {
		return text
	}
	if i := strings.LastIndexByte(head, ' '); i >= 0 && utf16Len(head[:i]) > 40 {
		return head[:i] + "…"
	}
	return head + "…"
}

// semRow is one embedded field of one record.
type semRow struct {
	cs       *connectorState
	conn     string
	stream   string
	field    string
	scopeKey string
	rec      *storedRecord
	vec      semVector
}

type semanticIndex struct {
	// byConn holds each connection's rows in storage order.
	byConn map[string][]*semRow
}

func buildSemanticIndex(st *store) *semanticIndex {
	idx := &semanticIndex{byConn: map[string][]*semRow{}}
	for _, cs := range st.connectors {
		for _, conn := range cs.ds.Connections {
			for _, decl := range cs.manifest.Streams {
				for _, rec := range st.current(conn.ID, decl.Name) {
					for _, f := range decl.Query.SemanticFields {
						text, ok := rec.value(f).(string)
						if !ok || text == "" {
							continue
						}
						input, _ := utf16Prefix(text, semanticInputMax)
						key, _ := marshal([]string{decl.Name, f})
						idx.byConn[conn.ID] = append(idx.byConn[conn.ID], &semRow{cs: cs, conn: conn.ID, stream: decl.Name,
							field: f, scopeKey: string(key), rec: rec, vec: embedText(input)})
					}
				}
			}
		}
	}
	return idx
}

// semanticHit is one record in a semantic result list.
type semanticHit struct {
	src      *searchSource
	entry    *searchEntry
	key      string
	matched  []string
	distance float32
	topField string
	scopeKey string
}

// semanticCandidates is how many nearest fields each connection contributes
// before records are collapsed: enough to survive several fields of one
// record matching, as in the reference. Records whose fields all fall
// outside it are not found, however many pages are read.
func semanticCandidates(limit int) int {
	return min(100, max(25, (limit*3+1)/2, limit+10))
}

// compareSemantic is the reference's total order: distance, connector,
// (stream, field), record key; the connection breaks remaining ties.
func compareSemantic(ad float32, acs, ascope, akey, aconn string, bd float32, bcs, bscope, bkey, bconn string) int {
	switch {
	case ad < bd:
		return -1
	case ad > bd:
		return 1
	}
	for _, c := range [][2]string{{acs, bcs}, {ascope, bscope}, {akey, bkey}, {aconn, bconn}} {
		if c := strings.Compare(c[0], c[1]); c != 0 {
			return c
		}
	}
	return 0
}

// semanticRank embeds q, takes each connection's nearest fields, merges them
// under the total order and collapses them per record (best distance, fields
// in distance order).
func (svc *searchService) semanticRank(q string, limit int, sources []*searchSource) []*semanticHit {
	idx := svc.sem.get(svc.s.store, buildSemanticIndex)
	qv := embedText(func() string { s, _ := utf16Prefix(q, semanticInputMax); return s }())
	type cand struct {
		row   *semRow
		src   *searchSource
		entry *searchEntry
		dist  float32
	}
	cmp := func(a, b cand) int {
		return compareSemantic(a.dist, a.row.cs.key(), a.row.scopeKey, a.row.rec.key, a.row.conn,
			b.dist, b.row.cs.key(), b.row.scopeKey, b.row.rec.key, b.row.conn)
	}
	var merged []cand
	for _, src := range sources {
		var cands []cand
		for _, row := range idx.byConn[src.conn.ID] {
			for _, e := range src.entries {
				if e.sc.decl.Name == row.stream && slices.Contains(e.fields, row.field) && e.allowed(row.rec) {
					cands = append(cands, cand{row, src, e, semanticDistance(&qv, &row.vec)})
					break
				}
			}
		}
		slices.SortFunc(cands, cmp)
		merged = append(merged, cands[:min(len(cands), semanticCandidates(limit))]...)
	}
	slices.SortFunc(merged, cmp)
	byRecord := map[string]*semanticHit{}
	var hits []*semanticHit
	for _, cd := range merged {
		k := cd.row.conn + "\x00" + cd.row.stream + "\x00" + cd.row.rec.key
		if h := byRecord[k]; h != nil {
			if !slices.Contains(h.matched, cd.row.field) {
				h.matched = append(h.matched, cd.row.field)
			}
			continue
		}
		h := &semanticHit{src: cd.src, entry: cd.entry, key: cd.row.rec.key, matched: []string{cd.row.field},
			distance: cd.dist, topField: cd.row.field, scopeKey: cd.row.scopeKey}
		byRecord[k] = h
		hits = append(hits, h)
	}
	slices.SortStableFunc(hits, func(a, b *semanticHit) int {
		return compareSemantic(a.distance, a.src.cs.key(), a.scopeKey, a.key, a.src.conn.ID,
			b.distance, b.src.cs.key(), b.scopeKey, b.key, b.src.conn.ID)
	})
	return hits
}

// hydrate reads the hit's record as it is now, as the reference does when it
// renders a page: emitted_at and the snippet come from the current record,
// and a record gone since the ranking has neither.
func (svc *searchService) hydrate(h *semanticHit) (rec *storedRecord, snip *object) {
	rec = svc.s.store.get(h.src.conn.ID, h.entry.sc.decl.Name, h.key)
	if !h.entry.sc.visible(rec) {
		return nil, nil
	}
	if text, ok := rec.value(h.topField).(string); ok && text != "" {
		snip = obj("field", h.topField, "text", semanticExcerpt(text))
	}
	return rec, snip
}

// handleSemantic answers GET /v1/search/semantic.
func (svc *searchService) handleSemantic(c *call) error {
	p, snap, off, aerr := svc.pagedSearch(c, modeSemantic, semanticFieldsOf, semanticCursorPrefix,
		func(snap *searchSnapshot, p *searchParams, sources []*searchSource) {
			snap.sem = svc.semanticRank(p.q, p.limit, sources)
		})
	if aerr != nil {
		return aerr
	}
	from, to, more := pageBounds(len(snap.sem), off, p.limit)
	data := make([]any, 0, to-from)
	for _, h := range snap.sem[from:to] {
		data = append(data, svc.semanticHitObject(c.who.owner(), h))
	}
	body := obj("has_more", more, "object", "list", "url", "/v1/search/semantic")
	body.setIf(more, "next_cursor", encodeSearchCursor(semanticCursorPrefix, snap.id, to))
	body.set("data", data)
	// Semantic answers carry meta only for warnings; the envelope adds the
	// default count after links, as the reference does.
	if len(p.warnings) > 0 {
		body.set("meta", obj("count", obj("kind", "none"), "warnings", p.warnings))
	}
	return c.ok(body)
}

// semanticHitObject renders one search_result in the reference's key order.
func (svc *searchService) semanticHitObject(owner bool, h *semanticHit) *object {
	rec, snip := svc.hydrate(h)
	o := &object{}
	var emitted any
	if rec != nil {
		if at, ok := authoredAt(rec); ok {
			o.set("authored_at", at)
		}
		emitted = rec.emittedAt
	}
	stream := h.entry.sc.decl.Name
	o.set("connector_id", h.src.cs.key())
	o.set("emitted_at", emitted)
	o.set("matched_fields", h.matched)
	o.set("object", "search_result")
	o.set("record_key", h.key)
	o.set("record_url", recordURL(owner, h.src.cs, stream, h.key))
	o.set("retrieval_mode", "semantic")
	o.set("stream", stream)
	addConnection(o, h.src.conn)
	o.setIf(snip != nil, "snippet", snip)
	o.set("score", semanticScore(h))
	return o
}

func semanticScore(h *semanticHit) *object {
	return obj("kind", "semantic_distance", "order", "lower_is_better", "value", float64(h.distance))
}
