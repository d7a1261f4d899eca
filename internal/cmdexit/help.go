package cmdexit

import (
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/urfave/cli/v2"
)

// HelpWidth is the widest line --help prints: a terminal's default width,
// and what a person pasting help into an issue or a mail keeps intact.
const HelpWidth = 80

// appHelpTemplate is urfave's application help with the flags laid out by
// flagBlock, which fits them to HelpWidth (urfave pads every flag to the
// widest one and never wraps the usage).
const appHelpTemplate = `NAME:
   {{template "helpNameTemplate" .}}

USAGE:
   {{if .UsageText}}{{wrap .UsageText 3}}{{else}}{{.HelpName}} [flags]{{end}}{{if .Version}}{{if not .HideVersion}}

VERSION:
   {{.Version}}{{end}}{{end}}{{if .Description}}

DESCRIPTION:
   {{template "descriptionTemplate" .}}{{end}}{{if .VisibleFlags}}

OPTIONS:
{{flagBlock .}}{{end}}
`

var helpOnce sync.Once

// fitHelp makes every app's help fit HelpWidth. urfave has one help printer
// per process, so it is installed once; the template is per app.
func fitHelp(app *cli.App) {
	helpOnce.Do(func() {
		cli.HelpPrinter = func(w io.Writer, templ string, data any) {
			cli.HelpPrinterCustom(w, templ, data, map[string]any{
				"wrapAt":    func() int { return HelpWidth },
				"flagBlock": flagBlock,
			})
		}
	})
	if app.CustomAppHelpTemplate == "" {
		app.CustomAppHelpTemplate = appHelpTemplate
	}
}

// Flag layout: names in a column, usage beside them, wrapped.
const (
	flagIndent = 3
	// maxNameColumn caps the name column; a longer name gets a line of
	// its own with its usage below.
	maxNameColumn = 30
)

// flagBlock lays out app's visible flags, by category when it has any,
// within HelpWidth. It writes no tabs: urfave passes help through a
// tabwriter, which would align columns past the width again.
func flagBlock(app *cli.App) string {
	type group struct {
		name  string
		flags []cli.Flag
	}
	var groups []group
	for _, c := range app.VisibleFlagCategories() {
		g := group{name: c.Name()}
		for _, f := range c.Flags() {
			g.flags = append(g.flags, f)
		}
		groups = append(groups, g)
	}
	if len(groups) == 0 {
		groups = []group{{flags: app.VisibleFlags()}}
	}
	type row struct{ name, usage string }
	var rows [][]row
	col := 0
	for _, g := range groups {
		var rs []row
		for _, f := range g.flags {
			name, usage, _ := strings.Cut(cli.FlagStringer(f), "\t")
			name = shortRepeat(name)
			rs = append(rs, row{name, usage})
			if n := utf8.RuneCountInString(name) + 2; n <= maxNameColumn {
				col = max(col, n)
			}
		}
		rows = append(rows, rs)
	}
	var b strings.Builder
	pad := strings.Repeat(" ", flagIndent+col)
	for i, g := range groups {
		if i > 0 {
			b.WriteString("\n")
		}
		if g.name != "" {
			b.WriteString(strings.Repeat(" ", flagIndent) + g.name + ":\n")
		}
		for _, r := range rows[i] {
			lines := wrapWords(r.usage, HelpWidth-flagIndent-col)
			b.WriteString(strings.Repeat(" ", flagIndent) + r.name)
			if n := utf8.RuneCountInString(r.name); n+2 <= col {
				b.WriteString(strings.Repeat(" ", col-n) + lines[0] + "\n")
				lines = lines[1:]
			} else {
				b.WriteString("\n")
			}
			for _, l := range lines {
				b.WriteString(pad + l + "\n")
			}
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// shortRepeat writes a repeatable flag's "--f X [ --f X ]" as "--f X ...".
func shortRepeat(name string) string {
	first, rest, ok := strings.Cut(name, " [ ")
	if ok && rest == first+" ]" {
		return first + " ..."
	}
	return name
}

// wrapWords splits s into lines of at most width runes, breaking at spaces;
// a word longer than width stands alone on its line. It returns at least one
// line.
func wrapWords(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	return append(lines, line)
}
