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
	"github.com/muesli/termenv"
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

// Color is the --color setting.
type Color string

const (
	ColorAuto   Color = "auto" // colour for terminals, honouring NO_COLOR
	ColorAlways Color = "always"
	ColorNever  Color = "never"
)

type styles struct {
	r                  *lipgloss.Renderer
	bold, ok, bad, dim lipgloss.Style
}

func newStyles(w io.Writer, c Color) styles {
	r := lipgloss.NewRenderer(w) // plain for pipes, files and NO_COLOR
	switch c {
	case ColorNever:
		r.SetColorProfile(termenv.Ascii)
	case ColorAlways:
		r.SetColorProfile(termenv.ANSI256)
	}
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
func WriteText(w io.Writer, r *Report, c Color) error {
	s := newStyles(w, c)
	var b strings.Builder
	fp := r.ToolsList

	fmt.Fprintf(&b, "%s %s bytes, %s tokens (TypeScript adapter: %s bytes)\n",
		s.bold.Render("tools/list"), thousands(fp.Bytes), thousands(fp.Tokens), thousands(fp.AnchorBytes))
	t := s.newTable([]string{"tool", "bytes", "tokens", "description", "input schema", "output schema"}, 1, 2, 3, 4, 5)
	for _, tf := range fp.Tools {
		t.Row(clean(tf.Name), thousands(tf.Bytes), thousands(tf.Tokens),
			thousands(tf.DescriptionBytes), thousands(tf.InputSchemaBytes), thousands(tf.OutputSchemaBytes))
	}
	t.Row("all tools", thousands(fp.Bytes), thousands(fp.Tokens), "", "", "")
	b.WriteString(t.Render() + "\n")
	in := fp.Instructions
	fmt.Fprintf(&b, "%s %s bytes, %s characters, %s tokens\n\n",
		s.bold.Render("instructions"), thousands(in.Bytes), thousands(in.Chars), thousands(in.Tokens))

	if len(r.Results) > 0 {
		fmt.Fprintf(&b, "%s of scenario %s\n", s.bold.Render("results"), clean(r.Scenario))
		t := s.newTable([]string{"#", "call", "text bytes", "text chars", "text tokens", "structured bytes", "structured tokens"}, 0, 2, 3, 4, 5, 6)
		shortened := false
		for _, call := range r.Results {
			label, cut := callLabel(call, 56)
			shortened = shortened || cut
			if call.Error != "" {
				t.Row(fmt.Sprint(call.Seq), label, "no result", "", "", "", "")
				continue
			}
			t.Row(fmt.Sprint(call.Seq), label,
				thousands(call.Text.Bytes), thousands(call.Text.Chars), thousands(call.Text.Tokens),
				thousands(call.Structured.Bytes), thousands(call.Structured.Tokens))
		}
		b.WriteString(t.Render() + "\n")
		if shortened {
			b.WriteString(s.dim.Render("(long arguments end in …; --json shows them in full)") + "\n")
		}
		b.WriteString("\n")
	}

	t = s.newTable([]string{"check", "measured", "budget", "headroom", "status"}, 1, 2, 3)
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
		t.Row(clean(ch.Name), thousands(ch.Measured)+" "+unit(ch.Unit, ch.Measured), budget, headroom, status)
	}
	b.WriteString(t.Render() + "\n")

	failed := r.Failed()
	for _, ch := range failed {
		fmt.Fprintf(&b, "%s %s: %s\n", s.bad.Render("FAIL"), clean(ch.Name), clean(ch.Message))
		if ch.Kind == Findings {
			for _, f := range ch.Findings {
				fmt.Fprintf(&b, "    - %s\n", clean(f))
			}
		}
	}
	verdict := s.ok.Render(fmt.Sprintf("all %d checks passed", len(r.Checks)))
	if len(failed) > 0 {
		verdict = s.bad.Render(fmt.Sprintf("%d of %d checks failed", len(failed), len(r.Checks)))
	}
	fmt.Fprintf(&b, "%s; tokens: %s\n", verdict, clean(r.Tokenizer))
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteGitHub writes the text report followed by GitHub Actions workflow
// commands: an error annotation per failed check and a notice with the
// totals.
func WriteGitHub(w io.Writer, r *Report) error {
	if err := WriteText(w, r, ColorNever); err != nil {
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
		fmt.Fprintf(&b, "::error title=%s::%s\n", ghProperty("budget: "+clean(ch.Name)), ghData(msg))
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
