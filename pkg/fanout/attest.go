package fanout

import (
	"encoding/json"
	"fmt"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// A member speaks only for the connections it holds, on every read. What a
// member's answer says about a connection it does not hold is never shown
// as that connection's: the tools would print it under the other source's
// name, cite it, and build handles from it (a blob handle naming another
// connection sends that member's token to its RS for a blob id this member
// chose). So, for every answer a member gives:
//
//   - an entry of a list (a record row, a search hit, a stream row, a
//     schema connector, stream or granted connection, a meta.warnings entry)
//     that names a connection the member does not hold is left out, and the
//     answer says how many in a meta.warnings entry (source_hits_refused for
//     search hits, source_entries_refused for everything else);
//   - an answer that is one object (a record, a field window, an
//     aggregation, a stream) and names such a connection is refused whole
//     as rs_invalid_response: nothing of it can be kept.
//
// "Holds" is what a member's own discovery, or the host that built the
// package, says. Two members may both hold one connection only when they
// read the same resource server (two grants of one package on one
// connection, with different streams, say); a connection members on
// different resource servers both claim is disputed and held by none of
// them: a member could otherwise claim another's connection by listing it.
//
// An entry names a connection by connection_id or its deprecated alias
// connector_instance_id, by those of its source and detail objects, and by
// those of the records it expands; every occurrence counts, so a repeated
// key cannot hide a claim from this check while a reader takes it.

// The warning codes of entries left out.
const (
	codeHitsRefused    = "source_hits_refused"
	codeEntriesRefused = "source_entries_refused"
)

// maxClaimDepth bounds how deeply held looks through source, detail and
// expanded objects; an entry nested deeper is not attributed, so it is left
// out. The RS client refuses bodies nested deeper than rs.MaxDepth anyway.
const maxClaimDepth = 16

// shape is how the answers of a route name connections.
type shape int

const (
	shapeNone    shape = iota // blobs and routes outside /v1: no JSON to check
	shapeObject               // one object: a record, a field window, an aggregation, a stream
	shapeRecords              // a list of records: data[], records[] or data.records[]
	shapeHits                 // search hits: data[], data.results[], data.data[] or results[]
	shapeSchema               // connectors, streams and granted_connections
	shapeStreams              // stream rows in data[]
)

// shapeOf is the shape of path's answers.
func shapeOf(path string) shape {
	switch route := rs.RouteOf(path); route {
	case rs.RouteBlob:
		return shapeNone
	case rs.RouteSchema:
		return shapeSchema
	case rs.RouteStreams:
		return shapeStreams
	case rs.RouteRecords:
		return shapeRecords
	case rs.RouteSearch, rs.RouteSearchSemantic, rs.RouteSearchHybrid:
		return shapeHits
	case rs.RouteOther:
		if seg, err := rs.ParsePath(path); err != nil || len(seg) == 0 || seg[0] != "v1" {
			return shapeNone
		}
		// A /v1 read the tools do not make: checked as a list of records,
		// which also checks its top level as one object.
		return shapeRecords
	}
	return shapeObject
}

// claims reports whether member idx may speak for connection conn: one it
// holds, or, while its connections are unknown, one no other member holds;
// never a disputed one, which members on different resource servers both
// claim: nothing tells which of them holds it, so neither speaks for it.
func (c *Client) claims(idx int, conn string) bool {
	if conn == "" {
		return true
	}
	if c.isDisputed(conn) {
		return false
	}
	if m := c.member(idx); len(m.ConnectionIDs) > 0 {
		return m.hasConnection(conn)
	}
	for i := range c.members {
		if i != idx && c.member(i).hasConnection(conn) {
			return false
		}
	}
	return true
}

// held reports whether member idx may speak for every connection v names.
func (c *Client) held(idx int, v gjson.Result, depth int) bool {
	if !v.IsObject() {
		return true
	}
	if depth > maxClaimDepth {
		return false
	}
	ok := true
	v.ForEach(func(k, f gjson.Result) bool {
		ok = c.heldMember(idx, k.Str, f, depth)
		return ok
	})
	return ok
}

// heldMember is held for one member k: f of an object at depth.
func (c *Client) heldMember(idx int, k string, f gjson.Result, depth int) bool {
	switch k {
	case "connection_id", "connector_instance_id":
		return f.Type != gjson.String || c.claims(idx, f.Str)
	case "source", "detail":
		return c.held(idx, f, depth+1)
	case "expanded":
		// {relation: record or null (has_one) | {data:[records]} (has_many)}
		ok := true
		f.ForEach(func(_, rel gjson.Result) bool {
			ok = c.held(idx, rel, depth+1) && c.eachHeld(idx, rel.Get("data"), depth+1)
			return ok
		})
		return ok
	}
	return true
}

// allClaimed is a fast check that an answer names no connection member idx
// may not speak for, anywhere: every member named connection_id or
// connector_instance_id, at any depth, has a string value the member may
// claim, or a value that is not a string. It is true only when the
// structural check (held, sift) would find nothing to leave out, so most
// answers are passed on after one quick scan; when false, the structural
// check decides.
//
// Both names end in _id, which the scan looks for (a far rarer start than a
// quote). A key can be spelt with escapes in JSON, which a reader decodes:
// both names are lower-case letters and underscores, so any escaped
// spelling uses \u00XX for one of them, and a text with such an escape
// anywhere is left to the structural check. A match inside a string (an
// escaped quote before it) only makes the check more cautious.
func (c *Client) allClaimed(idx int, text string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], `\u00`)
		if j < 0 {
			break
		}
		i += j + 4
		if i+2 <= len(text) && escapesKeyByte(text[i:i+2]) {
			return false
		}
	}
	for i := 0; ; {
		j := strings.Index(text[i:], `_id"`)
		if j < 0 {
			return true
		}
		head := text[:i+j]
		i += j + len(`_id"`)
		if !strings.HasSuffix(head, `"connection`) && !strings.HasSuffix(head, `"connector_instance`) {
			continue
		}
		k := skipSpace(text, i)
		if k >= len(text) || text[k] != ':' {
			continue // not a member name
		}
		k = skipSpace(text, k+1)
		if k >= len(text) || text[k] != '"' {
			continue // not a string: it names nothing
		}
		end := strings.IndexByte(text[k+1:], '"')
		if end < 0 {
			return false
		}
		v := text[k+1 : k+1+end]
		if strings.IndexByte(v, '\\') >= 0 || !c.claims(idx, v) {
			return false
		}
	}
}

