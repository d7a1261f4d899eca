package probe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/pdpp-mcp/pdpp-mcp/internal/termstyle"
)

// Color is the --color setting, shared with the budget command.
type Color = termstyle.Color

// Color settings.
const (
	ColorAuto   = termstyle.ColorAuto
	ColorAlways = termstyle.ColorAlways
	ColorNever  = termstyle.ColorNever
)

// ParseColor reads a --color value.
func ParseColor(s string) (Color, error) { return termstyle.ParseColor(s) }

// PrinterOptions configures a Printer.
type PrinterOptions struct {
	Color Color
	// Structured adds structuredContent, indented, to each panel.
	Structured bool
	// Normalize prints volatile values as transcripts do and leaves latency
	// out, so the output of two runs can be diffed.
	Normalize bool
	// Redact lists strings never to print (a bearer token a hostile server
	// might echo); each is replaced by [redacted].
	Redact []string
	// Width, when positive, wraps every line of a panel to that many
	// columns: text behind the gutter continues behind a dashed gutter (┆),
	// so a wrapped line can be told from a line break of the text itself.
	// 0 never wraps (pipes and files: the output stays byte-for-byte).
	Width int
}

// Printer writes one panel per call: a header with the call and its
// arguments, the model-visible text verbatim behind a gutter, and a footer
// with sizes, latency and the outcome. Server text is sanitised (see
// Sanitize) and every line of it sits behind the gutter, so it can neither
// drive the terminal nor pass for the probe's own lines.
//
// Without colour (not a terminal, NO_COLOR, --color never) the output is
// plain text with no escape sequences; it wraps only when Width is set.
type Printer struct {
	w    io.Writer
	o    PrinterOptions
	n    *Normalizer
	rule lipgloss.Style
	name lipgloss.Style
	dim  lipgloss.Style
	ok   lipgloss.Style
	bad  lipgloss.Style
	vars lipgloss.Style
}

// ruleWidth is the width of the panel's rules; fixed unless Width is
// narrower, so unwrapped output does not change with the terminal.
const ruleWidth = 72

// NewPrinter returns a Printer writing to w.
func NewPrinter(w io.Writer, o PrinterOptions) *Printer {
	r := termstyle.Renderer(w, o.Color)
	if o.Width > 0 {
		o.Width = max(o.Width, termstyle.MinWidth)
	}
	p := &Printer{
		w:    w,
		o:    o,
		rule: r.NewStyle().Foreground(lipgloss.Color("8")),
		name: r.NewStyle().Bold(true),
		dim:  r.NewStyle().Faint(true),
		ok:   r.NewStyle().Foreground(lipgloss.Color("2")),
		bad:  r.NewStyle().Bold(true).Foreground(lipgloss.Color("1")),
		vars: r.NewStyle().Foreground(lipgloss.Color("6")),
	}
	if o.Normalize {
		p.n = NewNormalizer()
	}
	return p
}

// norm applies --normalize.
func (p *Printer) norm(s string) string {
	if p.n == nil {
		return s
	}
	return p.n.String(s)
}

// untrusted makes server text printable: normalised if asked, secrets
// redacted, control characters replaced.
func (p *Printer) untrusted(s string) (string, int) {
	return Sanitize(redact(p.norm(s), p.o.Redact))
}

func redact(s string, secrets []string) string {
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	return s
}

// lines writes text behind a prefix, wrapped to the width: the first piece
// behind first, the rest behind cont. style renders each piece (nil: as is).
func (p *Printer) lines(b *strings.Builder, first, cont string, text string, style func(string) string) {
	width := 0
	if p.o.Width > 0 {
		width = p.o.Width - termstyle.Width(first)
	}
	for i, piece := range termstyle.Wrap(text, width) {
		prefix := first
		if i > 0 {
			prefix = cont
		}
		if style != nil {
			piece = style(piece)
		}
		b.WriteString(strings.TrimRight(prefix+piece, " ") + "\n")
	}
}

// Print writes the panel of r: the call, what the server sent, and a footer
// with its size and status.
func (p *Printer) Print(r *Result) error {
	var b strings.Builder
	p.printCall(&b, r)
	if r.Err != nil {
		msg, _ := p.untrusted(oneLine(r.Err.Error()))
		p.lines(&b, p.rule.Render("╰─ ")+p.bad.Render("failed:")+" ", "   ", msg, nil)
		_, err := io.WriteString(p.w, b.String())
		return err
	}
	replaced := p.printContent(&b, r)
	p.printFooter(&b, r, replaced)
	_, err := io.WriteString(p.w, b.String())
	return err
}

