package pdpptest

import (
	"net/url"
	"strings"
)

// The reference parses query strings with the qs library (depth 8, arrayLimit
// 64): bracket keys build nested maps (filter[received_at][gte]=…,
// expand_limit[attachments]=3), repeated keys build arrays, and x[] is the same
// key as x. query reproduces that shape.
const (
	qsDepth      = 8
	qsArrayLimit = 64
)

// pair is one decoded key=value of the query string, in request order.
type pair struct {
	key, value string
}

// qnode is one level of the parsed query: leaf values (one per occurrence) and
// bracketed children in first-seen order.
type qnode struct {
	vals  []string
	kids  map[string]*qnode
	order []string
}

func (n *qnode) child(key string) *qnode {
	if n.kids == nil {
		n.kids = map[string]*qnode{}
	}
	k, ok := n.kids[key]
	if !ok {
		k = &qnode{}
		n.kids[key] = k
		n.order = append(n.order, key)
	}
	return k
}

// nested reports whether the node has bracketed children.
func (n *qnode) nested() bool { return n != nil && len(n.order) > 0 }

// query is a parsed query string.
type query struct {
	pairs []pair
	root  qnode
}

// parseQuery parses a raw query string qs-style. Undecodable escapes are kept
// literally, as qs does.
func parseQuery(raw string) *query {
	q := &query{}
	if raw == "" {
		return q
	}
	for _, part := range strings.Split(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		key, val := formDecode(k), formDecode(v)
		if key == "" {
			continue
		}
		q.pairs = append(q.pairs, pair{key, val})
		q.add(key, val)
	}
	return q
}

func formDecode(s string) string {
	s = strings.ReplaceAll(s, "+", " ")
	if d, err := url.PathUnescape(s); err == nil {
		return d
	}
	return s
}

// add places one key=value into the tree: "a[b][c]" walks a → b → c, and an
// empty or numeric last segment ("a[]", "a[0]") appends to a's values.
func (q *query) add(key, val string) {
	segs := splitKey(key)
	n := q.root.child(segs[0])
	for i, s := range segs[1:] {
		last := i == len(segs)-2
		if last && (s == "" || isIndex(s)) {
			break
		}
		n = n.child(s)
	}
	if len(n.vals) < qsArrayLimit+1 {
		n.vals = append(n.vals, val)
	}
}

// splitKey splits "a[b][c]" into a, b, c. Past qsDepth brackets, or on an
// unbalanced bracket, the rest of the key is one literal segment.
func splitKey(key string) []string {
	i := strings.IndexByte(key, '[')
	if i <= 0 {
		return []string{key}
	}
	segs := []string{key[:i]}
	rest := key[i:]
	for len(rest) > 0 && len(segs) <= qsDepth {
		if rest[0] != '[' {
			break
		}
		j := strings.IndexByte(rest, ']')
		if j < 0 {
			break
		}
		segs = append(segs, rest[1:j])
		rest = rest[j+1:]
	}
	if rest != "" {
		segs = append(segs, rest)
	}
	return segs
}

func isIndex(s string) bool {
	if s == "" || len(s) > 3 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// keys returns the top-level parameter names in first-seen order.
func (q *query) keys() []string { return q.root.order }

// has reports whether a top-level parameter is present (leaf or nested).
func (q *query) has(key string) bool {
	_, ok := q.root.kids[key]
	return ok
}

// node returns the parsed parameter, or nil.
func (q *query) node(key string) *qnode { return q.root.kids[key] }

// single returns the one value of a scalar parameter. A repeated or bracketed
// scalar is a client mistake the reference rejects; present reports presence.
func (q *query) single(key string) (val string, present bool, err *apiError) {
	n := q.node(key)
	if n == nil {
		return "", false, nil
	}
	if n.nested() || len(n.vals) != 1 {
		return "", true, badRequest("%s must be a single value", key).param(key)
	}
	return n.vals[0], true, nil
}

// list returns every value of a repeatable parameter (x=a&x=b, x[]=a).
func (q *query) list(key string) []string {
	n := q.node(key)
	if n == nil {
		return nil
	}
	return n.vals
}

// csv returns a CSV-or-repeated parameter split on commas, trimmed, without
// empty entries (how the reference reads fields).
func (q *query) csv(key string) []string {
	var out []string
	for _, v := range q.list(key) {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
	}
	return out
}

// unknown returns the top-level keys not in allowed, in request order.
func (q *query) unknown(allowed map[string]bool) []string {
	var out []string
	for _, k := range q.keys() {
		if !allowed[k] {
			out = append(out, k)
		}
	}
	return out
}

// set builds a lookup set from names.
func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
