package rs

import (
	"net/url"
	"strings"
)

// Encode renders the query as application/x-www-form-urlencoded, parameters in
// order and repeated keys kept. Brackets in keys come out as %5B and %5D, which
// the RS decodes back to filter[field][op] before parsing nested keys.
func (q Query) Encode() string {
	if len(q) == 0 {
		return ""
	}
	var b strings.Builder
	n := 0
	for _, p := range q {
		n += len(p.Key) + len(p.Value) + 2
	}
	b.Grow(n + n/4) // room for a few escapes without regrowing
	for i, p := range q {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(p.Key))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(p.Value))
	}
	return b.String()
}

// Path builds an escaped request path from unescaped segments:
// Path("v1", "streams", s, "records", id) is "/v1/streams/<s>/records/<id>".
// Each segment is escaped on its own, so '/', '?', '#', '%' and spaces inside a
// record id stay inside that segment. The segments "." and ".." are sent as
// %2E and %2E%2E so that no URL layer can treat them as dot-segments and
// address a different route.
func Path(segments ...string) string {
	var b strings.Builder
	n := 0
	for _, s := range segments {
		n += len(s) + 1
	}
	b.Grow(n)
	for _, s := range segments {
		b.WriteByte('/')
		switch s {
		case ".":
			b.WriteString("%2E")
		case "..":
			b.WriteString("%2E%2E")
		default:
			b.WriteString(url.PathEscape(s))
		}
	}
	return b.String()
}
