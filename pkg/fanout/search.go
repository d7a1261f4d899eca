package fanout

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/evidence"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// Ranking rule (reciprocal rank fusion, k=60): a hit's fused score is
// 1/(60+r), r its 1-based rank in its own child's result list (across pages:
// the cursor keeps each child's rank base). A record that several children
// return keeps its best-ranked copy. Hits with the same fused score (the same
// rank in different children) are ordered by their own score when both carry
// a score of the same kind and order (bm25 lower_is_better, cosine
// higher_is_better), else by package order. Children's raw scores are never
// compared across ranks: children rank over different corpora, so their
// scales differ, while ranks do not.
//
// Merging is a k-way merge over the children's lists, so the hits returned
// from each child are always a prefix of what is left of its list, which is
// what lets the cursor record a position per child.

// searchHit is one candidate hit of a child.
type searchHit struct {
	evidence.Hit
	rank int // child-wide, 0-based
}

// searchChild is one called child's page.
type searchChild struct {
	idx     int
	state   *childState
	fresh   []searchHit // the page's hits not yet returned
	pageLen int
	next    string // the child's next_cursor
	more    bool   // the child's has_more
	recall  gjson.Result
	taken   int
	// refused counts the taken hits left out because they named a
	// connection their member does not hold.
	refused int
	// base is the provider that answered the page ("" when unknown): a
	// relative record_url of its hits is made absolute on it, since the
	// merged answer has no one provider.
	base string
}

