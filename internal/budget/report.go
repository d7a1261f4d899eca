package budget

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/table"
	"github.com/charmbracelet/x/ansi"

	"github.com/pdpp-mcp/pdpp-mcp/internal/termstyle"
)

// Report is everything one run measured and decided.
type Report struct {
	// Target says what was measured: pdpp-mcp in this process, a --server
	// command or a --url.
	Target    string      `json:"target,omitempty"`
	Tokenizer string      `json:"tokenizer"`
	ToolsList *Footprint  `json:"tools_list"`
	Scenario  string      `json:"scenario,omitempty"`
	Results   []Call      `json:"results"`
	Baseline  *Comparison `json:"baseline,omitempty"`
	Checks    []Check     `json:"checks"`
	Pass      bool        `json:"pass"`
}

// NewReport assembles a report; Pass is true when every check passed.
func NewReport(tok Tokenizer, fp *Footprint, scenario string, calls []Call, checks []Check) *Report {
	r := &Report{Tokenizer: tok.Name(), ToolsList: fp, Scenario: scenario, Results: calls, Checks: checks, Pass: true}
	if r.Results == nil {
		r.Results = []Call{}
	}
	for _, c := range checks {
		r.Pass = r.Pass && c.Pass
	}
	return r
}

// Compare adds the comparison with a baseline and its check.
func (r *Report) Compare(base *Baseline, file string, maxGrowth float64) {
	r.Baseline = Compare(base, file, r, maxGrowth)
	c := r.Baseline.Check()
	r.Checks = append(r.Checks, c)
	r.Pass = r.Pass && c.Pass
}

// Failed returns the checks that failed, in report order.
func (r *Report) Failed() []Check {
	var out []Check
	for _, c := range r.Checks {
		if !c.Pass {
			out = append(out, c)
		}
	}
	return out
}

