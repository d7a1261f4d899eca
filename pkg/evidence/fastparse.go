package evidence

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// The tree of a record is built in one pass over its text. Reading it
// through gjson's ForEach scans a nested value once per level above it (to
// find where the value ends, then again to read it), and records nest a
// few levels deep. The one-pass reader accepts only valid JSON; on anything
// else it gives up and the value is read through gjson as before, so the
// tree of any input is the one gjson's reading gives (FuzzFastParse holds
// the two to each other).

// fast builds the tree of the container v at depth in one pass over v.Raw.
// It reports false when v.Raw is not one valid JSON value (surrounding
// white space aside).
func (p *parser) fast(v gjson.Result, depth int) (node, bool) {
	s := v.Raw
	i := skipWS(s, 0)
	start := len(p.scratch)
	n, i, ok := p.value(s, i, depth)
	if !ok || skipWS(s, i) != len(s) {
		clear(p.scratch[start:])
		p.scratch = p.scratch[:start]
		return node{}, false
	}
	n.raw = v.Raw // a top-level value's Raw runs to the end of its text
	return n, true
}

// value reads the value at s[i] (no white space before it) at depth and
// returns its node and the index after it.
func (p *parser) value(s string, i, depth int) (node, int, bool) {
	if i >= len(s) {
		return node{}, i, false
	}
	if depth > maxDepth {
		j, ok := skipJSON(s, i)
		return node{kind: kindTooDeep}, j, ok
	}
	switch c := s[i]; c {
	case '{':
		return p.object(s, i, depth)
	case '[':
		return p.array(s, i, depth)
	case '"':
		j, esc, ok := scanString(s, i+1)
		if !ok {
			return node{}, j, false
		}
		raw := s[i:j]
		str := raw[1 : len(raw)-1]
		if esc {
			str = gjson.Parse(raw).Str // gjson's own unescaping
		}
		if IsBase64Blob(str) {
			return node{kind: kindBase64, chars: Len(str)}, j, true
		}
		return node{kind: kindString, raw: raw, str: str, chars: Len(str)}, j, true
	case 't':
		return literal(s, i, "true")
	case 'f':
		return literal(s, i, "false")
	case 'n':
		return literal(s, i, "null")
	default:
		j, ok := scanNumber(s, i)
		return node{kind: kindScalar, raw: s[i:j]}, j, ok
	}
}

func literal(s string, i int, w string) (node, int, bool) {
	if len(s)-i < len(w) || s[i:i+len(w)] != w {
		return node{}, i, false
	}
	return node{kind: kindScalar, raw: w}, i + len(w), true
}

func (p *parser) object(s string, i, depth int) (node, int, bool) {
	start := len(p.scratch)
	var blob Blob
	open := i
	i = skipWS(s, i+1)
	if i < len(s) && s[i] == '}' {
		return node{kind: kindObject, raw: s[open : i+1]}, i + 1, true
	}
	for {
		if i >= len(s) || s[i] != '"' {
			return node{}, i, false
		}
		j, esc, ok := scanString(s, i+1)
		if !ok {
			return node{}, j, false
		}
		k := gjson.Result{Type: gjson.String, Raw: s[i:j], Str: s[i+1 : j-1]}
		if esc {
			k.Str = gjson.Parse(k.Raw).Str
		}
		i = skipWS(s, j)
		if i >= len(s) || s[i] != ':' {
			return node{}, i, false
		}
		i = skipWS(s, i+1)
		kid, j2, ok := p.value(s, i, depth+1)
		if !ok {
			return node{}, j2, false
		}
		switch k.Str {
		case "blob_id", "mime_type", "size_bytes", "sha256", "fetch_url":
			blob.take(k.Str, valueResult(s[i:j2]))
		}
		kid.key, kid.quotedKey = k.Str, quoteKey(k)
		p.scratch = append(p.scratch, kid)
		i = skipWS(s, j2)
		if i >= len(s) {
			return node{}, i, false
		}
		if s[i] == '}' {
			kids := p.pop(start)
			raw := s[open : i+1]
			if blob.valid() {
				b := blob
				return node{kind: kindBlob, raw: raw, blob: &b, kids: kids}, i + 1, true
			}
			return node{kind: kindObject, raw: raw, kids: kids}, i + 1, true
		}
		if s[i] != ',' {
			return node{}, i, false
		}
		i = skipWS(s, i+1)
	}
}

