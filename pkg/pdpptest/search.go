package pdpptest

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// Search routes: GET /v1/search (lexical), /v1/search/semantic and
// /v1/search/hybrid. This file holds what the three share:
// parameter parsing, the per-connection search plan, snapshots and cursors.
// The retrieval itself lives in search_lexical.go, search_semantic.go and
// search_hybrid.go.

const (
	searchDefaultLimit = 25
	searchMaxLimit     = 100
	// searchSnapshotTTL is how long a ranked result list stays pageable, as
	// in the reference.
	searchSnapshotTTL = 5 * time.Minute
	// searchSnapshotCap bounds the snapshots kept per server; the oldest go
	// first and their cursors then answer invalid_cursor like expired ones.
	searchSnapshotCap = 1024
)

// searchService is the per-server state of the search routes: the indexes
// (rebuilt when the store changes) and the snapshots behind cursors. It lives
// in the route closures, so it dies with the server.
type searchService struct {
	s     *Server
	lex   indexCache[lexicalIndex]
	sem   indexCache[semanticIndex]
	snaps snapshotStore
}

// mountSearch registers the search routes. Semantic and hybrid are unmounted
// (plain 404) when switched off, as the reference does without a backend.
func (s *Server) mountSearch(m *http.ServeMux) {
	svc := &searchService{s: s}
	m.HandleFunc("GET /v1/search", s.read(svc.handleLexical))
	if !s.opts.DisableSemantic {
		m.HandleFunc("GET /v1/search/semantic", s.read(svc.handleSemantic))
		if !s.opts.DisableHybrid {
			m.HandleFunc("GET /v1/search/hybrid", s.read(svc.handleHybrid))
		}
	}
}

// searchMode names the three retrieval surfaces.
type searchMode int

const (
	modeLexical searchMode = iota
	modeSemantic
	modeHybrid
)

// lexicalParams is the lexical allowlist. Semantic and hybrid accept the same
// keys (hybrid without cursor) and name retrievalBanned explicitly.
var lexicalParams = set("q", "limit", "cursor", "streams", "filter", "connection_id", "connector_instance_id")

// retrievalBanned are the semantic and hybrid parameters the reference rejects
// by name: callers may not steer embeddings, blending or projection.
var retrievalBanned = set("vector", "embedding", "embed", "model", "model_id", "model_family", "rank", "boost",
	"weights", "blend", "connector_id", "fields", "expand", "expand_limit", "order", "sort", "mode")

// searchParams is a validated search request.
type searchParams struct {
	q      string
	limit  int
	cursor string
	// streams is the requested stream filter; nil searches every stream.
	streams []string
	// filter is set when the (owner) request carries filter[...]; it then
	// applies to the one stream in streams.
	filter    bool
	connID    string
	aliasUsed bool
	// warnings go to meta.warnings in this order.
	warnings []any
}

// parseSearchParams validates a search request in the reference's order: the
// client filter/expand ban, the allowlist, q, limit, cursor, streams, the
// filter-needs-one-stream rule, then the connection alias.
func parseSearchParams(c *call, mode searchMode) (*searchParams, *apiError) {
	if aerr := clientBan(c.who, c.q); aerr != nil {
		return nil, aerr
	}
	for _, k := range c.q.keys() {
		if mode == modeHybrid && k == "cursor" {
			return nil, badRequest("cursor pagination is not supported on /v1/search/hybrid").param("cursor")
		}
		if !lexicalParams[k] || (mode != modeLexical && retrievalBanned[k]) {
			return nil, badRequest("Unsupported query parameter: %s", k).param(k)
		}
	}
	p := &searchParams{}
	// A repeated or bracketed q is not a string in the reference either.
	if n := c.q.node("q"); n != nil && !n.nested() && len(n.vals) == 1 {
		p.q = n.vals[0]
	}
	if p.q == "" {
		return nil, badRequest("q is required").param("q")
	}
	p.limit = searchDefaultLimit
	if v, present, err := c.q.single("limit"); present && err == nil {
		if n, ok := searchLimit(v); ok {
			p.limit = n
			if n > searchMaxLimit {
				p.limit = searchMaxLimit
				rest := "Follow next_cursor for the rest."
				if mode == modeHybrid {
					rest = "Hybrid search has no cursor: narrow q or streams, or page /v1/search and /v1/search/semantic for the rest."
				}
				p.warnings = append(p.warnings, limitClampedWarning("limit", n, searchMaxLimit,
					fmt.Sprintf("limit %d exceeds the maximum of %d; at most %d results are returned. %s", n, searchMaxLimit, searchMaxLimit, rest)))
			}
		}
	}
	if v, _, err := c.q.single("cursor"); err == nil {
		p.cursor = v
	} else if c.q.has("cursor") {
		return nil, errf(http.StatusBadRequest, "invalid_cursor", "Cursor is malformed").param("cursor")
	}
	for _, s := range c.q.list("streams") {
		if s = strings.TrimSpace(s); s != "" {
			p.streams = append(p.streams, s)
		}
	}
	if c.q.has("filter") {
		if len(p.streams) != 1 {
			return nil, badRequest("filter[...] requires exactly one streams[] value (e.g. ?streams[]=messages&filter[received_at][gte]=...); filter[stream] and filter[connector_id] are not supported").param("streams")
		}
		p.filter = true
	}
	var aerr *apiError
	if p.connID, p.aliasUsed, aerr = c.connectionParam(); aerr != nil {
		return nil, aerr
	}
	if p.aliasUsed {
		p.warnings = append([]any{aliasWarning()}, p.warnings...)
	}
	return p, nil
}

