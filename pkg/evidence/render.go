package evidence

import (
	"cmp"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/tidwall/gjson"
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
}

func (c *counts) add(o counts) {
	c.cutValues += o.cutValues
	c.cutEntries += o.cutEntries
	c.binary += o.binary
}

// cutSlack: a string is only shortened when that saves more than the
// "…[N chars]" note costs.
const cutSlack = 12

// maxDepth bounds recursion; deeper values render as a marker string.
const maxDepth = 32

// blobStringCap bounds blob metadata strings (ids, URLs) under a string limit:
// they are identifiers, so they keep more than ordinary values.
const blobStringCap = 160

// renderer writes compact JSON in authored key order, replacing binary values
// with metadata and applying limits.
type renderer struct {
	lim limits
	n   counts
	// fold and foldData, when set, leave out members the caller already shows
	// (a record's identity, printed as its id): fold at the top level, foldData
	// inside the top-level "data" object.
	fold, foldData func(key string, v gjson.Result) bool
	// keys are field names a terse rendering keeps first.
	keys map[string]bool
}

// VisibleJSON returns v as compact JSON, authored key order kept, with every
// binary value (blob_ref object or inline base64 string) replaced by its
// metadata. Nothing else is cut. Use it wherever a record reaches model-visible
// text in full.
func VisibleJSON(v gjson.Result) string {
	var r renderer
	return string(r.value(nil, v, 0, nil))
}

func (r *renderer) value(b []byte, v gjson.Result, depth int, fold func(string, gjson.Result) bool) []byte {
	if depth > maxDepth {
		r.n.cutEntries++
		return append(b, `"…(nested deeper than 32 levels)"`...)
	}
	switch {
	case v.Type == gjson.String:
		return r.str(b, v)
	case v.IsObject():
		if blob, ok := BlobRef(v); ok {
			r.n.binary++
			return r.blob(b, blob)
		}
		return r.object(b, v, depth, fold)
	case v.IsArray():
		return r.array(b, v, depth)
	case v.Raw == "":
		return append(b, "null"...)
	default: // numbers, true, false, null: their source text is already compact
		return append(b, v.Raw...)
	}
}

func (r *renderer) str(b []byte, v gjson.Result) []byte {
	if IsBase64Blob(v.Str) {
		r.n.binary++
		b = append(b, `{"binary":"base64","size_chars":`...)
		b = strconv.AppendInt(b, int64(Len(v.Str)), 10)
		return append(b, '}')
	}
	if r.lim.str > 0 && Len(v.Str) > r.lim.str+cutSlack {
		if cut, ok := Cut(v.Str, r.lim.str); ok {
			r.n.cutValues++
			return appendString(b, cut+"["+strconv.Itoa(Len(v.Str))+" chars]")
		}
	}
	if v.Raw == "" || v.Raw[0] != '"' {
		return appendString(b, v.Str)
	}
	return append(b, v.Raw...)
}

func (r *renderer) object(b []byte, v gjson.Result, depth int, fold func(string, gjson.Result) bool) []byte {
	type member struct {
		key string
		val gjson.Result
	}
	var ms []member
	conn := v.Get("connection_id")
	v.ForEach(func(k, f gjson.Result) bool {
		switch {
		case fold != nil && fold(k.Str, f):
		case k.Str == "connector_instance_id" && f.Type == gjson.String && conn.Type == gjson.String && f.Str == conn.Str:
			// the RS's deprecated alias of connection_id: same value, no information
		default:
			ms = append(ms, member{k.Str, f})
		}
		return true
	})
	keep := ms
	left := 0
	if r.lim.entries > 0 && len(ms) > r.lim.entries {
		// Keep the most informative members, shown in authored order.
		idx := make([]int, len(ms))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, c int) int {
			return cmp.Compare(r.rank(ms[a].key, ms[a].val), r.rank(ms[c].key, ms[c].val))
		})
		idx = idx[:r.lim.entries]
		slices.Sort(idx)
		keep = make([]member, len(idx))
		for i, j := range idx {
			keep[i] = ms[j]
		}
		left = len(ms) - len(keep)
	}
	b = append(b, '{')
	for i, m := range keep {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, m.key)
		b = append(b, ':')
		var childFold func(string, gjson.Result) bool
		if depth == 0 && m.key == "data" {
			childFold = r.foldData
		}
		b = r.value(b, m.val, depth+1, childFold)
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

// rank orders members by how much a terse preview loses without them: the
// caller's key fields and a record wrapper's "data" payload, then non-empty
// strings, numbers and binary metadata, booleans, non-empty containers, and
// last null and empty values.
func (r *renderer) rank(key string, v gjson.Result) int {
	switch {
	case r.keys[key], key == "data" && v.IsObject():
		return 0
	case v.Type == gjson.String && v.Str != "":
		if IsBase64Blob(v.Str) {
			return 2
		}
		return 1
	case v.Type == gjson.Number:
		return 2
	case v.IsObject():
		if _, ok := BlobRef(v); ok {
			return 2
		}
		fallthrough
	case v.IsArray():
		if hasEntries(v) {
			return 4
		}
		return 5
	case v.Type == gjson.True || v.Type == gjson.False:
		return 3
	default:
		return 5
	}
}

func (r *renderer) array(b []byte, v gjson.Result, depth int) []byte {
	b = append(b, '[')
	kept, left := 0, 0
	v.ForEach(func(_, f gjson.Result) bool {
		if r.lim.entries > 0 && kept >= r.lim.entries {
			left++
			return true
		}
		if kept > 0 {
			b = append(b, ',')
		}
		b = r.value(b, f, depth+1, nil)
		kept++
		return true
	})
	if left > 0 {
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
			if c, ok := Cut(s, blobStringCap); ok {
				r.n.cutValues++
				return c + "[" + strconv.Itoa(Len(s)) + " chars]"
			}
		}
		return s
	}
	b = append(b, `{"binary":"blob_ref","blob_id":`...)
	b = appendString(b, capped(m.BlobID))
	if m.MIMEType != "" {
		b = append(b, `,"mime_type":`...)
		b = appendString(b, capped(m.MIMEType))
	}
	if m.HasSize {
		b = append(b, `,"size_bytes":`...)
		b = strconv.AppendInt(b, m.SizeBytes, 10)
	}
	if m.FetchURL != "" {
		b = append(b, `,"fetch_url":`...)
		b = appendString(b, capped(m.FetchURL))
	}
	return append(b, '}')
}

// appendString appends s as a JSON string. Unlike encoding/json it leaves <, >
// and & alone (the text is read by models, not embedded in HTML); control
// characters are escaped and invalid UTF-8 becomes U+FFFD.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