// gutters are the prefixes of a panel's first and continued lines.
func (p *Printer) gutters() (gutter, cont string) {
	return p.rule.Render("│") + " ", p.rule.Render("┆") + " "
}

// printCall writes the panel's head: its number and name, the script's
// comments, the arguments or URI, and the variables the call used.
func (p *Printer) printCall(b *strings.Builder, r *Result) {
	gutter, cont := p.gutters()
	dim := func(s string) string { return p.dim.Render(s) }
	rw := ruleWidth
	if p.o.Width > 0 {
		rw = min(rw, p.o.Width)
	}
	title, _ := p.untrusted(r.Call.Name())
	head := fmt.Sprintf("╭─ %d %s ", r.N, title)
	b.WriteString(p.rule.Render("╭─ ") + p.dim.Render(fmt.Sprint(r.N)) + " " + p.name.Render(title) + " " +
		p.rule.Render(strings.Repeat("─", max(3, rw-runeLen(head)))) + "\n")
	for _, c := range r.Call.Comment {
		text, _ := Sanitize(c)
		p.lines(b, gutter, cont, "# "+text, dim)
	}
	switch {
	case r.Call.Kind == KindTool:
		args, _ := p.untrusted(string(r.Args))
		if r.Args == nil { // a variable was missing: show the call as written
			args, _ = p.untrusted(r.Call.Args)
		}
		p.lines(b, gutter+p.dim.Render("arguments "), cont, args, nil)
	case r.Call.Kind == KindReadResource:
		uri, _ := p.untrusted(r.URI)
		if uri == "" {
			uri, _ = p.untrusted(r.Call.URI)
		}
		p.lines(b, gutter+p.dim.Render("uri "), cont, uri, nil)
	}
	for _, u := range r.Uses {
		v, _ := p.untrusted(string(u.Value))
		p.lines(b, gutter+p.vars.Render(fmt.Sprintf("$%s", u.Name))+p.dim.Render(fmt.Sprintf(" from call %d (%s) = ", u.From, u.FromName)), cont, v, nil)
	}
}

// printContent writes each content block and, when asked, the structured
// content; it returns how many control characters it replaced.
func (p *Printer) printContent(b *strings.Builder, r *Result) int {
	gutter, cont := p.gutters()
	dim := func(s string) string { return p.dim.Render(s) }
	replaced := 0
	if len(r.Blocks) == 0 {
		b.WriteString(p.rule.Render("├─ ") + p.dim.Render("content[] is empty") + "\n")
	}
	for _, bl := range r.Blocks {
		label, _ := p.untrusted(bl.Label)
		if bl.Text == "" && bl.Note != "" {
			note, _ := p.untrusted(bl.Note)
			p.lines(b, p.rule.Render("├─ "), cont, label+": "+note, dim)
			continue
		}
		b.WriteString(p.rule.Render("├─ ") + p.dim.Render(label) + "\n")
		text, k := p.untrusted(bl.Text)
		replaced += k
		for _, line := range strings.Split(text, "\n") {
			p.lines(b, gutter, cont, line, nil)
		}
	}
	if p.o.Structured && len(r.Structured) > 0 {
		b.WriteString(p.rule.Render("├─ ") + p.dim.Render("structuredContent") + "\n")
		text, k := p.untrusted(prettyJSON(r.Structured))
		replaced += k
		for _, line := range strings.Split(text, "\n") {
			if p.o.Width > 0 {
				p.lines(b, gutter, cont, line, nil)
			} else {
				b.WriteString(gutter + line + "\n") // as before: indentation kept, trailing spaces too
			}
		}
	}
	return replaced
}

// printFooter writes the panel's last line: size, tokens, latency (live
// runs only), replaced characters and the status.
func (p *Printer) printFooter(b *strings.Builder, r *Result, replaced int) {
	tokens := fmt.Sprintf("~%d tokens (%s)", r.Size.Tokens, TokenRule)
	if p.n != nil {
		// As in transcripts: counted on the normalised text, which is stable.
		var shown strings.Builder
		for _, bl := range r.Blocks {
			shown.WriteString(p.n.String(bl.Text))
		}
		tokens = fmt.Sprintf("~%s tokens (%s, as shown)", tokenCount(shown.String()), TokenRule)
	}
	footer := []string{
		fmt.Sprintf("%d bytes", r.Size.Bytes),
		fmt.Sprintf("%d chars", r.Size.Chars),
		tokens,
	}
	if p.n == nil {
		footer = append(footer, formatLatency(r.Latency))
	}
	if replaced > 0 {
		footer = append(footer, fmt.Sprintf("%d control characters replaced by visible stand-ins", replaced))
	}
	status := "ok"
	style := p.ok
	switch {
	case r.IsError && r.Call.ExpectError:
		status = "isError (expected)"
	case r.IsError:
		status, style = "isError", p.bad
	case r.Call.ExpectError:
		status, style = "ok, but the script expected isError", p.bad
	}
	if p.o.Width <= 0 {
		b.WriteString(p.rule.Render("╰─ ") + p.dim.Render(strings.Join(footer, " · ")+" · ") + style.Render(status) + "\n")
		return
	}
	// Wrapped plain, then styled: the status keeps its colour on whichever
	// piece ends with it.
	plain := strings.Join(footer, " · ") + " · " + status
	pieces := termstyle.Wrap(plain, p.o.Width-3)
	for i, piece := range pieces {
		prefix := "   "
		if i == 0 {
			prefix = p.rule.Render("╰─ ")
		}
		if i == len(pieces)-1 && strings.HasSuffix(piece, status) {
			piece = p.dim.Render(strings.TrimSuffix(piece, status)) + style.Render(status)
		} else {
			piece = p.dim.Render(piece)
		}
		b.WriteString(prefix + piece + "\n")
	}
}

