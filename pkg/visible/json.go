package visible

import (
	"encoding/json"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
)

// JSONText returns the JSON text src with every string (member names
// included) that the rule changes, through a hidden character raw or as an
// escape or a literal "⟦", rewritten as AppendJSON writes its rendering.
// Everything else is copied byte for byte, and src itself is returned when
// nothing changes. src must be valid JSON; a string that does not decode is
// copied.
func JSONText(src []byte) []byte { return jsonText(src, true) }

// MarkHiddenJSON is JSONText for JSON assembled from strings already
// rendered: like MarkHidden it marks hidden characters and leaves "⟦" alone.
func MarkHiddenJSON(src []byte) []byte { return jsonText(src, false) }

func jsonText(src []byte, open bool) []byte {
	var out []byte // nil until the first change
	last := 0
	for i := 0; i < len(src); i++ {
		if src[i] != '"' {
			continue
		}
		end, suspect := stringEnd(src, i+1)
		if suspect {
			var s string
			if json.Unmarshal(src[i:end], &s) == nil {
				if c, changed := (Rule{}).changes(s, open); changed {
					if out == nil {
						out = make([]byte, 0, len(src)+64)
					}
					out = append(out, src[last:i]...)
					var buf [256]byte
					out = jsonw.AppendString(out, string(c.render(buf[:0])))
					last = end
				}
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
