// Package termstyle is what the probe and budget commands share for
// printing to people: the --color setting, a renderer that honours it, the
// --width setting and line wrapping that keeps escape sequences intact.
//
// Output that is not a terminal stays as it was: no colour and no wrapping
// unless asked for, so piped output and golden files never depend on the
// terminal that happened to run them.
package termstyle

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/term"
	"github.com/muesli/termenv"
)

// Color is the --color setting.
type Color string

// Color settings.
const (
	ColorAuto   Color = "auto"   // colour when the writer is a terminal and NO_COLOR is unset
	ColorAlways Color = "always" // colour even into a pipe, NO_COLOR notwithstanding
	ColorNever  Color = "never"
)

// ParseColor reads a --color value.
func ParseColor(s string) (Color, error) {
	switch c := Color(strings.ToLower(strings.TrimSpace(s))); c {
	case ColorAuto, ColorAlways, ColorNever:
		return c, nil
	}
	return "", fmt.Errorf("--color must be auto, always or never, got %q", s)
}

// Renderer returns a lipgloss renderer for w with c applied: auto takes the
// colour profile from w (terminal, NO_COLOR, CLICOLOR).
func Renderer(w io.Writer, c Color) *lipgloss.Renderer {
	r := lipgloss.NewRenderer(w)
	switch c {
	case ColorNever:
		r.SetColorProfile(termenv.Ascii)
	case ColorAlways:
		r.SetColorProfile(termenv.ANSI256)
	}
	return r
}

// WidthAuto is the --width default: the terminal's width when the output is
// a terminal, otherwise no wrapping.
const WidthAuto = -1

// MinWidth is the narrowest width wrapping honours; a narrower terminal
// still gets 40 columns, which keeps a panel's gutter and a word together.
const MinWidth = 40

// ResolveWidth turns a --width value into the column count to wrap at, 0
// meaning never wrap. A positive n is taken as given (at least MinWidth); 0
// never wraps; WidthAuto asks w's terminal, and a writer that is not one
// (a pipe, a file, a buffer) is not wrapped.
func ResolveWidth(w io.Writer, n int) int {
	switch {
	case n > 0:
		return max(n, MinWidth)
	case n == 0:
		return 0
	}
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		return 0
	}
	cols, _, err := term.GetSize(f.Fd())
	if err != nil || cols <= 0 {
		return 0
	}
	return max(cols, MinWidth)
}

// Wrap splits one line into pieces of at most width display columns,
// breaking at spaces where it can and inside a word (a long id, a URL) where
// it must. Escape sequences are kept and not counted. A width of 0 or less,
// or a line that fits, comes back whole.
func Wrap(line string, width int) []string {
	if width <= 0 || ansi.StringWidth(line) <= width {
		return []string{line}
	}
	return strings.Split(ansi.Wrap(line, width, ""), "\n")
}

// Width is the display width of s in terminal columns, escape sequences
// left out.
func Width(s string) int { return ansi.StringWidth(s) }