// Diff writes a golden mismatch: its reason and the unified diff.
func (p *Printer) Diff(m *Mismatch) error {
	var b strings.Builder
	reason, _ := Sanitize(m.Reason)
	b.WriteString(p.bad.Render(fmt.Sprintf("golden mismatch, call %d:", m.N)) + " " + reason + "\n")
	if m.Diff != "" {
		text, _ := Sanitize(redact(m.Diff, p.o.Redact))
		for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
			switch {
			case strings.HasPrefix(line, "+"):
				line = p.ok.Render(line)
			case strings.HasPrefix(line, "-"):
				line = p.bad.Render(line)
			}
			b.WriteString(line + "\n")
		}
	}
	_, err := io.WriteString(p.w, b.String())
	return err
}

func runeLen(s string) int { return len([]rune(s)) }

// formatLatency keeps two significant digits or whole milliseconds.
func formatLatency(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < 10*time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return d.Round(100 * time.Millisecond).String()
}

// JSONWriter writes one JSON object per call, one per line.
type JSONWriter struct {
	w      io.Writer
	n      *Normalizer
	redact []string
}

// NewJSONWriter returns a JSONWriter; normalize applies the transcript
// normalisation (and leaves latency out).
func NewJSONWriter(w io.Writer, normalize bool, redact []string) *JSONWriter {
	j := &JSONWriter{w: w, redact: redact}
	if normalize {
		j.n = NewNormalizer()
	}
	return j
}

// callJSON is the --json object of one call.
type callJSON struct {
	Call   int    `json:"call"`
	Source string `json:"source"`
	Script string `json:"script"`
	Method string `json:"method"`
	Tool   string `json:"tool,omitempty"`
	// Arguments or URI are what was sent.
	Arguments     json.RawMessage `json:"arguments,omitempty"`
	URI           string          `json:"uri,omitempty"`
	Vars          []Use           `json:"vars,omitempty"`
	ExpectError   bool            `json:"expect_error,omitempty"`
	IsError       bool            `json:"is_error"`
	Size          *Size           `json:"size,omitempty"`
	TokenRule     string          `json:"tokens_approx_rule,omitempty"`
	LatencyMS     *float64        `json:"latency_ms,omitempty"`
	Result        json.RawMessage `json:"result,omitempty"`
	Error         string          `json:"error,omitempty"`
	MissingHandle string          `json:"missing_variable,omitempty"`
}

// Write writes the object of r.
func (j *JSONWriter) Write(r *Result) error {
	c := callJSON{
		Call: r.N, Source: r.Call.Source, Script: r.Call.Text, Tool: r.Call.Tool,
		Arguments: r.Args, URI: r.URI, Vars: r.Uses, ExpectError: r.Call.ExpectError,
		IsError: r.IsError, Result: r.Raw,
	}
	switch r.Call.Kind {
	case KindTool:
		c.Method = methodCallTool
	default:
		c.Method = r.Call.Name()
	}
	if r.Err != nil {
		c.Error = oneLine(r.Err.Error())
		if ve, ok := r.Err.(*VarError); ok {
			c.MissingHandle = "$" + ve.Name
		}
	} else {
		size := r.Size
		c.Size, c.TokenRule = &size, TokenRule
	}
	if j.n == nil && r.Err == nil {
		ms := float64(r.Latency.Microseconds()) / 1000
		c.LatencyMS = &ms
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		return fmt.Errorf("encode call %d: %w", r.N, err)
	}
	out := b.String()
	if j.n != nil {
		out = j.n.String(out)
	}
	_, err := j.w.Write(escapeJSONControls([]byte(redact(out, j.redact))))
	return err
}