// escapesKeyByte reports whether the hex digits h after \u00 spell a
// lower-case letter or an underscore.
func escapesKeyByte(h string) bool {
	hex := func(b byte) int {
		switch {
		case b >= '0' && b <= '9':
			return int(b - '0')
		case b >= 'a' && b <= 'f':
			return int(b-'a') + 10
		case b >= 'A' && b <= 'F':
			return int(b-'A') + 10
		}
		return -1
	}
	hi, lo := hex(h[0]), hex(h[1])
	if hi < 0 || lo < 0 {
		return false
	}
	b := byte(hi<<4 | lo)
	return b == '_' || b >= 'a' && b <= 'z'
}

func skipSpace(text string, i int) int {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n') {
		i++
	}
	return i
}

// eachHeld is held of every element of list (true when list is no array).
func (c *Client) eachHeld(idx int, list gjson.Result, depth int) bool {
	if !list.IsArray() {
		return true
	}
	ok := true
	list.ForEach(func(_, e gjson.Result) bool {
		ok = c.held(idx, e, depth)
		return ok
	})
	return ok
}

// edit replaces body[from:to] with text.
type edit struct {
	from, to int
	text     []byte
}

// sifter walks one member's answer and collects the edits that leave out
// what the member may not speak for.
type sifter struct {
	c    *Client
	idx  int
	body string
	// edits are in document order and do not overlap: an array rebuilt
	// takes in the edits made inside its kept elements.
	edits []edit
	// left counts the list entries left out, warnings the meta.warnings
	// entries.
	left, warnings int
	// metas are the top-level meta members; warns the warnings arrays in
	// them.
	metas, warns []gjson.Result
	// broken: the indexes gjson reported do not point at the values, so no
	// edit can be trusted.
	broken bool
	// foreign: the answer's top level names a connection the member may
	// not speak for.
	foreign bool
}

