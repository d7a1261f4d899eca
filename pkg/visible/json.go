package visible

import (
	"encoding/json"
	"unsafe"

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
	// src is only read, and nothing taken from this view outlives the call.
	text := unsafe.String(unsafe.SliceData(src), len(src))
	if scan(text, 0, open) < 0 && !escapesHidden(text) {
		return src
	}
	var out []byte // nil until the first change
	last := 0
	for i := 0; i < len(text); i++ {
		if text[i] != '"' {
			continue
		}
		end := stringEnd(text, i+1)
		if lit := text[i:end]; scan(lit, 0, open) >= 0 || escapesHidden(lit) {
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
// start at i.
func stringEnd(s string, i int) int {
	for ; i < len(s); i++ {
		switch s[i] {
		case '"':
			return i + 1
		case '\\':
			i++
		}
	}
	return len(s)
}

// escapesHidden reports whether JSON text s holds an escape that may spell
// a character the rule changes: any \u escape, or \b, \f or \r (a carriage
// return the rule marks unless a line feed follows). The escapes of quotes,
// backslashes, slashes, tabs and line feeds spell nothing hidden.
func escapesHidden(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		switch s[i+1] {
		case 'u', 'b', 'f', 'r':
			return true
		}
		i++
	}
	return false
}