// searchLimit reads limit the way the reference does (a JavaScript Number,
// floored): junk, zero and negatives fall back to the default, which the
// caller sees as ok=false.
func searchLimit(v string) (int, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 1 {
		return 0, false
	}
	return int(min(f, 1e9)), true
}

// searchSource is one connection being searched, with the streams and fields
// the caller may search in it. Sources are searched independently and merged.
type searchSource struct {
	cs      *connectorState
	conn    dataset.Connection
	entries []*searchEntry
}

// searchEntry is one stream of a source.
type searchEntry struct {
	sc *streamScope
	// fields are the searchable fields: declared for the retrieval mode and
	// inside the grant, in declared order.
	fields  []string
	filters []filterSpec
}

// allowed reports whether a record may contribute hits: visible under the
// grant (time window, resources) and passing the owner's filters.
func (e *searchEntry) allowed(r *storedRecord) bool {
	if !e.sc.visible(r) {
		return false
	}
	for _, f := range e.filters {
		if !f.match(r) {
			return false
		}
	}
	return true
}

// declaredFieldsFunc picks the fields a stream declares for one retrieval mode.
type declaredFieldsFunc func(*dataset.StreamDecl) []string

func lexicalFieldsOf(d *dataset.StreamDecl) []string  { return d.Query.LexicalFields }
func semanticFieldsOf(d *dataset.StreamDecl) []string { return d.Query.SemanticFields }

// searchSources builds the plan: one source per connection in scope (connector
// registration order, then connection order), each with its streams in
// manifest order. A client naming a stream outside its grant is 403; streams
// are a soft filter for the owner. Connections with nothing searchable are
// left out, so sources_searched_count counts real work.
func (c *call) searchSources(p *searchParams, declared declaredFieldsFunc) ([]*searchSource, *apiError) {
	if c.who.client() {
		for _, name := range p.streams {
			if c.who.grant.Stream(name) == nil {
				return nil, errf(http.StatusForbidden, "grant_stream_not_allowed", "Stream '%s' not in grant", name).param("streams")
			}
		}
	}
	scopes, aerr := c.readableStreams(p.connID, "")
	if aerr != nil {
		return nil, aerr
	}
	type scopeKey struct {
		cs   *connectorState
		name string
	}
	byStream := map[scopeKey]*streamScope{}
	for _, sc := range scopes {
		byStream[scopeKey{sc.conn, sc.decl.Name}] = sc
	}
	var sources []*searchSource
	for _, cs := range c.s.store.connectors {
		for _, conn := range cs.ds.Connections {
			src := &searchSource{cs: cs, conn: conn}
			for _, decl := range cs.manifest.Streams {
				sc := byStream[scopeKey{cs, decl.Name}]
				if sc == nil || !slices.ContainsFunc(sc.conns, func(x dataset.Connection) bool { return x.ID == conn.ID }) {
					continue
				}
				if p.streams != nil && !slices.Contains(p.streams, decl.Name) {
					continue
				}
				var fields []string
				for _, f := range declared(decl) {
					if sc.granted(f) {
						fields = append(fields, f)
					}
				}
				if len(fields) == 0 {
					continue
				}
				e := &searchEntry{sc: sc, fields: fields}
				if p.filter {
					if e.filters, aerr = parseFilters(sc, c.q); aerr != nil {
						return nil, aerr
					}
				}
				src.entries = append(src.entries, e)
			}
			if len(src.entries) > 0 {
				sources = append(sources, src)
			}
		}
	}
	return sources, nil
}

