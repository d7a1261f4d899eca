package evidence

import (
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/resultid"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// limits bound one rendering of a JSON value. Zero means unbounded.
type limits struct {
	str     int // code points kept of each string value
	entries int // entries kept of each object or array
}

// counts says what a rendering left out or replaced.
type counts struct {
	cutValues  int // strings shortened to limits.str
	cutEntries int // object or array entries left out (including too-deep values)
	binary     int // binary values rendered as metadata
	marks      int // hidden-character marks (visible.Count) in the text
}

func (c *counts) add(o counts) {
	c.cutValues += o.cutValues
	c.cutEntries += o.cutEntries
	c.binary += o.binary
	c.marks += o.marks
}

// cutSlack: a string is only shortened when that saves more than the
// "…[N chars]" note costs.
const cutSlack = 12

// maxDepth bounds nesting; deeper values render as a marker string.
const maxDepth = 32

// blobStringCap bounds blob metadata strings (ids, URLs) under a string limit:
// they are identifiers, so they keep more than ordinary values.
const blobStringCap = 160

// States of node.vis.
const (
	visUnknown = iota
	visClean
	visChanged
)

// Node kinds.
const (
	kindScalar = iota // number, true, false, null: raw is the source text
	kindString        // raw is the source literal, str the value
	kindBase64        // an inline base64 body; chars is its length
	kindBlob          // a blob_ref object; blob is its metadata
	kindObject
	kindArray
	kindTooDeep
)

// node is a JSON value parsed once, so a record can be rendered at several
// limits without rescanning its source.
type node struct {
	kind uint8
	// vis caches whether str renders unchanged (see hidden); beside kind,
	// it takes no room of its own.
	vis uint8
	key string // member name, for members of an object
	// quotedKey is key as a JSON string, computed once rather than per rendering.
	quotedKey string
	// raw is the source text of a scalar, string or container.
	raw   string
	str   string
	chars int // code points of str
	blob  *Blob
	// kids are the members or elements of a container; a blob keeps the
	// members it was read from.
	kids []node
}

// parse builds the node tree of v. It never fails: gjson's reading of the
// source is taken as is.
func parse(v gjson.Result, depth int) node {
	var p parser
	return p.parse(v, depth)
}

// parser builds node trees. Its scratch stack collects a container's children
// while they are parsed, so each container gets one exactly sized kids slice
// instead of a series of growing ones. One parser may serve many trees.
type parser struct {
	scratch []node
}

func (p *parser) parse(v gjson.Result, depth int) node {
	switch {
	case depth > maxDepth:
		return node{kind: kindTooDeep}
	case v.Type == gjson.String:
		if IsBase64Blob(v.Str) {
			return node{kind: kindBase64, chars: Len(v.Str)}
		}
		return node{kind: kindString, raw: v.Raw, str: v.Str, chars: Len(v.Str)}
	case v.IsObject():
		var blob Blob
		start := len(p.scratch)
		v.ForEach(func(k, f gjson.Result) bool {
			blob.take(k.Str, f)
			kid := p.parse(f, depth+1)
			kid.key, kid.quotedKey = k.Str, quoteKey(k)
			p.scratch = append(p.scratch, kid)
			return true
		})
		kids := p.pop(start)
		if blob.valid() {
			b := blob // only a real blob costs an allocation
			return node{kind: kindBlob, raw: v.Raw, blob: &b, kids: kids}
		}
		return node{kind: kindObject, raw: v.Raw, kids: kids}
	case v.IsArray():
		start := len(p.scratch)
		v.ForEach(func(_, f gjson.Result) bool {
			p.scratch = append(p.scratch, p.parse(f, depth+1))
			return true
		})
		return node{kind: kindArray, raw: v.Raw, kids: p.pop(start)}
	case v.Raw == "":
		return node{kind: kindScalar, raw: "null"}
	default:
		return node{kind: kindScalar, raw: v.Raw}
	}
}

// pop removes the nodes pushed since start and returns a copy of them (nil
// when there are none).
func (p *parser) pop(start int) []node {
	var kids []node
	if n := len(p.scratch) - start; n > 0 {
		kids = make([]node, n)
		copy(kids, p.scratch[start:])
	}
	clear(p.scratch[start:]) // drop references into the source
	p.scratch = p.scratch[:start]
	return kids
}

// quoteKey returns a member name as appendString writes it. A source literal
// of plain printable ASCII without escapes is already that; anything else is
// re-encoded.
func quoteKey(k gjson.Result) string {
	raw := k.Raw
	plain := len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"'
	for i := 1; plain && i < len(raw)-1; i++ {
		c := raw[i]
		plain = c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\'
	}
	if plain {
		return raw
	}
	return string(visible.AppendJSON(nil, k.Str))
}

// child returns the first member named key, or nil.
func (n *node) child(key string) *node {
	for i := range n.kids {
		if n.kids[i].key == key {
			return &n.kids[i]
		}
	}
	return nil
}

// visibleJSON is VisibleJSON of the value n was parsed from. A tree parsed
// from an enclosing value stops deeper below n than VisibleJSON would; only
// then is n's source parsed again.
func (n *node) visibleJSON(connection string) string {
	if n.cutByDepth() {
		return VisibleJSONIn(gjson.Parse(n.raw), connection)
	}
	r := renderer{conn: connection}
	return string(r.value(nil, n, 0, false))
}

func (n *node) cutByDepth() bool {
	if n.kind == kindTooDeep {
		return true
	}
	for i := range n.kids {
		if n.kids[i].cutByDepth() {
			return true
		}
	}
	return false
}

// member returns the string value of an object's member ("" when absent).
func (n *node) member(key string) string {
	for i := range n.kids {
		if n.kids[i].key == key && n.kids[i].kind == kindString {
			return n.kids[i].str
		}
	}
	return ""
}

// empty reports a value that carries nothing: null, "", [] or {}.
func (n *node) empty() bool {
	switch n.kind {
	case kindString:
		return n.str == ""
	case kindObject, kindArray:
		return len(n.kids) == 0
	case kindScalar:
		return n.raw == "null"
	}
	return false
}

// identity is a record's id parts; members that only repeat them are folded
// out of a rendering that prints the id separately.
type identity struct {
	record, stream, connection string
}

// renderer writes compact JSON in authored key order, replacing binary values
// with metadata and applying limits.
type renderer struct {
	lim limits
	n   counts
	// fold, when set, leaves out the record wrapper members its id spells out.
	fold *identity
	// conn is the connection blob handles name: the caller's, or the
	// connection_id of the record wrapper being rendered.
	conn string
	// keys are field names a terse rendering keeps first.
	keys *keySet
	// lead, when set, puts a record's identifying data members first: from
	// each group, in group order, the first name the record has.
	lead [][]string
	// leading[:nLeading] are the members of the data object being rendered
	// that lead. A fixed array: renderers are made per line and level, and a
	// slice would cost an allocation each.
	leading  [maxLeading]*node
	nLeading int
	// trackWhole asks for whole: the members of a folded record's data that
	// the rendering shows whole (nothing inside them cut or left out), each
	// with the byte offset where its rendering ends, in rendering order.
	trackWhole bool
	whole      []memberEnd
	// keyStr: the string being rendered is a key or leading member of
	// record data, which keeps more of its value than other strings.
	keyStr bool
	// dups are members of the record data being rendered whose value
	// repeats a member kept before them: the first a terse preview drops.
	dups []*node
	// memo, when set, keeps what the record data's rendering works out from
	// the data alone (leading members, duplicates, ranks), so the renderings
	// of one record at several limits work it out once.
	memo *dataMemo
}

// dataMemo is what renderings of one record's data share. Leading members,
// duplicates and ranks depend on the data object, the key fields and the
// lead groups, which are the same for every rendering of a preview line.
type dataMemo struct {
	data     *node // the data object these are for; nil before the first
	leading  [maxLeading]*node
	nLeading int
	dupsDone bool
	dups     []*node
	ranks    []uint8 // per member of data, rank+1 (0: not computed yet)
}

// forData readies m for data object n, forgetting what it held for another.
func (m *dataMemo) forData(n *node) bool {
	if m.data == n {
		return true
	}
	*m = dataMemo{data: n, dups: m.dups[:0], ranks: m.ranks[:0]}
	return false
}

// keyStrFactor is how much longer a key or leading member's string may be
// than other strings at the same level: the budget goes to the declared
// title and time before other values.
const keyStrFactor = 4

// memberEnd is a member name and the byte offset where its rendering ends.
type memberEnd struct {
	key string
	end int
}

// VisibleJSON returns v as compact JSON, authored key order kept, with every
// binary value (blob_ref object or inline base64 string) replaced by its
// metadata. Nothing else is cut. Use it wherever a record reaches model-visible
// text in full.
func VisibleJSON(v gjson.Result) string { return VisibleJSONIn(v, "") }

// VisibleJSONIn is VisibleJSON of a value read under connection: its blob
// handles name that connection (a record wrapper names its own).
func VisibleJSONIn(v gjson.Result, connection string) string {
	r := renderer{conn: connection}
	n := parse(v, 0)
	return string(r.value(nil, &n, 0, false))
}

// maxHandleBytes bounds a blob handle printed in text; a longer one (an
// absurd blob id) is left out rather than cut, and fetch_url stands.
const maxHandleBytes = 400

// blobHandle is the pdpp://blob/ handle of a blob read under connection,
// carrying the digest the blob_ref states when the id does not name it.
func blobHandle(connection string, m Blob) (string, bool) {
	b, err := resultid.NewBlob(connection, m.BlobID)
	if err != nil {
		return "", false
	}
	h := b.WithSHA256(m.SHA256).URI()
	return h, len(h) <= maxHandleBytes
}

// value appends n. inData is true for the members of a folded record's data.
func (r *renderer) value(b []byte, n *node, depth int, inData bool) []byte {
	switch n.kind {
	case kindTooDeep:
		r.n.cutEntries++
		return append(b, `"…(nested deeper than 32 levels)"`...)
	case kindString:
		return r.str(b, n)
	case kindBase64:
		r.n.binary++
		b = append(b, `{"binary":"base64","size_chars":`...)
		b = strconv.AppendInt(b, int64(n.chars), 10)
		return append(b, '}')
	case kindBlob:
		r.n.binary++
		return r.blob(b, *n.blob)
	case kindObject:
		return r.object(b, n, depth, inData)
	case kindArray:
		return r.array(b, n, depth)
	default:
		return append(b, n.raw...)
	}
}

func (r *renderer) str(b []byte, n *node) []byte {
	limit := r.lim.str
	if r.keyStr {
		limit *= keyStrFactor
	}
	if limit > 0 && n.chars > limit+cutSlack {
		cut, _ := visible.Text.Cut(n.str, limit)
		r.n.cutValues++
		b = jsonw.AppendString(b, cut)
		b = append(b[:len(b)-1], '[') // reopen the string for the length note
		b = strconv.AppendInt(b, int64(n.chars), 10)
		return append(b, ` chars]"`...)
	}
	if n.raw == "" || n.raw[0] != '"' || n.hidden() {
		// The source literal may spell a hidden character as an escape.
		return visible.Text.AppendJSON(b, n.str)
	}
	return append(b, n.raw...)
}

// hidden reports whether a string node's value holds something the visible
// rule for text values (visible.Text) changes; the answer is kept, since a
// record is rendered at several limits.
func (n *node) hidden() bool {
	if n.vis == visUnknown {
		n.vis = visClean
		if !visible.Text.Clean(n.str) {
			n.vis = visChanged
		}
	}
	return n.vis == visChanged
}

// folded reports whether member m of an object at this position only repeats
// the record's identity, or is the RS's deprecated connection alias.
func (r *renderer) folded(parent, m *node, depth int, inData bool) bool {
	if m.key == "connector_instance_id" && m.kind == kindString && m.str != "" && m.str == parent.member("connection_id") {
		return true // same value as connection_id: no information
	}
	if r.fold == nil || m.kind != kindString || m.str == "" {
		return false
	}
	switch {
	case depth == 0:
		switch m.key {
		case "object":
			return m.str == "record"
		case "id":
			return m.str == r.fold.record
		case "stream":
			return m.str == r.fold.stream
		case "connection_id", "connector_instance_id":
			return m.str == r.fold.connection
		}
	case inData:
		return (m.key == "id" || m.key == "record_id") && m.str == r.fold.record
	}
	return false
}

func (r *renderer) object(b []byte, n *node, depth int, inData bool) []byte {
	if depth == 0 {
		if c := n.member("connection_id"); c != "" {
			r.conn = c
		}
	}
	var buf [32]int // most objects fit; it spares an allocation per rendering
	keep := buf[:0]
	for i := range n.kids {
		if !r.folded(n, &n.kids[i], depth, inData) {
			keep = append(keep, i)
		}
	}
	top := inData && depth == 1 && r.lead != nil
	var memo *dataMemo
	if top {
		if r.memo != nil {
			memo = r.memo
			if memo.forData(n) {
				r.leading, r.nLeading = memo.leading, memo.nLeading
			} else {
				r.pickLeading(n)
				memo.leading, memo.nLeading = r.leading, r.nLeading
			}
		} else {
			r.pickLeading(n)
		}
		defer func() { r.nLeading = 0 }()
	}
	left := 0
	if r.lim.entries > 0 && len(keep) > r.lim.entries {
		left = len(keep) - r.lim.entries
		if top {
			// The members kept so far (those not folded) are the same for
			// every rendering of a record, so the duplicates are too.
			if memo != nil && memo.dupsDone {
				r.dups = append(r.dups[:0], memo.dups...)
			} else {
				r.findDups(n, keep)
				if memo != nil {
					memo.dups, memo.dupsDone = append(memo.dups[:0], r.dups...), true
				}
			}
			defer func() { r.dups = r.dups[:0] }()
		}
		keep = r.mostInformative(n, keep, memo)
	}
	if top && r.nLeading > 0 {
		keep = r.leadFirst(n, keep)
	}
	if inData && depth == 1 && r.trackWhole && r.whole == nil {
		r.whole = make([]memberEnd, 0, len(keep))
	}
	b = append(b, '{')
	for i, j := range keep {
		if i > 0 {
			b = append(b, ',')
		}
		m := &n.kids[j]
		b = append(b, m.quotedKey...)
		b = append(b, ':')
		before := r.n
		r.keyStr = top && m.kind == kindString && (r.keys.has(m.key) || r.isLeading(m))
		b = r.value(b, m, depth+1, depth == 0 && r.fold != nil && m.key == "data")
		r.keyStr = false
		if inData && depth == 1 && r.trackWhole && r.n.cutValues == before.cutValues && r.n.cutEntries == before.cutEntries {
			r.whole = append(r.whole, memberEnd{m.key, len(b)})
		}
	}
	if left > 0 {
		r.n.cutEntries += left
		if len(keep) > 0 {
			b = append(b, ',')
		}
		b = append(b, `"…":"+`...)
		b = strconv.AppendInt(b, int64(left), 10)
		b = append(b, ` more"`...)
	}
	return append(b, '}')
}

// pickLeading finds the members of record data n that lead its rendering:
// from each lead group the first name n has with a non-empty value.
func (r *renderer) pickLeading(n *node) {
	r.nLeading = 0
	for _, group := range r.lead {
		if r.nLeading == maxLeading {
			return
		}
	names:
		for _, name := range group {
			for i := range n.kids {
				if m := &n.kids[i]; m.key == name && !m.empty() {
					r.leading[r.nLeading] = m
					r.nLeading++
					break names
				}
			}
		}
	}
}

// maxLeading bounds the members that lead a record's rendering.
const maxLeading = 8

func (r *renderer) isLeading(m *node) bool {
	for _, l := range r.leading[:r.nLeading] {
		if l == m {
			return true
		}
	}
	return false
}

// leadFirst reorders keep (indexes into n.kids): the leading members in
// lead order, then the others in authored order. It reuses keep's array.
func (r *renderer) leadFirst(n *node, keep []int) []int {
	var buf [32]int
	all := append(buf[:0], keep...)
	out := keep[:0]
	for _, l := range r.leading[:r.nLeading] {
		for _, j := range all {
			if &n.kids[j] == l {
				out = append(out, j)
			}
		}
	}
	for _, j := range all {
		if !r.isLeading(&n.kids[j]) {
			out = append(out, j)
		}
	}
	return out
}

// findDups collects the members of record data n (among keep) whose string
// value repeats one kept before it, key and leading members counting first:
// a date equal to received_at says nothing new.
func (r *renderer) findDups(n *node, keep []int) {
	r.dups = r.dups[:0]
	// Most records have a few dozen members: comparing against the values
	// seen so far costs less than a map per rendering. Larger ones take a map,
	// so a hostile record cannot make this quadratic.
	var buf [smallObject]string
	seen := buf[:0]
	var many map[string]bool
	if len(keep) > smallObject {
		many = make(map[string]bool, len(keep))
	}
	for pass := 0; pass < 2; pass++ {
		for _, j := range keep {
			m := &n.kids[j]
			if m.kind != kindString || m.str == "" || (pass == 0) != (r.keys.has(m.key) || r.isLeading(m)) {
				continue
			}
			if many != nil {
				if many[m.str] {
					r.dups = append(r.dups, m)
				}
				many[m.str] = true
				continue
			}
			if slices.Contains(seen, m.str) {
				r.dups = append(r.dups, m)
			} else {
				seen = append(seen, m.str)
			}
		}
	}
}

// smallObject is the member count up to which lookups scan a slice rather
// than build a map.
const smallObject = 32

// keySet is a set of field names: a slice while it is small (a lookup then
// compares a few strings instead of hashing one), a map beyond.
type keySet struct {
	few  []string
	many map[string]bool
}

func newKeySet(names []string) *keySet {
	k := &keySet{}
	if len(names) > maxFewKeys {
		k.many = make(map[string]bool, len(names))
		for _, n := range names {
			k.many[n] = true
		}
		return k
	}
	k.few = names
	return k
}

// maxFewKeys is the largest keySet kept as a slice.
const maxFewKeys = 8

// has reports whether name is in the set; a nil set is empty.
func (k *keySet) has(name string) bool {
	switch {
	case k == nil:
		return false
	case k.many != nil:
		return k.many[name]
	}
	return slices.Contains(k.few, name)
}

func (r *renderer) isDup(m *node) bool {
	for _, d := range r.dups {
		if d == m {
			return true
		}
	}
	return false
}

// rank orders members by how much a terse preview loses without them: the
// caller's key fields, the record's leading members and a record wrapper's
// "data" payload, then non-empty strings, numbers and binary metadata,
// booleans, non-empty containers, and last null and empty values and values
// that repeat another member's.
func (r *renderer) rank(m *node) int {
	switch {
	case r.keys.has(m.key), m.key == "data" && m.kind == kindObject, r.isLeading(m):
		return 0
	case m.empty(), r.isDup(m):
		return 5
	case m.kind == kindString:
		return 1
	case m.kind == kindBase64, m.kind == kindBlob, m.kind == kindScalar && m.raw != "true" && m.raw != "false":
		return 2
	case m.kind == kindScalar:
		return 3
	default:
		return 4
	}
}

// ranks is the number of ranks rank returns.
const ranks = 6

// mostInformative keeps the r.lim.entries best-ranked members of keep, in
// authored order, the earlier member winning a tie: a stable sort by rank cut
// to length, done by counting since there are only a few ranks. It reuses
// keep's array.
func (r *renderer) mostInformative(n *node, keep []int, memo *dataMemo) []int {
	var perRank [ranks]int
	// Each member's rank, computed once for both passes below (and, with a
	// memo, once for every rendering of the record).
	var buf [smallObject]uint8
	rankOf := buf[:0]
	if len(keep) > smallObject {
		rankOf = make([]uint8, 0, len(keep))
	}
	if memo != nil && len(memo.ranks) != len(n.kids) {
		memo.ranks = append(memo.ranks[:0], make([]uint8, len(n.kids))...)
	}
	for _, j := range keep {
		var rank int
		if memo != nil && memo.ranks[j] != 0 {
			rank = int(memo.ranks[j]) - 1
		} else {
			rank = r.rank(&n.kids[j])
			if memo != nil {
				memo.ranks[j] = uint8(rank + 1)
			}
		}
		rankOf = append(rankOf, uint8(rank))
		perRank[rank]++
	}
	// Every member ranked below cutoff is kept, and the first quota of rank cutoff.
	cutoff, quota := 0, r.lim.entries
	for perRank[cutoff] < quota {
		quota -= perRank[cutoff]
		cutoff++
	}
	out := keep[:0]
	for i, j := range keep {
		switch rank := int(rankOf[i]); {
		case rank < cutoff:
			out = append(out, j)
		case rank == cutoff && quota > 0:
			out = append(out, j)
			quota--
		}
	}
	return out
}

func (r *renderer) array(b []byte, n *node, depth int) []byte {
	kept := len(n.kids)
	if r.lim.entries > 0 && kept > r.lim.entries {
		kept = r.lim.entries
	}
	b = append(b, '[')
	for i := range kept {
		if i > 0 {
			b = append(b, ',')
		}
		b = r.value(b, &n.kids[i], depth+1, false)
	}
	if left := len(n.kids) - kept; left > 0 {
		r.n.cutEntries += left
		if kept > 0 {
			b = append(b, ',')
		}
		b = append(b, `"…+`...)
		b = strconv.AppendInt(b, int64(left), 10)
		b = append(b, ` more"`...)
	}
	return append(b, ']')
}

// blob renders blob_ref metadata. The marker says the bytes are elsewhere.
func (r *renderer) blob(b []byte, m Blob) []byte {
	capped := func(s string) string {
		if r.lim.str > 0 {
			if c, ok := visible.Cut(s, blobStringCap); ok {
				r.n.cutValues++
				return c + "[" + strconv.Itoa(Len(s)) + " chars]"
			}
		}
		return visible.String(s)
	}
	b = append(b, `{"binary":"blob_ref","blob_id":`...)
	b = jsonw.AppendString(b, capped(m.BlobID))
	if m.MIMEType != "" {
		b = append(b, `,"mime_type":`...)
		b = jsonw.AppendString(b, capped(m.MIMEType))
	}
	if m.HasSize {
		b = append(b, `,"size_bytes":`...)
		b = strconv.AppendInt(b, m.SizeBytes, 10)
	}
	// The handle replaces fetch_url, which only a bearer of the grant's
	// token can open: fetch reads the handle through the same route.
	if h, ok := blobHandle(r.conn, m); ok {
		b = append(b, `,"fetch":`...)
		b = jsonw.AppendString(b, h)
	} else if m.FetchURL != "" {
		b = append(b, `,"fetch_url":`...)
		b = jsonw.AppendString(b, capped(m.FetchURL))
	}
	return append(b, '}')
}
