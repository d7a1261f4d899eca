package pdpptest

import (
	"slices"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// GET /v1/search/hybrid: the first page of lexical and of semantic retrieval,
// merged. One page only: there is no cursor, and has_more
// says whether the merged list was cut at limit.

// hybridItem is one merged record.
type hybridItem struct {
	connectorKey, stream, key, recordURL string
	emittedAt                            any
	conn                                 dataset.Connection
	matched                              []string
	lexical, semantic                    bool
	// scores keeps the order in which the sources found the record.
	scores  *object
	snippet *object
}

// handleHybrid answers GET /v1/search/hybrid.
func (svc *searchService) handleHybrid(c *call) error {
	p, aerr := parseSearchParams(c, modeHybrid)
	if aerr != nil {
		return aerr
	}
	lexSources, aerr := c.searchSources(p, lexicalFieldsOf)
	if aerr != nil {
		return aerr
	}
	semSources, aerr := c.searchSources(p, semanticFieldsOf)
	if aerr != nil {
		return aerr
	}
	owner := c.who.owner()
	lexHits, _ := svc.lexicalRank(p.q, lexSources)
	lexHits = lexHits[:min(len(lexHits), p.limit)]
	semHits := svc.semanticRank(p.q, p.limit, semSources)
	semHits = semHits[:min(len(semHits), p.limit)]

	// Round-robin, lexical first at each rank; a record found by both keeps
	// its first position. Records are matched on (connector, stream, key), as
	// in the reference, so the same key under two connections of a connector
	// counts once.
	var order []*hybridItem
	byKey := map[string]*hybridItem{}
	add := func(it *hybridItem, source string, score *object) {
		k := it.connectorKey + "\x00" + it.stream + "\x00" + it.key
		cur := byKey[k]
		if cur == nil {
			it.scores = obj(source, score)
			byKey[k] = it
			order = append(order, it)
			return
		}
		for _, f := range it.matched {
			if !slices.Contains(cur.matched, f) {
				cur.matched = append(cur.matched, f)
			}
		}
		cur.lexical = cur.lexical || it.lexical
		cur.semantic = cur.semantic || it.semantic
		cur.scores.set(source, score)
		if cur.snippet == nil {
			cur.snippet = it.snippet
		}
	}
	for i := 0; i < max(len(lexHits), len(semHits)); i++ {
		if i < len(lexHits) {
			h := lexHits[i]
			it := &hybridItem{connectorKey: h.src.cs.key(), stream: h.stream, key: h.rec.key,
				recordURL: recordURL(owner, h.src.cs, h.stream, h.rec.key), emittedAt: h.rec.emittedAt,
				conn: h.src.conn, matched: append([]string(nil), h.matched...), lexical: true}
			field, text := h.snippet()
			it.snippet = obj("field", field, "text", text)
			add(it, "lexical", obj("kind", "bm25", "order", "lower_is_better", "value", h.score))
		}
		if i < len(semHits) {
			h := semHits[i]
			rec, snip := svc.hydrate(h)
			var emitted any
			if rec != nil {
				emitted = rec.emittedAt
			}
			stream := h.entry.sc.decl.Name
			add(&hybridItem{connectorKey: h.src.cs.key(), stream: stream, key: h.key,
				recordURL: recordURL(owner, h.src.cs, stream, h.key), emittedAt: emitted, conn: h.src.conn,
				matched: append([]string(nil), h.matched...), semantic: true, snippet: snip}, "semantic", semanticScore(h))
		}
	}
	more := len(order) > p.limit
	order = order[:min(len(order), p.limit)]
	data := make([]any, 0, len(order))
	for _, it := range order {
		data = append(data, it.object())
	}
	body := obj("data", data, "has_more", more, "object", "list", "url", "/v1/search/hybrid")
	if len(p.warnings) > 0 {
		body.set("meta", obj("count", obj("kind", "none"), "warnings", p.warnings))
	}
	return c.ok(body)
}

// object renders the merged search_result in the reference's key order.
func (it *hybridItem) object() *object {
	var sources []string
	if it.lexical {
		sources = append(sources, "lexical")
	}
	if it.semantic {
		sources = append(sources, "semantic")
	}
	o := obj("connector_id", it.connectorKey, "emitted_at", it.emittedAt, "object", "search_result",
		"record_key", it.key, "record_url", it.recordURL, "stream", it.stream,
		"matched_fields", it.matched, "retrieval_mode", "hybrid", "retrieval_sources", sources)
	addConnection(o, it.conn)
	o.set("scores", it.scores)
	o.setIf(it.snippet != nil, "snippet", it.snippet)
	return o
}