// planKey identifies what a snapshot was built for: the caller's authority,
// the query and the searched (connection, stream, fields) topology. A cursor is
// only honoured by a request with the same key.
func (c *call) planKey(mode searchMode, p *searchParams, sources []*searchSource) string {
	var b strings.Builder
	fmt.Fprintf(&b, "mode %d|", mode)
	if c.who.client() {
		fmt.Fprintf(&b, "client %s %s|", c.who.grant.GrantID, c.who.clientID)
	} else {
		fmt.Fprintf(&b, "owner %s|", c.who.subjectID)
	}
	fmt.Fprintf(&b, "q=%q|filter=%q|", p.q, filterSignature(c.q))
	for _, src := range sources {
		fmt.Fprintf(&b, "%s:", src.conn.ID)
		for _, e := range src.entries {
			fmt.Fprintf(&b, "%s%v,", e.sc.decl.Name, e.fields)
		}
		b.WriteByte('|')
	}
	return b.String()
}

// filterSignature is the filter[...] part of the query string, in order.
func filterSignature(q *query) string {
	var parts []string
	for _, p := range q.pairs {
		if p.key == "filter" || strings.HasPrefix(p.key, "filter[") {
			parts = append(parts, p.key+"="+p.value)
		}
	}
	return strings.Join(parts, "&")
}

// searchSnapshot is a ranked result list frozen at the first page, so later
// pages neither repeat nor skip results while the data changes.
type searchSnapshot struct {
	id      string
	plan    string
	created time.Time
	lexical []*lexicalHit
	recall  *lexicalRecall
	sem     []*semanticHit
}

// snapshotStore keeps snapshots for searchSnapshotTTL, at most
// searchSnapshotCap of them.
type snapshotStore struct {
	mu    sync.Mutex
	byID  map[string]*searchSnapshot
	order []string
}

func (st *snapshotStore) put(snap *searchSnapshot, now time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.byID == nil {
		st.byID = map[string]*searchSnapshot{}
	}
	kept := st.order[:0]
	for _, id := range st.order {
		if now.Sub(st.byID[id].created) >= searchSnapshotTTL {
			delete(st.byID, id)
			continue
		}
		kept = append(kept, id)
	}
	st.order = kept
	for len(st.order) >= searchSnapshotCap {
		delete(st.byID, st.order[0])
		st.order = st.order[1:]
	}
	st.byID[snap.id] = snap
	st.order = append(st.order, snap.id)
}

func (st *snapshotStore) get(id string, now time.Time) *searchSnapshot {
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.byID[id]
	if s == nil || now.Sub(s.created) >= searchSnapshotTTL {
		return nil
	}
	return s
}

func newSnapshotID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "snap_" + hex.EncodeToString(b)
}

// searchCursor is the position in a snapshot, sent as base64url JSON (the
// semantic route prefixes it with "sem1."). Fields are in the reference's
// (alphabetical) order.
type searchCursor struct {
	Off  *int64  `json:"off"`
	Snap *string `json:"snap"`
}

const semanticCursorPrefix = "sem1."

