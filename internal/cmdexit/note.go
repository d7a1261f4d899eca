package cmdexit

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// noteIndent starts every line of a note after its first.
const noteIndent = "  "

// Notef prints a message for a person on w, "<cmd>: <text>", wrapped at
// spaces so every line fits HelpWidth, the lines after the first indented
// two spaces. A word longer than a line (a long URL or path) stays whole on
// a line of its own. The start-up lines of the commands go through it: they
// are the first thing a person reads, in a terminal of the default width.
func Notef(w io.Writer, cmd, format string, args ...any) {
	fmt.Fprint(w, Note(cmd, fmt.Sprintf(format, args...)))
}

// Note is the text Notef prints, newline included.
func Note(cmd, text string) string {
	var b strings.Builder
	width, n := HelpWidth, 0 // n: runes on the current line
	for _, word := range strings.Fields(cmd + ": " + text) {
		wn := utf8.RuneCountInString(word)
		switch {
		case n == 0:
		case n+1+wn <= width:
			b.WriteByte(' ')
			n++
		default:
			b.WriteString("\n" + noteIndent)
			n = len(noteIndent)
		}
		b.WriteString(word)
		n += wn
	}
	b.WriteByte('\n')
	return b.String()
}
