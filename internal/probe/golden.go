package probe

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/diff"
)

// Normalizer replaces the values that differ between two runs of the same
// calls, so transcripts of those runs compare equal when what the model
// reads is the same:
//
//   - request ids (request_id=…, "request_id":"…", Request-Id: …) become
//     <request-id>;
//   - opaque cursors and change tokens (next_cursor, previous_cursor,
//     cursor, next_changes_since, changes_since) become <cursor-N>, numbered
//     by first appearance in the run so a value handed from one call to the
//     next keeps its number; plain character offsets, "beginning" and null
//     are kept, since they are content rather than session state;
//   - loopback ports (http://127.0.0.1:PORT) become <port>.
//
// Latency never appears in transcripts. Secrets given to Redact (a bearer
// token a server might echo) become [redacted] before anything else. A
// Normalizer is used for one run.
type Normalizer struct {
	cursors map[string]string
	secrets []string
}

// NewNormalizer returns a Normalizer for one run.
func NewNormalizer() *Normalizer { return &Normalizer{cursors: map[string]string{}} }

var (
	requestIDRE = regexp.MustCompile(`(?i)(request[_-]?id)(\\?"?[ \t]*[=:][ \t]*\\?"?)([A-Za-z0-9_.:\-]+)`)
	cursorKey   = `((?:next_|previous_)?cursor|(?:next_)?changes_since)`
	// A quoted value, also inside JSON text that is itself a JSON string
	// (\"cursor\":\"…\").
	quotedCursorRE = regexp.MustCompile(`\b` + cursorKey + `(\\?"?[ \t]*[=:][ \t]*)(\\?")([^"\\\s]+)(\\?")`)
	bareCursorRE   = regexp.MustCompile(`\b` + cursorKey + `=([^\s"&,;{}\]\[]+)`)
	loopbackRE     = regexp.MustCompile(`(https?://(?:127\.0\.0\.1|localhost|\[::1\])):\d+`)
)

// Redact adds strings that must never be written.
func (n *Normalizer) Redact(secrets ...string) {
	for _, sec := range secrets {
		if sec != "" {
			n.secrets = append(n.secrets, sec)
		}
	}
}

// String normalises s.
func (n *Normalizer) String(s string) string {
	s = redact(s, n.secrets)
	s = requestIDRE.ReplaceAllStringFunc(s, func(m string) string {
		p := requestIDRE.FindStringSubmatch(m)
		if p[3] == "null" {
			return m
		}
		return p[1] + p[2] + "<request-id>"
	})
	s = quotedCursorRE.ReplaceAllStringFunc(s, func(m string) string {
		p := quotedCursorRE.FindStringSubmatch(m)
		return p[1] + p[2] + p[3] + n.cursor(p[4]) + p[5]
	})
	s = bareCursorRE.ReplaceAllStringFunc(s, func(m string) string {
		p := bareCursorRE.FindStringSubmatch(m)
		v, dot := strings.CutSuffix(p[2], ".")
		if strings.HasPrefix(v, "<cursor-") {
			return m // already replaced as a quoted value
		}
		out := p[1] + "=" + n.cursor(v)
		if dot {
			out += "."
		}
		return out
	})
	return loopbackRE.ReplaceAllString(s, "$1:<port>")
}

func (n *Normalizer) cursor(v string) string {
	if !opaqueCursor(v) {
		return v
	}
	if p, ok := n.cursors[v]; ok {
		return p
	}
	p := fmt.Sprintf("<cursor-%d>", len(n.cursors)+1)
	n.cursors[v] = p
	return p
}

func opaqueCursor(v string) bool {
	switch v {
	case "", "beginning", "null", "true", "false":
		return false
	}
	if strings.HasPrefix(v, "<cursor-") || strings.HasPrefix(v, "$") { // already replaced, or a script variable
		return false
	}
	_, err := strconv.ParseUint(v, 10, 64)
	return err != nil
}