// at is the text v spans in the body, checked against v itself.
func (s *sifter) at(v gjson.Result) (from, to int, ok bool) {
	from, to = v.Index, v.Index+len(v.Raw)
	if from < 0 || to > len(s.body) || s.body[from:to] != v.Raw {
		s.broken = true
		return 0, 0, false
	}
	return from, to, true
}

// filter leaves out the elements of arr that keep refuses, counting them in
// *n, and walks the kept ones with inner (which may add edits inside them).
func (s *sifter) filter(arr gjson.Result, keep func(gjson.Result) bool, inner func(gjson.Result), n *int) {
	if !arr.IsArray() {
		return
	}
	start := len(s.edits)
	var kept []gjson.Result
	dropped := 0
	arr.ForEach(func(_, e gjson.Result) bool {
		if !keep(e) {
			dropped++
			return true
		}
		kept = append(kept, e)
		if inner != nil {
			inner(e)
		}
		return true
	})
	if dropped == 0 {
		return
	}
	*n += dropped
	from, to, ok := s.at(arr)
	if !ok {
		return
	}
	nested := slices.Clone(s.edits[start:])
	s.edits = s.edits[:start]
	b := make([]byte, 0, to-from)
	b = append(b, '[')
	k := 0
	for i, e := range kept {
		if i > 0 {
			b = append(b, ',')
		}
		ef, et, ok := s.at(e)
		if !ok {
			return
		}
		pos := ef
		for ; k < len(nested) && nested[k].from < et; k++ {
			b = append(b, s.body[pos:nested[k].from]...)
			b = append(b, nested[k].text...)
			pos = nested[k].to
		}
		b = append(b, s.body[pos:et]...)
	}
	b = append(b, ']')
	s.edits = append(s.edits, edit{from, to, b})
}

// heldEntry is the keep rule of list entries.
func (s *sifter) heldEntry(e gjson.Result) bool { return s.c.held(s.idx, e, 0) }

// rows filters a list of records or hits.
func (s *sifter) rows(arr gjson.Result) {
	s.filter(arr, s.heldEntry, nil, &s.left)
}

// streamRows filters a list of streams; the granted_connections of kept
// streams are filtered too.
func (s *sifter) streamRows(arr gjson.Result) {
	s.filter(arr, s.heldEntry, s.connectionLists, &s.left)
}

// connectionLists filters the granted_connections of an object.
func (s *sifter) connectionLists(o gjson.Result) {
	if !o.IsObject() {
		return
	}
	o.ForEach(func(k, v gjson.Result) bool {
		if k.Str == "granted_connections" {
			s.filter(v, s.heldEntry, nil, &s.left)
		}
		return true
	})
}

// schema filters a schema document: its granted_connections, its streams
// (and theirs), its connectors (and their granted_connections and streams);
// a schema wrapped in data is filtered the same way.
func (s *sifter) schema(doc gjson.Result) {
	doc.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "granted_connections":
			s.filter(v, s.heldEntry, nil, &s.left)
		case "streams":
			s.streamRows(v)
		case "connectors":
			s.filter(v, s.heldEntry, s.schemaConnector, &s.left)
		case "data":
			if v.IsObject() {
				s.schema(v)
			}
		}
		return true
	})
}

func (s *sifter) schemaConnector(con gjson.Result) {
	if !con.IsObject() {
		return
	}
	con.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "granted_connections":
			s.filter(v, s.heldEntry, nil, &s.left)
		case "streams":
			s.streamRows(v)
		}
		return true
	})
}