func parseLimit(q rs.Query) (int, error) {
	v, ok := q.Get("limit")
	if !ok {
		return DefaultSearchLimit, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > MaxSearchLimit {
		return 0, &rs.Error{Status: http.StatusBadRequest, Code: "invalid_request", Type: "invalid_request", Param: "limit",
			Message: "limit must be an integer from 1 to " + strconv.Itoa(MaxSearchLimit)}
	}
	return n, nil
}

// childStreams is the requested streams a member is granted; nil when none
// were requested (the child searches all it is granted).
func childStreams(m *Member, requested []string) []string {
	if requested == nil {
		return nil
	}
	var out []string
	for _, s := range requested {
		if m.holds(s) {
			out = append(out, s)
		}
	}
	return out
}

func requestedStreams(q rs.Query) []string {
	var out []string
	for _, p := range q {
		if p.Key == "streams" {
			out = append(out, p.Value)
		}
	}
	return out
}

// search fans a search out and merges the pages.
func (c *Client) search(ctx context.Context, path string, route rs.Route, q rs.Query) (*rs.Response, error) {
	limit, err := parseLimit(q)
	if err != nil {
		return nil, err
	}
	requested := requestedStreams(q)
	qh := c.queryHash(path, q)
	var order []int // members in play, package order
	for _, i := range c.usable() {
		if requested != nil && len(childStreams(&c.members[i], requested)) == 0 {
			continue // granted none of the requested streams: never called
		}
		order = append(order, i)
	}
	states, err := c.childStates(q, route, qh, order)
	if err != nil {
		return nil, err
	}
	var active []int
	for _, i := range order {
		if st := states[c.members[i].GrantID]; st != nil && !st.Done {
			active = append(active, i)
		}
	}
	if len(order) == 0 && len(c.usable()) == 0 {
		return nil, c.allUnusableError()
	}
	base := withoutKeys(q, "streams", "cursor", "limit", "connection_id")
	chs := c.fan(ctx, active, path, func(i int) rs.Query {
		cq := slices.Clone(base)
		for _, s := range childStreams(&c.members[i], requested) {
			cq.Add("streams", s)
		}
		cq.Add("limit", strconv.Itoa(limit))
		if st := states[c.members[i].GrantID]; st.Cursor != "" {
			cq.Add("cursor", st.Cursor)
		}
		return cq
	}, func(ch *child) {
		ch.page = readPage(ch.idx, states[c.members[ch.idx].GrantID], ch.resp.Body)
		ch.page.base = ch.resp.BaseURL
		if n := len(ch.page.next); n > MaxCursorBytes {
			// A cut cursor would not work, and a whole one could never be
			// passed back: the answer is unusable.
			ch.page, ch.err = nil, &rs.TransportError{Code: rs.CodeInvalidResponse, Status: ch.resp.Status, RequestID: ch.resp.RequestID,
				BaseURL: ch.resp.BaseURL, Err: fmt.Errorf("fanout: source %s answered a next_cursor of %d bytes, over the %d a cursor may have", visible.Quote(c.members[ch.idx].GrantID), n, MaxCursorBytes)}
		}
	})

	var warns []warning
	failed := map[int]bool{}
	var pages []*searchChild
	for _, ch := range chs {
		st := states[c.members[ch.idx].GrantID]
		if ch.err != nil {
			// A failed child is reported and left out of later pages, so
			// following next_cursor always ends.
			failed[ch.idx] = true
			st.Done = true
			warns = append(warns, c.childWarning(ch))
			continue
		}
		pages = append(pages, ch.page)
	}
	if _, paging := q.Get("cursor"); len(active) > 0 && len(pages) == 0 && !paging {
		return nil, firstError(chs)
	}
	warns = append(warns, c.unusableWarnings(failed)...)

	hits := c.fuse(pages, limit)
	warns = append(warns, c.refusedWarnings(pages)...)

	hasMore, next, err := c.advance(pages, route, order, states, qh)
	if err != nil {
		// The page stands; only its continuation cannot be kept.
		warns = append(warns, warning{Code: "partial_results", Message: "has_more=true and next_cursor is not emitted: " +
			"the positions of this search across its sources are larger than pdpp-mcp keeps. Search with connection_id to page one source."})
	}
	return synthResponse(c.searchBody(path, hits, pages, hasMore, next, limit, len(active), warns)), nil
}

// advance moves each child's state past what this page took from it, and
// reports whether any child has more and the cursor that resumes them (none
// for hybrid search, which returns one page), or why there is none.
func (c *Client) advance(pages []*searchChild, route rs.Route, order []int, states map[string]*childState, qh string) (bool, string, error) {
	hasMore := false
	for _, p := range pages {
		st := p.state
		if p.taken < len(p.fresh) {
			st.Skip += p.taken
			continue
		}
		switch {
		case p.next != "":
			st.Cursor, st.Skip, st.Base = p.next, 0, st.Base+p.pageLen
		case p.more && route == rs.RouteSearchHybrid:
			hasMore = true // one page only; the child has more
			st.Done = true
		default:
			st.Done = true
		}
	}
	var cs cursorState
	cs.V, cs.Q = cursorVersion, qh
	for _, i := range order {
		st := states[c.members[i].GrantID]
		if st == nil || st.Done {
			continue // a child the cursor does not name is exhausted
		}
		cs.Children = append(cs.Children, *st)
		hasMore = true
	}
	if hasMore && route != rs.RouteSearchHybrid {
		next, err := c.encodeCursor(&cs)
		return true, next, err
	}
	return hasMore, "", nil
}

// childStates is where each member in play stands: as the cursor says when
// one is passed (a member it does not name is done), else at the start.
func (c *Client) childStates(q rs.Query, route rs.Route, qh string, order []int) (map[string]*childState, error) {
	states := map[string]*childState{}
	if cur, ok := q.Get("cursor"); ok && cur != "" {
		if route == rs.RouteSearchHybrid {
			return nil, &rs.Error{Status: http.StatusBadRequest, Code: "invalid_request", Type: "invalid_request", Param: "cursor",
				Message: "hybrid search returns one page and takes no cursor"}
		}
		st, err := c.decodeCursor(cur, qh)
		if errors.Is(err, errExpiredCursor) {
			return nil, &rs.Error{Status: http.StatusBadRequest, Code: "invalid_cursor", Type: "invalid_request", Param: "cursor",
				Message: "cursor has expired: its positions are kept " + StoredCursorTTL.String() + " by the server that made it; search again without cursor"}
		}
		if err != nil {
			return nil, &rs.Error{Status: http.StatusBadRequest, Code: "invalid_cursor", Type: "invalid_request", Param: "cursor",
				Message: "cursor is not a next_cursor of this search by this package and principal; pass next_cursor exactly as returned, with the same arguments"}
		}
		for k := range st.Children {
			ch := &st.Children[k]
			if ch.I < 0 || ch.I >= len(c.members) {
				return nil, &rs.Error{Status: http.StatusBadRequest, Code: "invalid_cursor", Type: "invalid_request", Param: "cursor",
					Message: "cursor names a source this package does not have; search again without cursor"}
			}
			ch.Grant = c.members[ch.I].GrantID
			states[ch.Grant] = ch
		}
	} else {
		for _, i := range order {
			states[c.members[i].GrantID] = &childState{Grant: c.members[i].GrantID, I: i}
		}
	}
	return states, nil
}

// readPage reads one child's answer: hits from the canonical data[] or the
// data.results[] / data.data[] / results[] shapes older servers send. Each
// level is walked once: a gjson Get per member would rescan every hit.
func readPage(idx int, st *childState, body []byte) *searchChild {
	p := &searchChild{idx: idx, state: st}
	var data, results gjson.Result
	gjson.Parse(view(body)).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "data":
			data = v
		case "results":
			results = v
		case "next_cursor":
			p.next = v.Str
		case "has_more":
			p.more = v.Type == gjson.True
		case "meta":
			p.recall = v.Get("recall")
		}
		return true
	})
	list := results
	switch {
	case data.IsArray():
		list = data
	case data.IsObject():
		var inResults, inData gjson.Result
		data.ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "results":
				inResults = v
			case "data":
				inData = v
			case "next_cursor":
				if p.next == "" {
					p.next = v.Str
				}
			case "has_more":
				p.more = p.more || v.Type == gjson.True
			}
			return true
		})
		switch {
		case inResults.IsArray():
			list = inResults
		case inData.IsArray():
			list = inData
		}
	}
	n := 0
	p.fresh = make([]searchHit, 0, DefaultSearchLimit)
	list.ForEach(func(_, h gjson.Result) bool {
		if h.IsObject() {
			if n >= st.Skip {
				hit, _ := evidence.ReadHit(h)
				p.fresh = append(p.fresh, searchHit{Hit: hit, rank: st.Base + n})
			}
			n++
		}
		return true
	})
	p.pageLen = n
	return p
}