// Transcript renders a result as its golden transcript: the call as written,
// what was sent, the variables used, the outcome, the sizes and the
// model-visible text, with volatile values normalised. Sizes are those of the
// text as received.
func Transcript(r *Result, n *Normalizer) []byte {
	var b bytes.Buffer
	b.WriteString("# pdpp-mcp-probe golden transcript (volatile values normalised; see docs/probe.md)\n")
	fmt.Fprintf(&b, "call %d: %s\n", r.N, n.String(r.Call.Text))
	switch {
	case r.Args != nil:
		fmt.Fprintf(&b, "sent: %s\n", n.String(string(r.Args)))
	case r.URI != "":
		fmt.Fprintf(&b, "sent: %s\n", n.String(r.URI))
	}
	for _, u := range r.Uses {
		fmt.Fprintf(&b, "uses: $%s from call %d (%s)\n", u.Name, u.From, u.FromName)
	}
	fmt.Fprintf(&b, "result: %s\n", n.String(outcome(r)))
	if r.Err != nil {
		return b.Bytes()
	}
	// Bytes and characters are those received. Tokens are counted on the
	// normalised text shown below: a random request id tokenises
	// differently on every run, its placeholder always the same.
	texts := make([]string, len(r.Blocks))
	for i, bl := range r.Blocks {
		texts[i] = n.String(bl.Text)
	}
	fmt.Fprintf(&b, "size: %d bytes, %d chars received; %s tokens (%s) as shown\n", r.Size.Bytes, r.Size.Chars, tokenCount(strings.Join(texts, "")), TokenRule)
	for i, bl := range r.Blocks {
		if bl.Text == "" && bl.Note != "" {
			fmt.Fprintf(&b, "--- %s: %s ---\n", n.String(bl.Label), n.String(bl.Note))
			continue
		}
		fmt.Fprintf(&b, "--- %s (%d bytes) ---\n", n.String(bl.Label), len(bl.Text))
		b.WriteString(texts[i])
		b.WriteString("\n")
	}
	return b.Bytes()
}

// outcome is one line saying how the call ended.
func outcome(r *Result) string {
	switch {
	case r.Err != nil:
		return "failed: " + oneLine(r.Err.Error())
	case r.Call.Kind != KindTool:
		return "ok"
	case r.IsError && r.Call.ExpectError:
		return "isError (expected)"
	case r.IsError:
		return "isError"
	case r.Call.ExpectError:
		return "ok, but the script expected isError"
	}
	return "ok"
}

// tokenCount counts the tokens of s for display ("?" if the encoding could
// not be loaded, which measure has already reported).
func tokenCount(s string) string {
	sz, err := measure(s)
	if err != nil {
		return "?"
	}
	return strconv.Itoa(sz.Tokens)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// goldenName is the file of call n: 003-query_records.txt.
func goldenName(r *Result) string {
	name := strings.NewReplacer("/", "_", "\\", "_").Replace(r.Call.Name())
	return fmt.Sprintf("%03d-%s.txt", r.N, name)
}

var goldenFileRE = regexp.MustCompile(`^(\d{3,})-[A-Za-z0-9_.\-]+\.txt$`)

// goldenFiles lists the transcript files of dir by call number.
func goldenFiles(dir string) (map[int]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	files := map[int]string{}
	for _, e := range entries {
		m := goldenFileRE.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		if prev, ok := files[n]; ok {
			return nil, fmt.Errorf("%s holds two transcripts of call %d: %s and %s", dir, n, prev, e.Name())
		}
		files[n] = e.Name()
	}
	return files, nil
}

// Recorder writes one golden transcript per call into Dir.
type Recorder struct {
	Dir     string
	n       *Normalizer
	written map[string]bool
}

// NewRecorder creates dir if needed. The secrets are never written.
func NewRecorder(dir string, secrets ...string) (*Recorder, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("golden directory: %w", err)
	}
	n := NewNormalizer()
	n.Redact(secrets...)
	return &Recorder{Dir: dir, n: n, written: map[string]bool{}}, nil
}

// Add writes the transcript of r.
func (g *Recorder) Add(r *Result) error {
	name := goldenName(r)
	g.written[name] = true
	if err := os.WriteFile(filepath.Join(g.Dir, name), Transcript(r, g.n), 0o644); err != nil {
		return fmt.Errorf("write golden transcript: %w", err)
	}
	return nil
}