// top walks the answer's top level in one pass: the connections it names
// itself, and the members that hold lists, for sh.
func (s *sifter) top(root gjson.Result, sh shape) {
	if sh == shapeSchema {
		s.schema(root)
	}
	root.ForEach(func(k, v gjson.Result) bool {
		if !s.c.heldMember(s.idx, k.Str, v, 0) {
			s.foreign = true
			return false
		}
		switch k.Str {
		case "meta":
			s.metas = append(s.metas, v)
			v.ForEach(func(mk, w gjson.Result) bool {
				if mk.Str == "warnings" {
					s.warns = append(s.warns, w)
					w.ForEach(func(_, e gjson.Result) bool {
						if !s.heldEntry(e) {
							s.warnings++
						}
						return true
					})
				}
				return true
			})
		case "data":
			switch {
			case sh == shapeStreams:
				s.streamRows(v)
			case sh == shapeRecords || sh == shapeHits:
				if v.IsArray() {
					s.rows(v)
					break
				}
				v.ForEach(func(dk, dv gjson.Result) bool {
					if (sh == shapeRecords && dk.Str == "records") || (sh == shapeHits && (dk.Str == "results" || dk.Str == "data")) {
						s.rows(dv)
					}
					return true
				})
			}
		case "records":
			if sh == shapeRecords {
				s.rows(v)
			}
		case "results":
			if sh == shapeHits {
				s.rows(v)
			}
		}
		return true
	})
}

// refused is what a sift left out of one member's answer.
type refused struct {
	entries, warnings int
}

func (r refused) any() bool { return r.entries+r.warnings > 0 }

// sift reads member idx's answer body: what it must leave out (list entries
// and meta.warnings entries naming a connection the member may not speak
// for), and the sifter whose apply writes the body without the entries. An
// answer that is one object naming such a connection, or that cannot be
// edited safely, is an error.
func (c *Client) sift(idx int, sh shape, body []byte) (refused, *sifter, error) {
	if sh == shapeNone || c.allClaimed(idx, view(body)) {
		return refused{}, nil, nil
	}
	root := parseRoot(body)
	if !root.IsObject() {
		// Not an answer the tools use: they refuse it as it is.
		return refused{}, nil, nil
	}
	s := &sifter{c: c, idx: idx, body: view(body)}
	if s.top(root, sh); s.foreign {
		return refused{}, nil, c.notHeld(idx)
	}
	r := refused{entries: s.left, warnings: s.warnings}
	if r.any() && s.broken {
		return r, nil, c.unattributable(idx)
	}
	return r, s, nil
}

// parseRoot parses body with the index of every value it yields counted
// from the start of body: gjson counts the children's indexes from the
// root's, which Parse leaves at 0 even after leading white space.
func parseRoot(body []byte) gjson.Result {
	root := gjson.Parse(view(body))
	root.Index = len(body) - len(root.Raw)
	return root
}

// notHeld is the error for an answer that speaks, as a whole, for a
// connection its member does not hold.
func (c *Client) notHeld(idx int) error {
	return &rs.TransportError{Code: rs.CodeInvalidResponse,
		Err: fmt.Errorf("fanout: source %s answered for a connection it does not hold; nothing of that answer is shown", visible.Quote(c.label(idx)))}
}

// unattributable is the error for an answer that leaves entries out but
// cannot say so (meta or meta.warnings repeated or not an object and an
// array), or whose entries cannot be cut out safely.
func (c *Client) unattributable(idx int) error {
	return &rs.TransportError{Code: rs.CodeInvalidResponse,
		Err: fmt.Errorf("fanout: source %s answered with entries for connections it does not hold, in a shape they cannot be left out of; nothing of that answer is shown", visible.Quote(c.label(idx)))}
}

// label names member idx in messages.
func (c *Client) label(idx int) string {
	m := &c.members[idx]
	return firstOf(m.DisplayName, m.GrantID)
}

// attest is the answer member idx gave to a read routed to it, without what
// the member may not speak for, and with a warning that says what was left
// out; or the error that refuses it.
func (c *Client) attest(idx int, path string, resp *rs.Response) (*rs.Response, error) {
	sh := shapeOf(path)
	r, s, err := c.sift(idx, sh, resp.Body)
	if err != nil {
		return nil, withAnswer(err, resp)
	}
	if !r.any() {
		return resp, nil
	}
	code := codeEntriesRefused
	if sh == shapeHits {
		code = codeHitsRefused
	}
	w, _ := json.Marshal(c.refusedWarning(idx, code, r)) // strings and raw JSON always encode
	if !s.warn(w) {
		return nil, withAnswer(c.unattributable(idx), resp)
	}
	out := *resp
	out.Body = s.apply()
	return &out, nil
}

