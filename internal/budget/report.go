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
	Tokenizer string     `json:"tokenizer"`
	ToolsList *Footprint `json:"tools_list"`
	Scenario  string     `json:"scenario,omitempty"`
	Results   []Call     `json:"results"`
	Checks    []Check    `json:"checks"`
	Pass      bool       `json:"pass"`
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

// WriteMarkdown writes the tools/list footprint as the Markdown table
// docs/budget.md shows, so the numbers there come from the command.
func WriteMarkdown(w io.Writer, r *Report) error {
	var b strings.Builder
	fp := r.ToolsList
	b.WriteString("| tool | bytes | tokens | description | input schema | output schema |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, t := range fp.Tools {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", clean(t.Name), thousands(t.Bytes), thousands(t.Tokens),
			thousands(t.DescriptionBytes), thousands(t.InputSchemaBytes), thousands(t.OutputSchemaBytes))
	}
	fmt.Fprintf(&b, "| **tools array** | **%s** | **%s** | | | |\n", thousands(fp.Bytes), thousands(fp.Tokens))
	fmt.Fprintf(&b, "| TypeScript adapter | %s | | | | |\n", thousands(fp.AnchorBytes))
	in := fp.Instructions
	fmt.Fprintf(&b, "| instructions | %s | %s | | | |\n", thousands(in.Bytes), thousands(in.Tokens))
	_, err := io.WriteString(w, b.String())
	return err
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

	line(fmt.Sprintf("%s %s bytes, %s tokens (TypeScript adapter: %s bytes)",
		s.bold.Render("tools/list"), thousands(fp.Bytes), thousands(fp.Tokens), thousands(fp.AnchorBytes)))
	g := grid{headers: []string{"tool", "bytes", "tokens", "description", "input schema", "output schema"}, numeric: []int{1, 2, 3, 4, 5}}
	for _, tf := range fp.Tools {
		g.row(clean(tf.Name), thousands(tf.Bytes), thousands(tf.Tokens),
			thousands(tf.DescriptionBytes), thousands(tf.InputSchemaBytes), thousands(tf.OutputSchemaBytes))
	}
	g.row("all tools", thousands(fp.Bytes), thousands(fp.Tokens), "", "", "")
	b.WriteString(s.render(g, width))
	in := fp.Instructions
	line(fmt.Sprintf("%s %s bytes, %s characters, %s tokens",
		s.bold.Render("instructions"), thousands(in.Bytes), thousands(in.Chars), thousands(in.Tokens)))
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
			budget = "0"
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
			if n := o.Lines[ch.Name]; n > 0 {
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
	fmt.Fprintf(&b, "::notice title=%s::%s\n", ghProperty("pdpp-mcp-budget"),
		ghData(fmt.Sprintf("tools/list %s bytes (TypeScript adapter %s), instructions %s bytes; %s",
			thousands(r.ToolsList.Bytes), thousands(r.ToolsList.AnchorBytes), thousands(r.ToolsList.Instructions.Bytes), status)))
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