// Finish removes transcripts left from an earlier, different run (files
// named like transcripts that this run did not write) and returns their
// names, so Dir holds exactly this run.
func (g *Recorder) Finish() ([]string, error) {
	files, err := goldenFiles(g.Dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, name := range files {
		if g.written[name] {
			continue
		}
		if err := os.Remove(filepath.Join(g.Dir, name)); err != nil {
			return removed, fmt.Errorf("remove stale transcript: %w", err)
		}
		removed = append(removed, name)
	}
	slices.Sort(removed)
	return removed, nil
}

// Mismatch is a call whose transcript differs from the golden one.
type Mismatch struct {
	N int
	// File is the golden file, relative to the checked directory ("" when
	// there is none).
	File string
	// Reason is one line: what differs.
	Reason string
	// Diff is a unified diff from the golden transcript to this run's; it
	// holds server text, so print it through Sanitize.
	Diff string
}

// Checker compares each call's transcript with the golden one in Dir.
type Checker struct {
	Dir   string
	n     *Normalizer
	files map[int]string
	seen  map[int]bool
}

// NewChecker reads the transcript names of dir, which must exist. The
// secrets never appear in a diff.
func NewChecker(dir string, secrets ...string) (*Checker, error) {
	files, err := goldenFiles(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("golden directory %s does not exist; create it with --record %s", dir, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("golden directory: %w", err)
	}
	n := NewNormalizer()
	n.Redact(secrets...)
	return &Checker{Dir: dir, n: n, files: files, seen: map[int]bool{}}, nil
}

// Check compares r with its golden transcript; nil means they are the same.
func (g *Checker) Check(r *Result) (*Mismatch, error) {
	got := Transcript(r, g.n)
	g.seen[r.N] = true
	name, ok := g.files[r.N]
	if !ok {
		return &Mismatch{N: r.N, Reason: fmt.Sprintf("no golden transcript of call %d in %s (record one with --record)", r.N, g.Dir),
			Diff: string(diff.Diff("/dev/null", nil, "this run: "+goldenName(r), got))}, nil
	}
	want, err := os.ReadFile(filepath.Join(g.Dir, name))
	if err != nil {
		return nil, fmt.Errorf("read golden transcript: %w", err)
	}
	if bytes.Equal(want, got) {
		return nil, nil
	}
	return &Mismatch{N: r.N, File: name, Reason: mismatchReason(want, got),
		Diff: firstDifference(want, got) + string(diff.Diff("golden: "+name, want, "this run: "+goldenName(r), got))}, nil
}

// diffContext is how many characters firstDifference shows on each side.
const diffContext = 40

// firstDifference points at the first character that differs in the
// model-visible text (or, when that is the same, in the header), with some
// context from both sides: results are often one long line of JSON, where a
// line diff alone says little.
func firstDifference(want, got []byte) string {
	wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	textStart := func(lines []string) int {
		for i, l := range lines {
			if strings.HasPrefix(l, "--- ") {
				return i
			}
		}
		return len(lines)
	}
	from := 0
	if ws, gs := textStart(wl), textStart(gl); ws == gs && !slices.Equal(wl[ws:], gl[gs:]) {
		from = ws + 1 // skip the block header, whose byte count differs too
	}
	for i := from; i < min(len(wl), len(gl)); i++ {
		if wl[i] == gl[i] {
			continue
		}
		w, g := []rune(wl[i]), []rune(gl[i])
		col := 0
		for col < min(len(w), len(g)) && w[col] == g[col] {
			col++
		}
		excerpt := func(r []rune) string {
			from, to := max(0, col-diffContext), min(len(r), col+diffContext)
			s := string(r[from:to])
			if from > 0 {
				s = "…" + s
			}
			if to < len(r) {
				s += "…"
			}
			return s
		}
		return fmt.Sprintf("first difference: line %d, character %d\n  golden:   %s\n  this run: %s\n", i+1, col+1, excerpt(w), excerpt(g))
	}
	return ""
}

// mismatchReason names what changed, from the transcript's header lines.
func mismatchReason(want, got []byte) string {
	field := func(b []byte, key string) string {
		for line := range strings.Lines(string(b)) {
			if strings.HasPrefix(line, "--- ") {
				break
			}
			if v, ok := strings.CutPrefix(line, key); ok {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	var what []string
	if field(want, "call ") != field(got, "call ") || field(want, "sent: ") != field(got, "sent: ") {
		what = append(what, "the call")
	}
	if field(want, "result: ") != field(got, "result: ") {
		what = append(what, "the outcome")
	}
	if w, g := field(want, "size: "), field(got, "size: "); w != g {
		what = append(what, fmt.Sprintf("the size (%s → %s)", orNone(w), orNone(g)))
	}
	_, wt, _ := strings.Cut(string(want), "\n--- ")
	_, gt, _ := strings.Cut(string(got), "\n--- ")
	if wt != gt {
		what = append(what, "the model-visible text")
	}
	if len(what) == 0 {
		what = append(what, "the transcript")
	}
	return strings.Join(what, ", ") + " changed"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Finish reports golden transcripts of calls this run did not make.
func (g *Checker) Finish() []Mismatch {
	var out []Mismatch
	for n, name := range g.files {
		if g.seen[n] {
			continue
		}
		out = append(out, Mismatch{N: n, File: name,
			Reason: fmt.Sprintf("the golden transcripts have call %d (%s) but this run made %d calls", n, name, len(g.seen))})
	}
	slices.SortFunc(out, func(a, b Mismatch) int { return a.N - b.N })
	return out
}