func encodeSearchCursor(prefix, snap string, off int) string {
	o := int64(off)
	b, _ := json.Marshal(searchCursor{Off: &o, Snap: &snap})
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// decodeSearchCursor returns the snapshot id and offset, or ok=false when the
// cursor is not one of ours.
func decodeSearchCursor(prefix, s string) (snap string, off int, ok bool) {
	body, found := strings.CutPrefix(s, prefix)
	if !found {
		return "", 0, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(body, "="))
	if err != nil {
		return "", 0, false
	}
	var cur searchCursor
	if json.Unmarshal(raw, &cur) != nil || cur.Off == nil || cur.Snap == nil || *cur.Off < 0 || *cur.Off > 1<<31 {
		return "", 0, false
	}
	return *cur.Snap, int(*cur.Off), true
}

// resolveCursor loads the snapshot a cursor points into and checks that this
// request may continue it.
func (svc *searchService) resolveCursor(prefix, cursor, plan string) (*searchSnapshot, int, *apiError) {
	id, off, ok := decodeSearchCursor(prefix, cursor)
	if !ok {
		return nil, 0, errf(http.StatusBadRequest, "invalid_cursor", "Cursor is malformed").param("cursor")
	}
	snap := svc.snaps.get(id, svc.s.now())
	if snap == nil {
		return nil, 0, errf(http.StatusBadRequest, "invalid_cursor",
			"Cursor refers to an expired or unknown snapshot; run the search again without cursor").param("cursor")
	}
	if snap.plan != plan {
		return nil, 0, errf(http.StatusBadRequest, "invalid_cursor",
			"Cursor does not match this query and grant authority; run the search again without cursor").param("cursor")
	}
	return snap, off, nil
}

// pagedSearch is what the lexical and semantic handlers share before they
// render a page: the parameters, the sources for the mode's declared fields,
// and the snapshot the page is cut from with its offset. A request with a
// cursor continues the snapshot the cursor names (if this request may); a
// first page gets a new snapshot, filled in by rank and kept for the pages
// after it.
func (svc *searchService) pagedSearch(c *call, mode searchMode, declared declaredFieldsFunc, cursorPrefix string,
	rank func(*searchSnapshot, *searchParams, []*searchSource)) (*searchParams, *searchSnapshot, int, *apiError) {
	p, aerr := parseSearchParams(c, mode)
	if aerr != nil {
		return nil, nil, 0, aerr
	}
	sources, aerr := c.searchSources(p, declared)
	if aerr != nil {
		return nil, nil, 0, aerr
	}
	plan := c.planKey(mode, p, sources)
	if p.cursor != "" {
		snap, off, aerr := svc.resolveCursor(cursorPrefix, p.cursor, plan)
		return p, snap, off, aerr
	}
	snap := &searchSnapshot{id: newSnapshotID(), plan: plan, created: svc.s.now()}
	rank(snap, p, sources)
	svc.snaps.put(snap, snap.created)
	return p, snap, 0, nil
}

// pageBounds slices [off, off+limit) out of n results.
func pageBounds(n, off, limit int) (from, to int, more bool) {
	from = min(off, n)
	to = min(from+limit, n)
	return from, to, off+limit < n
}

// recordURL is a hit's record_url: path segments encoded like JavaScript's
// encodeURIComponent; owners also get the connector, since their reads may
// span connectors.
func recordURL(owner bool, cs *connectorState, stream, key string) string {
	u := "/v1/streams/" + encodeURIComponent(stream) + "/records/" + encodeURIComponent(key)
	if owner {
		u += "?connector_id=" + encodeURIComponent(cs.key())
	}
	return u
}

// encodeURIComponent escapes everything except A-Z a-z 0-9 - _ . ! ~ * ' ( ).
func encodeURIComponent(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || strings.IndexByte("-_.!~*'()", ch) >= 0 {
			b.WriteByte(ch)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", ch)
	}
	return b.String()
}

// authoredAt is the record's own authoring time, when it has one under a
// conventional name; hits carry it as authored_at.
func authoredAt(r *storedRecord) (string, bool) {
	for _, k := range []string{"sent_at", "sentAt", "authored_at", "authoredAt", "created_at", "createdAt",
		"source_created_at", "sourceCreatedAt", "occurred_at", "occurredAt", "updated_at", "updatedAt"} {
		if s, ok := r.value(k).(string); ok && s != "" {
			return s, true
		}
	}
	return "", false
}

// warningsOrEmpty returns ws, never nil, for meta.warnings.
func warningsOrEmpty(ws []any) []any {
	if ws == nil {
		return []any{}
	}
	return ws
}

// indexCache holds a search index built from the store and rebuilds it when
// the store has changed since (Upsert, Delete), so tests that write records
// search what they wrote.
type indexCache[T any] struct {
	mu  sync.Mutex
	sig string
	idx *T
}

func (c *indexCache[T]) get(st *store, build func(*store) *T) *T {
	sig := storeSignature(st)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.idx == nil || c.sig != sig {
		c.idx, c.sig = build(st), sig
	}
	return c.idx
}