// valueResult is the gjson reading of the valid JSON value raw, as far as
// Blob.take looks at it: its type, string and number.
func valueResult(raw string) gjson.Result {
	switch raw[0] {
	case '"':
		r := gjson.Result{Type: gjson.String, Raw: raw, Str: raw[1 : len(raw)-1]}
		if strings.IndexByte(raw, '\\') >= 0 {
			r.Str = gjson.Parse(raw).Str
		}
		return r
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		f, _ := strconv.ParseFloat(raw, 64)
		return gjson.Result{Type: gjson.Number, Raw: raw, Num: f}
	case 't':
		return gjson.Result{Type: gjson.True, Raw: raw}
	case 'f':
		return gjson.Result{Type: gjson.False, Raw: raw}
	case '{', '[':
		return gjson.Result{Type: gjson.JSON, Raw: raw}
	}
	return gjson.Result{Raw: raw}
}

func (p *parser) array(s string, i, depth int) (node, int, bool) {
	start := len(p.scratch)
	open := i
	i = skipWS(s, i+1)
	if i < len(s) && s[i] == ']' {
		return node{kind: kindArray, raw: s[open : i+1]}, i + 1, true
	}
	for {
		kid, j, ok := p.value(s, i, depth+1)
		if !ok {
			return node{}, j, false
		}
		p.scratch = append(p.scratch, kid)
		i = skipWS(s, j)
		if i >= len(s) {
			return node{}, i, false
		}
		if s[i] == ']' {
			return node{kind: kindArray, raw: s[open : i+1], kids: p.pop(start)}, i + 1, true
		}
		if s[i] != ',' {
			return node{}, i, false
		}
		i = skipWS(s, i+1)
	}
}

func skipWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// scanString returns the index after the closing quote of the string whose
// contents start at s[i], and whether it has escapes; ok is false when it
// is not a valid JSON string.
func scanString(s string, i int) (end int, esc, ok bool) {
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return i + 1, esc, true
		case c < ' ':
			return i, esc, false
		case c == '\\':
			esc = true
			i++
			if i == len(s) {
				return i, esc, false
			}
			switch s[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(s) || !hexDigit(s[i+1]) || !hexDigit(s[i+2]) || !hexDigit(s[i+3]) || !hexDigit(s[i+4]) {
					return i, esc, false
				}
				i += 4
			default:
				return i, esc, false
			}
		}
	}
	return i, esc, false
}

func hexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// scanNumber returns the index after the JSON number at s[i]; ok is false
// when there is none.
func scanNumber(s string, i int) (int, bool) {
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i >= len(s) || s[i] < '0' || s[i] > '9':
		return i, false
	case s[i] == '0':
		i++
	default:
		i = digits(s, i)
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return i, false
		}
		i = digits(s, i)
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return i, false
		}
		i = digits(s, i)
	}
	return i, true
}

func digits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// skipJSON returns the index after the valid JSON value at s[i], reading
// nested values without recursion (a value too deep for a tree can be
// nested arbitrarily deep).
func skipJSON(s string, i int) (int, bool) {
	var stack []byte // the open containers
	for {
		// A value is expected at s[i].
		if i >= len(s) {
			return i, false
		}
		switch c := s[i]; c {
		case '{', '[':
			stack = append(stack, c)
			i = skipWS(s, i+1)
			if i < len(s) && s[i] == c+2 { // '}' and ']' follow '{' and '[' by two
				stack = stack[:len(stack)-1]
				i++
				break
			}
			if c == '{' {
				var ok bool
				if i, ok = skipKey(s, i); !ok {
					return i, false
				}
			}
			continue
		case '"':
			j, _, ok := scanString(s, i+1)
			if !ok {
				return j, false
			}
			i = j
		case 't', 'f', 'n':
			w := "null"
			switch c {
			case 't':
				w = "true"
			case 'f':
				w = "false"
			}
			if _, j, ok := literal(s, i, w); ok {
				i = j
			} else {
				return j, false
			}
		default:
			j, ok := scanNumber(s, i)
			if !ok {
				return j, false
			}
			i = j
		}
		// After a value: close containers or go on to the next value.
		for {
			if len(stack) == 0 {
				return i, true
			}
			i = skipWS(s, i)
			if i >= len(s) {
				return i, false
			}
			top := stack[len(stack)-1]
			if s[i] == top+2 {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if s[i] != ',' {
				return i, false
			}
			i = skipWS(s, i+1)
			if top == '{' {
				var ok bool
				if i, ok = skipKey(s, i); !ok {
					return i, false
				}
			}
			break
		}
	}
}

// skipKey reads `"key" :` and the white space after it.
func skipKey(s string, i int) (int, bool) {
	if i >= len(s) || s[i] != '"' {
		return i, false
	}
	j, _, ok := scanString(s, i+1)
	if !ok {
		return j, false
	}
	i = skipWS(s, j)
	if i >= len(s) || s[i] != ':' {
		return i, false
	}
	return skipWS(s, i+1), true
}