// before reports whether a (from child pa) ranks ahead of b (from child pb).
func before(a, b *searchHit, pa, pb int) bool {
	if a.rank != b.rank {
		return a.rank < b.rank // 1/(60+r) falls with r
	}
	sa, sb := &a.Score, &b.Score
	if sa.Kind != "" && sa.Kind == sb.Kind && sa.Value != sb.Value {
		if sa.LowerIsBetter {
			return sa.Value < sb.Value
		}
		return sa.Value > sb.Value
	}
	return pa < pb
}

// Attribution: a member speaks only for itself (attest.go). A hit that
// names a connection its member does not hold (or, when the member's
// connections are unknown, one another member holds) is refused: it is left
// out and counted in a source_hits_refused warning, never shown as the other
// source's record. Every hit that is kept names a connection its member
// holds, or none, and then takes its member's own.

// hitKey identifies a record across children: its connection (which the
// member holds, see claims), connector, stream and key. A hit with no
// connection of its own or of its member is keyed by its member's grant, so
// only hits of the same member merge; a hit with no record key never merges.
func (c *Client) hitKey(idx int, h *searchHit) string {
	if h.RecordKey == "" {
		return ""
	}
	m := &c.members[idx]
	conn := firstOf(h.ConnectionID, c.connectionOf(idx))
	if conn == "" {
		conn = "\x01grant:" + m.GrantID
	}
	key := firstOf(h.ConnectorKey, m.ConnectorKey)
	return conn + "\x00" + key + "\x00" + h.Stream + "\x00" + h.RecordKey
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

type fused struct {
	page *searchChild
	hit  *searchHit
}

// fuse takes up to limit hits from the pages' heads, best first, dropping
// duplicates; it records in each page how many of its hits it consumed.
func (c *Client) fuse(pages []*searchChild, limit int) []fused {
	out := make([]fused, 0, limit)
	seen := make(map[string]bool, limit)
	for len(out) < limit {
		best := -1
		for k, p := range pages {
			if p.taken >= len(p.fresh) {
				continue
			}
			if best < 0 || before(&p.fresh[p.taken], &pages[best].fresh[pages[best].taken], k, best) {
				best = k
			}
		}
		if best < 0 {
			break
		}
		p := pages[best]
		h := &p.fresh[p.taken]
		p.taken++
		if !c.allClaimed(p.idx, h.Raw.Raw) && !c.held(p.idx, h.Raw, 0) {
			p.refused++
			continue
		}
		key := c.hitKey(p.idx, h)
		if key != "" && seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, fused{page: p, hit: h})
	}
	return out
}