// WriteJSON writes the report as one indented JSON document.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// WriteMarkdown writes the report for a pull-request comment or a job
// summary: the tools/list table (the one docs/budget.md shows), the
// results, the comparison with a baseline, then the verdict and every
// failure. Text from the server is escaped so it cannot break a table.
func WriteMarkdown(w io.Writer, r *Report) error {
	var b strings.Builder
	fp := r.ToolsList
	b.WriteString("| tool | bytes | tokens | description | input schema | output schema | rest |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, t := range fp.Tools {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", mdCell(t.Name), thousands(t.Bytes), thousands(t.Tokens),
			thousands(t.DescriptionBytes), thousands(t.InputSchemaBytes), thousands(t.OutputSchemaBytes), thousands(t.RestBytes))
	}
	fmt.Fprintf(&b, "| **tools array** (%d) | **%s** | **%s** | | | | |\n", len(fp.Tools), thousands(fp.Bytes), thousands(fp.Tokens))
	if fp.AnchorBytes > 0 {
		fmt.Fprintf(&b, "| TypeScript adapter | %s | | | | | |\n", thousands(fp.AnchorBytes))
	}
	in := fp.Instructions
	fmt.Fprintf(&b, "| instructions | %s | %s | | | | |\n", thousands(in.Bytes), thousands(in.Tokens))
	for _, l := range lists(fp) {
		fmt.Fprintf(&b, "| %s (%d) | %s | %s | | | | |\n", l.what, l.size.Count, thousands(l.size.Bytes), thousands(l.size.Tokens))
	}

	if len(r.Results) > 0 {
		fmt.Fprintf(&b, "\nResults of scenario %s:\n\n", mdCode(r.Scenario))
		b.WriteString("| # | call | text bytes | text tokens | structured bytes | structured tokens |\n")
		b.WriteString("| ---: | --- | ---: | ---: | ---: | ---: |\n")
		for _, c := range r.Results {
			label, _ := callLabel(c, 56)
			if c.Error != "" {
				fmt.Fprintf(&b, "| %d | %s | no result | | | |\n", c.Seq, mdCode(label))
				continue
			}
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s |\n", c.Seq, mdCode(label), thousands(c.Text.Bytes), thousands(c.Text.Tokens),
				thousands(c.Structured.Bytes), thousands(c.Structured.Tokens))
		}
	}

	if cmp := r.Baseline; cmp != nil {
		changed := cmp.Changed()
		fmt.Fprintf(&b, "\nCompared with the baseline %s: %d of %d items changed.\n", mdCode(cmp.File), len(changed), len(cmp.Deltas))
		if len(changed) > 0 {
			b.WriteString("\n| item | change | before | after | delta | tokens |\n")
			b.WriteString("| --- | --- | ---: | ---: | ---: | ---: |\n")
			for _, d := range changed {
				change := string(d.Change)
				if d.Over {
					change = "**" + change + "**"
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", mdCell(d.Label()), change,
					thousands(d.Before), thousands(d.After), signed(d), thousands(d.AfterTokens-d.BeforeTokens))
			}
		}
	}

	failed := r.Failed()
	if len(failed) == 0 {
		fmt.Fprintf(&b, "\nAll %d checks passed.\n", len(r.Checks))
	} else {
		fmt.Fprintf(&b, "\n**%d of %d checks failed:**\n\n", len(failed), len(r.Checks))
		for _, ch := range failed {
			name := ch.Name
			if ch.Subject != "" {
				name += " (" + ch.Subject + ")"
			}
			fmt.Fprintf(&b, "- %s: %s\n", mdCode(name), mdText(ch.Message))
			if ch.Kind == Findings {
				for _, f := range ch.Findings {
					fmt.Fprintf(&b, "  - %s\n", mdText(f))
				}
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// signed is a delta in bytes with its sign and, for a grown or shrunk
// item, the percentage.
func signed(d Delta) string {
	s := thousands(d.After - d.Before)
	if d.After > d.Before {
		s = "+" + s
	}
	if d.Change == Grown || d.Change == Shrunk {
		s += fmt.Sprintf(" (%+.1f%%)", d.Percent())
	}
	return s
}

type namedList struct {
	what string
	size *ListSize
}

// lists are the resource templates and prompts, where offered.
func lists(fp *Footprint) []namedList {
	var out []namedList
	if fp.ResourceTemplates != nil {
		out = append(out, namedList{"resource templates", fp.ResourceTemplates})
	}
	if fp.Prompts != nil {
		out = append(out, namedList{"prompts", fp.Prompts})
	}
	return out
}

// mdText makes text from a server safe in Markdown prose and table cells:
// one line, no HTML, no table pipes, no emphasis or links.
func mdText(s string) string {
	// An underscore inside a word emphasises nothing in GitHub's Markdown,
	// so tool names keep theirs unescaped.
	return strings.NewReplacer("\\", "\\\\", "|", "\\|", "<", "&lt;", ">", "&gt;", "*", "\\*", " _", " \\_", "`", "\\`",
		"[", "\\[", "]", "\\]").Replace(clean(s))
}

func mdCell(s string) string { return mdText(s) }

// mdCode shows text as inline code, with a fence longer than any run of
// backticks inside; pipes are escaped for tables.
func mdCode(s string) string {
	s = clean(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return fence + pad + strings.ReplaceAll(s, "|", "\\|") + pad + fence
}

// Color is the --color setting, shared with the probe.
type Color = termstyle.Color

// Color settings.
const (
	ColorAuto   = termstyle.ColorAuto // colour for terminals, honouring NO_COLOR
	ColorAlways = termstyle.ColorAlways
	ColorNever  = termstyle.ColorNever
)

// TextOptions configures WriteText.
type TextOptions struct {
	Color Color
	// Width, when positive, fits the tables and the lines below them into
	// that many columns, wrapping cells and long messages; 0 never wraps
	// (pipes and files keep their layout).
	Width int
}

type styles struct {
	r                  *lipgloss.Renderer
	bold, ok, bad, dim lipgloss.Style
}

func newStyles(w io.Writer, c Color) styles {
	r := termstyle.Renderer(w, c) // plain for pipes, files and NO_COLOR
	return styles{
		r:    r,
		bold: r.NewStyle().Bold(true),
		ok:   r.NewStyle().Foreground(lipgloss.Color("2")),
		bad:  r.NewStyle().Foreground(lipgloss.Color("9")).Bold(true),
		dim:  r.NewStyle().Faint(true),
	}
}

// newTable is a bordered table whose numeric columns (by index) are right
// aligned.
func (s styles) newTable(headers []string, numeric ...int) *table.Table {
	cell := s.r.NewStyle().Padding(0, 1)
	return table.New().
		Border(lipgloss.NormalBorder()).
		BorderStyle(s.dim).
		Headers(headers...).
		StyleFunc(func(row, col int) lipgloss.Style {
			st := cell
			if row == table.HeaderRow {
				st = st.Bold(true)
			}
			for _, n := range numeric {
				if col == n {
					st = st.Align(lipgloss.Right)
				}
			}
			return st
		})
}

// WriteText writes the report as tables for people: the tools/list
// footprint, the scenario's result sizes, then every check; failed checks
// are explained below the tables in full.
func WriteText(w io.Writer, r *Report, o TextOptions) error {
	s := newStyles(w, o.Color)
	width := 0
	if o.Width > 0 {
		width = max(o.Width, termstyle.MinWidth)
	}
	var b strings.Builder
	// line writes text wrapped to the width, later pieces indented.
	line := func(text string) {
		for _, piece := range hanging(text, width, "    ") {
			b.WriteString(piece + "\n")
		}
	}
	fp := r.ToolsList

	if r.Target != "" {
		line(fmt.Sprintf("%s %s", s.bold.Render("target"), clean(r.Target)))
	}
	// pdpp-mcp's six tools are compared with the adapter it replaces;
	// another server's tools are counted.
	tail := fmt.Sprintf(", %d %s", len(fp.Tools), unit("tools", len(fp.Tools)))
	if fp.AnchorBytes > 0 {
		tail = fmt.Sprintf(" (TypeScript adapter: %s bytes)", thousands(fp.AnchorBytes))
	}
	line(fmt.Sprintf("%s %s bytes, %s tokens%s", s.bold.Render("tools/list"), thousands(fp.Bytes), thousands(fp.Tokens), tail))
	g := grid{headers: []string{"tool", "bytes", "tokens", "description", "input schema", "output schema", "rest"}, numeric: []int{1, 2, 3, 4, 5, 6}}
	for _, tf := range fp.Tools {
		g.row(clean(tf.Name), thousands(tf.Bytes), thousands(tf.Tokens),
			thousands(tf.DescriptionBytes), thousands(tf.InputSchemaBytes), thousands(tf.OutputSchemaBytes), thousands(tf.RestBytes))
	}
	g.row("all tools", thousands(fp.Bytes), thousands(fp.Tokens), "", "", "", "")
	b.WriteString(s.render(g, width))
	in := fp.Instructions
	line(fmt.Sprintf("%s %s bytes, %s characters, %s tokens",
		s.bold.Render("instructions"), thousands(in.Bytes), thousands(in.Chars), thousands(in.Tokens)))
	for _, l := range lists(fp) {
		line(fmt.Sprintf("%s %d, %s %s, %s %s", s.bold.Render(l.what), l.size.Count,
			thousands(l.size.Bytes), unit("bytes", l.size.Bytes), thousands(l.size.Tokens), unit("tokens", l.size.Tokens)))
	}
	b.WriteString("\n")

	if len(r.Results) > 0 {
		line(fmt.Sprintf("%s of scenario %s", s.bold.Render("results"), clean(r.Scenario)))
		g := grid{headers: []string{"#", "call", "text bytes", "text chars", "text tokens", "structured bytes", "structured tokens"}, numeric: []int{0, 2, 3, 4, 5, 6}}
		shortened := false
		for _, call := range r.Results {
			label, cut := callLabel(call, 56)
			shortened = shortened || cut
			if call.Error != "" {
				g.row(fmt.Sprint(call.Seq), label, "no result", "", "", "", "")
				continue
			}
			g.row(fmt.Sprint(call.Seq), label,
				thousands(call.Text.Bytes), thousands(call.Text.Chars), thousands(call.Text.Tokens),
				thousands(call.Structured.Bytes), thousands(call.Structured.Tokens))
		}
		b.WriteString(s.render(g, width))
		if shortened {
			line(s.dim.Render("(long arguments end in …; --json shows them in full)"))
		}
		b.WriteString("\n")
	}

	if cmp := r.Baseline; cmp != nil {
		changed := cmp.Changed()
		line(fmt.Sprintf("%s %s: %d of %d items changed", s.bold.Render("compared with baseline"), clean(cmp.File), len(changed), len(cmp.Deltas)))
		if len(changed) > 0 {
			g := grid{headers: []string{"item", "change", "before", "after", "delta", "tokens"}, numeric: []int{2, 3, 4, 5}}
			for _, d := range changed {
				change := string(d.Change)
				if d.Over {
					change = s.bad.Render(change)
				}
				g.row(clean(d.Label()), change, thousands(d.Before), thousands(d.After), signed(d), thousands(d.AfterTokens-d.BeforeTokens))
			}
			b.WriteString(s.render(g, width))
		}
		b.WriteString("\n")
	}

	g = grid{headers: []string{"check", "of", "measured", "budget", "headroom", "status"}, numeric: []int{2, 3, 4}}
	for _, ch := range r.Checks {
		budget, headroom := "", ""
		switch ch.Kind {
		case AtMost:
			budget = thousands(ch.Limit)
			h, _ := ch.Headroom()
			headroom = fmt.Sprintf("%s (%d%%)", thousands(h), percent(h, ch.Limit))
		case Exact:
			budget = fmt.Sprintf("exactly %d", ch.Limit)
		case Findings:
			budget = thousands(ch.Limit)
		}
		status := s.ok.Render("ok")
		if !ch.Pass {
			status = s.bad.Render("FAIL")
		}
		g.row(clean(ch.Name), clean(ch.Subject), thousands(ch.Measured)+" "+unit(ch.Unit, ch.Measured), budget, headroom, status)
	}
	b.WriteString(s.render(g, width))

	failed := r.Failed()
	for _, ch := range failed {
		// Wrapped plain, then "FAIL" styled, so escape codes never split.
		for i, piece := range hanging(fmt.Sprintf("FAIL %s: %s", clean(ch.Name), clean(ch.Message)), width, "    ") {
			if i == 0 {
				piece = s.bad.Render("FAIL") + strings.TrimPrefix(piece, "FAIL")
			}
			b.WriteString(piece + "\n")
		}
		if ch.Kind == Findings {
			for _, f := range ch.Findings {
				for _, piece := range hanging("    - "+clean(f), width, "      ") {
					b.WriteString(piece + "\n")
				}
			}
		}
	}
	verdict := s.ok.Render(fmt.Sprintf("all %d checks passed", len(r.Checks)))
	if len(failed) > 0 {
		verdict = s.bad.Render(fmt.Sprintf("%d of %d checks failed", len(failed), len(r.Checks)))
	}
	line(fmt.Sprintf("%s; tokens: %s", verdict, clean(r.Tokenizer)))
	_, err := io.WriteString(w, b.String())
	return err
}

// grid is a table's content, kept so it can be laid out as a table or,
// when the table is wider than the terminal, as one wrapped line a row.
type grid struct {
	headers []string
	numeric []int // right-aligned columns
	rows    [][]string
}

func (g *grid) row(cells ...string) { g.rows = append(g.rows, cells) }

// render lays g out as a bordered table that fits width (0: any width), or
// else as a list: per row its first cell, then "header value" for each
// non-empty cell, wrapped with a hanging indent between pairs.
func (s styles) render(g grid, width int) string {
	t := s.newTable(g.headers, g.numeric...)
	for _, r := range g.rows {
		t.Row(r...)
	}
	out := t.Render() + "\n"
	if width <= 0 || widest(out) <= width {
		return out
	}
	var b strings.Builder
	for _, r := range g.rows {
		parts := []string{s.bold.Render(r[0])}
		for i, cell := range r[1:] {
			if cell != "" {
				// No-break spaces keep a header with its value on one line.
				nb := func(x string) string { return strings.ReplaceAll(x, " ", "\u00a0") }
				parts = append(parts, s.dim.Render(nb(g.headers[i+1]))+"\u00a0"+nb(cell))
			}
		}
		for _, piece := range hanging(strings.Join(parts, "  "), width, "    ") {
			b.WriteString(piece + "\n")
		}
	}
	return b.String()
}

// widest is the display width of the longest line of s.
func widest(s string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		n = max(n, termstyle.Width(l))
	}
	return n
}

// hanging wraps text to width (0: not at all), every piece after the first
// indented.
func hanging(text string, width int, indent string) []string {
	if width <= 0 {
		return []string{text}
	}
	pieces := termstyle.Wrap(text, width-len(indent))
	for i := 1; i < len(pieces); i++ {
		pieces[i] = indent + pieces[i]
	}
	return pieces
}

// GitHubOptions says where the limits came from, for annotations that
// point at them.
type GitHubOptions struct {
	// File is the budget file as the workflow sees it (budget.json), named
	// in every error annotation.
	File string
	// Lines maps a limit key to its line in File (LimitLines); an
	// annotation for a check named by a key carries the line.
	Lines map[string]int
}

// WriteGitHub writes the text report followed by GitHub Actions workflow
// commands: an error annotation per failed check, on the budget file and
// the line of its limit where it has one, and a notice with the totals.
func WriteGitHub(w io.Writer, r *Report, o GitHubOptions) error {
	if err := WriteText(w, r, TextOptions{Color: ColorNever}); err != nil {
		return err
	}
	var b strings.Builder
	for _, ch := range r.Failed() {
		msg := clean(ch.Message)
		if ch.Kind == Findings {
			for _, f := range ch.Findings {
				msg += "\n- " + clean(f)
			}
		}
		var props []string
		if o.File != "" {
			props = append(props, "file="+ghProperty(o.File))
			if n := o.Lines[ch.LimitKey()]; n > 0 {
				props = append(props, fmt.Sprintf("line=%d", n))
			}
		}
		title := "budget: " + clean(ch.Name)
		if ch.Subject != "" {
			title += " (" + clean(ch.Subject) + ")"
		}
		props = append(props, "title="+ghProperty(title))
		fmt.Fprintf(&b, "::error %s::%s\n", strings.Join(props, ","), ghData(msg))
	}
	status := "within budget"
	if !r.Pass {
		status = fmt.Sprintf("%d check(s) failed", len(r.Failed()))
	}
	anchor := ""
	if r.ToolsList.AnchorBytes > 0 {
		anchor = fmt.Sprintf(" (TypeScript adapter %s)", thousands(r.ToolsList.AnchorBytes))
	}
	fmt.Fprintf(&b, "::notice title=%s::%s\n", ghProperty("pdpp-mcp-budget"),
		ghData(fmt.Sprintf("tools/list %s bytes%s, instructions %s bytes; %s",
			thousands(r.ToolsList.Bytes), anchor, thousands(r.ToolsList.Instructions.Bytes), status)))
	_, err := io.WriteString(w, b.String())
	return err
}

// ghData escapes an annotation message; ghProperty escapes a property
// value, which also may not hold : or ,.
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func ghProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// callLabel is the call and its arguments, cut at max characters with a
// trailing … (reported in the table footer).
func callLabel(c Call, max int) (string, bool) {
	label := c.Label()
	switch {
	case c.Method == "tools/call" && len(c.Arguments) > 0:
		label += " " + string(c.Arguments)
	case c.Method == "resources/read":
		label += " " + c.URI
	}
	if c.ExpectError {
		label = "!" + label
	}
	label = clean(label)
	if r := []rune(label); len(r) > max {
		return string(r[:max-1]) + "…", true
	}
	return label, false
}

// unit is singular for one: "1 finding", "1 byte".
func unit(u string, n int) string {
	if n == 1 {
		return strings.TrimSuffix(u, "s")
	}
	return u
}

func percent(part, whole int) int {
	if whole == 0 {
		return 0
	}
	return part * 100 / whole
}

// clean makes text from a server (tool names, error text, descriptions
// quoted in findings) safe to print on a terminal and on one line: escape
// sequences are removed and other control characters become spaces.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, ansi.Strip(s))
}
