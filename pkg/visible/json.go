package visible

import (
	"encoding/json"
)

// JSONText returns the JSON text src with every string (member names
// included) that holds a hidden character, raw or as an escape, rewritten as
// AppendJSON writes its rendering. Everything else is copied byte for byte,
// and src itself is returned when nothing changes. src must be valid JSON;
// for anything else the result is unspecified but never longer than a
// rendering of every byte.
func JSONText(src []byte) []byte {
	var out []byte // nil until the first change
	last := 0
	for i := 0; i < len(src); i++ {
		if src[i] != '"' {
			continue
		}
		end, suspect := stringEnd(src, i+1)
		if suspect {
			var s string
			if json.Unmarshal(src[i:end], &s) == nil && next(s, 0) >= 0 {
				if out == nil {
					out = make([]byte, 0, len(src)+64)
				}
				out = append(out, src[last:i]...)
				out = AppendJSON(out, s)
				last = end
			}
		}
		i = end - 1
	}
	if out == nil {
		return src
	}
	return append(out, src[last:]...)
}

// stringEnd returns the offset just past the string literal whose contents
// start at i, and whether the literal may hold something the rule changes:
// an escape or a byte the scan looks closer at.
func stringEnd(b []byte, i int) (int, bool) {
	suspect := false
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, suspect
		case c == '\\':
			suspect = true
			i++
		case lead[c]:
			suspect = true
		}
	}
	return len(b), suspect
}