// searchBody writes the merged list envelope.
func (c *Client) searchBody(path string, hits []fused, pages []*searchChild, hasMore bool, next string, limit, called int, warns []warning) []byte {
	var b bytes.Buffer
	size := 1024
	for _, f := range hits {
		size += len(f.hit.Raw.Raw) + 160
	}
	b.Grow(size)
	b.WriteString(`{"object":"list","url":`)
	b.WriteString(jsonw.String(path))
	b.WriteString(`,"has_more":`)
	b.WriteString(strconv.FormatBool(hasMore))
	if next != "" {
		b.WriteString(`,"next_cursor":`)
		b.WriteString(jsonw.String(next))
	}
	b.WriteString(`,"data":[`)
	type mix struct {
		conn, key, name string
		n               int
	}
	var mixes []mix
	merged := 0
	for _, p := range pages {
		merged += len(p.fresh)
	}
	for k, f := range hits {
		if k > 0 {
			b.WriteByte(',')
		}
		m := &c.members[f.page.idx]
		h := f.hit
		var set []kv
		conn := h.ConnectionID
		if conn == "" && c.connectionOf(f.page.idx) != "" {
			conn = c.connectionOf(f.page.idx)
			set = append(set, kv{"connection_id", jsonw.String(conn)})
		}
		key := ""
		if h.NamesConnectorKey() {
			key = h.ConnectorKey
		}
		if key == "" && m.ConnectorKey != "" {
			key = m.ConnectorKey
			set = append(set, kv{"connector_key", jsonw.String(key)})
		}
		name := h.DisplayName
		if name == "" && m.DisplayName != "" {
			name = m.DisplayName
			set = append(set, kv{"display_name", jsonw.String(name)})
		}
		set = append(set, kv{"grant_id", jsonw.String(m.GrantID)})
		appendMembers(&b, absoluteRecordURL(h.Raw, f.page.base), set)
		found := false
		for j := range mixes {
			if mixes[j].conn == conn && mixes[j].key == key {
				mixes[j].n++
				found = true
				break
			}
		}
		if !found {
			mixes = append(mixes, mix{conn, key, name, 1})
		}
	}
	b.WriteString(`],"meta":`)
	var mixJSON bytes.Buffer
	mixJSON.WriteByte('[')
	for j, x := range mixes {
		if j > 0 {
			mixJSON.WriteByte(',')
		}
		set := []kv{{"connection_id", jsonw.String(x.conn)}, {"connector_key", jsonw.String(x.key)}, {"count", strconv.Itoa(x.n)}}
		if x.name != "" {
			set = append(set, kv{"display_name", jsonw.String(x.name)})
		}
		withMembers(&mixJSON, gjson.Result{}, set, false)
	}
	mixJSON.WriteByte(']')
	extra := []kv{
		{"fanout_limit", strconv.Itoa(limit)},
		{"children_called", strconv.Itoa(called)},
		{"merged_hit_count", strconv.Itoa(merged)},
		{"returned_hit_count", strconv.Itoa(len(hits))},
		{"ranking", `"reciprocal_rank_fusion"`},
		{"rrf_k", strconv.Itoa(RRFK)},
		{"source_mix", mixJSON.String()},
	}
	var meta bytes.Buffer
	c.packageMeta(&meta, extra, warns)
	if r := mergedRecall(pages); r != "" {
		m := gjson.ParseBytes(meta.Bytes())
		meta.Reset()
		withMembers(&meta, m, []kv{{"recall", r}}, false)
	}
	b.Write(meta.Bytes())
	b.WriteByte('}')
	return b.Bytes()
}

// mergedRecall reports a bounded candidate window when any child ranked
// over one, so the tools' recall warning still appears.
func mergedRecall(pages []*searchChild) string {
	truncated, window, incomplete := 0, 0, false
	for _, p := range pages {
		r := p.recall
		if !r.IsObject() || (r.Get("complete").Type != gjson.False && r.Get("ranking_scope").Str != "candidate_window") {
			continue
		}
		incomplete = true
		truncated += int(r.Get("truncated_source_count").Int())
		window = max(window, int(r.Get("candidate_window_limit").Int()))
	}
	if !incomplete {
		return ""
	}
	set := []kv{{"complete", "false"}, {"ranking_scope", `"candidate_window"`}}
	if window > 0 {
		set = append(set, kv{"candidate_window_limit", strconv.Itoa(window)})
	}
	if truncated > 0 {
		set = append(set, kv{"truncated_source_count", strconv.Itoa(truncated)})
	}
	return tagObject(set)
}

// appendMembers writes object raw with set appended before its closing
// brace: the hit's own bytes are copied, not re-encoded.
func appendMembers(b *bytes.Buffer, raw string, set []kv) {
	end := strings.LastIndexByte(raw, '}')
	if end < 0 {
		b.WriteString(raw)
		return
	}
	head := strings.TrimRight(raw[:end], " \t\r\n")
	b.WriteString(head)
	first := strings.HasSuffix(head, "{")
	for _, s := range set {
		writeKey(b, &first, s.k)
		b.WriteString(s.raw)
	}
	b.WriteByte('}')
}

// view reads body as a string without copying it. Bodies are never written
// after the RS client returns them, and the hits taken from them are copied
// into the merged body before search returns.
func view(body []byte) string {
	if len(body) == 0 {
		return ""
	}
	return unsafe.String(&body[0], len(body))
}

// absoluteRecordURL returns hit's JSON with a relative record_url made
// absolute on base, so a link in a merged page points at the provider that
// holds the record.
func absoluteRecordURL(hit gjson.Result, base string) string {
	raw := hit.Raw
	u := hit.Get("record_url")
	// gjson reports Index within the document hit came from; make it
	// relative to hit, and leave the hit alone when that cannot be trusted.
	i := u.Index - hit.Index
	if base == "" || u.Type != gjson.String || !strings.HasPrefix(u.Str, "/") || u.Index <= 0 ||
		i <= 0 || i+len(u.Raw) > len(raw) || raw[i:i+len(u.Raw)] != u.Raw {
		return raw
	}
	return raw[:i] + jsonw.String(strings.TrimSuffix(base, "/")+u.Str) + raw[i+len(u.Raw):]
}