// withAnswer gives a refusal the status, request id and provider of the
// answer it refuses.
func withAnswer(err error, resp *rs.Response) error {
	if te, ok := err.(*rs.TransportError); ok {
		te.Status, te.RequestID, te.BaseURL = resp.Status, resp.RequestID, resp.BaseURL
	}
	return err
}

// warn adds the edit that writes w into the answer's meta.warnings, leaving
// out the warnings the member may not speak for. It reports false when the
// answer has no single place for it.
func (s *sifter) warn(w []byte) bool {
	if s.broken || len(s.metas) > 1 || len(s.warns) > 1 {
		return false
	}
	entry := func(b []byte) []byte { return append(b, w...) }
	switch {
	case len(s.warns) == 1:
		arr := s.warns[0]
		if !arr.IsArray() {
			return false
		}
		from, to, ok := s.at(arr)
		if !ok {
			return false
		}
		b := []byte{'['}
		arr.ForEach(func(_, e gjson.Result) bool {
			if s.heldEntry(e) {
				b = append(append(b, e.Raw...), ',')
			}
			return true
		})
		b = append(entry(b), ']')
		s.edits = append(s.edits, edit{from, to, b})
	case len(s.metas) == 1:
		meta := s.metas[0]
		if !meta.IsObject() {
			return false
		}
		_, to, ok := s.at(meta)
		if !ok {
			return false
		}
		b := []byte(`"warnings":[`)
		if strings.TrimSpace(meta.Raw[1:len(meta.Raw)-1]) != "" {
			b = append([]byte{','}, b...)
		}
		b = append(entry(b), ']')
		s.edits = append(s.edits, edit{to - 1, to - 1, b})
	default:
		end := strings.LastIndexByte(s.body, '}')
		if end < 0 {
			return false
		}
		b := []byte(`"meta":{"warnings":[`)
		if strings.TrimSpace(s.body[strings.IndexByte(s.body, '{')+1:end]) != "" {
			b = append([]byte{','}, b...)
		}
		b = append(append(entry(b), ']'), '}')
		s.edits = append(s.edits, edit{end, end, b})
	}
	return true
}

// apply returns the body with the edits made.
func (s *sifter) apply() []byte {
	slices.SortStableFunc(s.edits, func(a, b edit) int { return a.from - b.from })
	n := len(s.body)
	for _, e := range s.edits {
		n += len(e.text) - (e.to - e.from)
	}
	out := make([]byte, 0, n)
	pos := 0
	for _, e := range s.edits {
		out = append(out, s.body[pos:e.from]...)
		out = append(out, e.text...)
		pos = e.to
	}
	return append(out, s.body[pos:]...)
}

// refusedWarning says what was left out of member idx's answer.
func (c *Client) refusedWarning(idx int, code string, r refused) warning {
	what := "entr(ies)"
	if code == codeHitsRefused {
		what = "hit(s)"
	}
	var parts []string
	if r.entries > 0 {
		parts = append(parts, strconv.Itoa(r.entries)+" "+what)
	}
	if r.warnings > 0 {
		parts = append(parts, strconv.Itoa(r.warnings)+" warning(s)")
	}
	return warning{Code: code,
		Message: "Source " + visible.Quote(c.label(idx)) + " returned " + strings.Join(parts, " and ") +
			" naming a connection it does not hold, or one a source on another resource server claims too; they are left out, and no other source's records are affected.",
		Source: json.RawMessage(tagObject(c.tag(idx)))}
}

// siftChild removes from a fan-out child's answer what its member may not
// speak for, before the answer is merged; it reports false when the answer
// must be refused whole.
func (c *Client) siftChild(ch *child, sh shape) (refused, bool) {
	r, s, err := c.sift(ch.idx, sh, ch.resp.Body)
	if err != nil {
		return r, false
	}
	if r.any() {
		out := *ch.resp
		out.Body = s.apply()
		ch.resp = &out
	}
	return r, true
}
