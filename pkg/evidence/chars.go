package evidence

import (
	"unicode/utf8"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// Ellipsis marks every cut.
const Ellipsis = "…"

// Len returns the length of s in code points, as the RS counts characters.
func Len(s string) int { return utf8.RuneCountInString(s) }

// Cut returns s when it has at most n code points. Otherwise it returns the
// first n-1 code points followed by "…" (n code points in all) and true. n < 1
// yields "" (and true when s is not empty).
func Cut(s string, n int) (string, bool) {
	if n < 1 {
		return "", s != ""
	}
	if len(s) <= n { // bytes ≥ code points, so this is the common fast path
		return s, false
	}
	count := 0
	cutAt := -1
	for i := range s {
		if count == n-1 {
			cutAt = i
		}
		if count == n {
			return s[:cutAt] + Ellipsis, true
		}
		count++
	}
	return s, false
}

// cutBytes returns the longest prefix of s that, followed by "…", fits in max
// bytes, never splitting a code point or a hidden-character mark (package
// visible). It assumes len(s) > max.
func cutBytes(s string, max int) string {
	room := max - len(Ellipsis)
	if room <= 0 {
		return ""
	}
	if room >= len(s) {
		return s
	}
	for room > 0 && !utf8.RuneStart(s[room]) {
		room--
	}
	return s[:visible.Boundary(s, room)] + Ellipsis
}
