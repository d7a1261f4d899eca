package probe

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPrinterPlain(t *testing.T) {
	var b bytes.Buffer
	p := NewPrinter(&b, PrinterOptions{Color: ColorNever, Structured: true})
	r := testResult(2, "records: 2. next_cursor=\"eyJi\"\n\nrecord[0] x")
	r.Call.Comment = []string{"The second page."}
	r.Structured = json.RawMessage(`{"z":1,"a":[true]}`)
	r.Latency = 1500 * time.Microsecond
	if err := p.Print(r); err != nil {
		t.Fatal(err)
	}
	failed := &Result{N: 3, Call: Call{Kind: KindTool, Tool: "fetch", Args: `{"id":"$first_fetch_id"}`}, Err: errors.New("call 3: $first_fetch_id is not available")}
	p.Print(failed)
	want := `╭─ 2 query_records ─────────────────────────────────────────────────────
│ # The second page.
│ arguments {"cursor":"eyJh"}
│ $next_cursor from call 1 (query_records) = "eyJh"
├─ content[0] text
│ records: 2. next_cursor="eyJi"
│
│ record[0] x
├─ content[1] image: image/png, 3 bytes
├─ structuredContent
│ {
│   "z": 1,
│   "a": [true]
│ }
╰─ 43 bytes · 43 chars · ~7 tokens (o200k_base) · 1ms · ok
╭─ 3 fetch ─────────────────────────────────────────────────────────────
│ arguments {"id":"$first_fetch_id"}
╰─ failed: call 3: $first_fetch_id is not available
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("panel (-want +got):\n%s", diff)
	}
}

func TestPrinterOutcomes(t *testing.T) {
	for _, tt := range []struct {
		isError, expect bool
		want            string
	}{
		{false, false, "· ok\n"},
		{true, false, "· isError\n"},
		{true, true, "· isError (expected)\n"},
		{false, true, "· ok, but the script expected isError\n"},
	} {
		var b bytes.Buffer
		r := testResult(1, "x")
		r.IsError, r.Call.ExpectError = tt.isError, tt.expect
		NewPrinter(&b, PrinterOptions{Color: ColorNever, Normalize: true}).Print(r)
		if !strings.HasSuffix(b.String(), tt.want) {
			t.Errorf("isError=%v expect=%v: footer %q, want suffix %q", tt.isError, tt.expect, lastLine(b.String()), tt.want)
		}
		if strings.Contains(b.String(), "ms ·") {
			t.Error("--normalize output shows latency")
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// Server text never reaches the terminal as control characters, every line
// of it sits behind the gutter (so it cannot pass for the probe's own
// footer), and a secret is redacted wherever it appears.
func TestPrinterHostile(t *testing.T) {
	cs, w := inMemory(t, testServer())
	results, err := runAll(t, &Runner{Session: cs, Wire: w}, "hostile\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, color := range []Color{ColorNever, ColorAlways} {
		var b bytes.Buffer
		p := NewPrinter(&b, PrinterOptions{Color: color, Structured: true, Redact: []string{"secret-token"}})
		if err := p.Print(results[0]); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if color == ColorNever {
			if r, ok := terminalSafe(out); !ok {
				t.Fatalf("plain output holds %U:\n%q", r, out)
			}
		} else {
			// Colour output has the probe's own SGR sequences and nothing
			// else: remove those and nothing may be left.
			if r, ok := terminalSafe(stripSGR(out)); !ok {
				t.Fatalf("colour output holds %U besides SGR:\n%q", r, out)
			}
			if !strings.Contains(out, "\x1b[") {
				t.Fatal("--color always produced no colour")
			}
		}
		if strings.Contains(out, "secret-token") || !strings.Contains(out, "[redacted]") {
			t.Errorf("the secret was not redacted:\n%s", out)
		}
		plain := stripSGR(out)
		for _, want := range []string{"│ ␛]0;pwned␇␛[2J␛[31mred␛[0m ⟨U+009B⟩1mC1␍FAKE ok⟨U+202E⟩esrever\n", "8 control characters replaced"} {
			if !strings.Contains(plain, want) {
				t.Errorf("output lacks %q:\n%s", want, plain)
			}
		}
		for _, line := range strings.Split(strings.TrimSuffix(plain, "\n"), "\n") {
			if !strings.HasPrefix(line, "│") && !strings.HasPrefix(line, "╭") && !strings.HasPrefix(line, "├") && !strings.HasPrefix(line, "╰") {
				t.Errorf("a line outside the panel: %q", line)
			}
		}
	}
}

// stripSGR removes ESC [ … m sequences.
func stripSGR(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "\x1b[")
		if i < 0 {
			return b.String() + s
		}
		j := strings.IndexByte(s[i:], 'm')
		if j < 0 || strings.ContainsAny(s[i+2:i+j], "\x1b\x07") {
			return b.String() + s // not an SGR sequence: leave it for the check
		}
		b.WriteString(s[:i])
		s = s[i+j+1:]
	}
}

func TestColorAuto(t *testing.T) {
	t.Setenv("CLICOLOR_FORCE", "")
	var b bytes.Buffer
	NewPrinter(&b, PrinterOptions{Color: ColorAuto}).Print(testResult(1, "x"))
	if strings.Contains(b.String(), "\x1b") {
		t.Error("auto colour into a buffer (not a terminal) produced escapes")
	}
	t.Setenv("NO_COLOR", "1")
	b.Reset()
	NewPrinter(&b, PrinterOptions{Color: ColorAlways}).Print(testResult(1, "x"))
	if !strings.Contains(b.String(), "\x1b[") {
		t.Error("--color always is overridden by NO_COLOR; the flag should win")
	}
	if _, err := ParseColor("sometimes"); err == nil {
		t.Error("ParseColor accepted sometimes")
	}
}

func TestPrinterDiff(t *testing.T) {
	var b bytes.Buffer
	NewPrinter(&b, PrinterOptions{Color: ColorNever}).Diff(&Mismatch{N: 4, Reason: "the model-visible text changed", Diff: "--- a\n+++ b\n-old \x1b[31m\n+new\n"})
	want := "golden mismatch, call 4: the model-visible text changed\n--- a\n+++ b\n-old ␛[31m\n+new\n"
	if b.String() != want {
		t.Errorf("diff output %q, want %q", b.String(), want)
	}
}

func TestJSONWriter(t *testing.T) {
	cs, w := inMemory(t, testServer())
	results, err := runAll(t, &Runner{Session: cs, Wire: w}, "echo {\"x\":1}\nhostile\n")
	if err != nil {
		t.Fatal(err)
	}
	results = append(results, &Result{N: 3, Call: Call{Kind: KindTool, Tool: "fetch", Source: "s:3", Text: `fetch $next_read_args`},
		Err: &VarError{N: 3, Name: "next_read_args", why: "none"}})
	for _, normalize := range []bool{false, true} {
		var b bytes.Buffer
		jw := NewJSONWriter(&b, normalize, []string{"secret-token"})
		for _, r := range results {
			if err := jw.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if r, ok := terminalSafe(b.String()); !ok {
			t.Fatalf("JSON output holds %U", r)
		}
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if len(lines) != 3 {
			t.Fatalf("%d lines, want one per call", len(lines))
		}
		var objs []map[string]any
		for _, l := range lines {
			var o map[string]any
			if err := json.Unmarshal([]byte(l), &o); err != nil {
				t.Fatalf("line %q: %v", l, err)
			}
			objs = append(objs, o)
		}
		echo := objs[0]
		if echo["method"] != "tools/call" || echo["tool"] != "echo" || echo["is_error"] != false {
			t.Errorf("echo object: %v", echo)
		}
		if _, ok := echo["latency_ms"]; ok == normalize {
			t.Errorf("normalize=%v: latency_ms present=%v", normalize, ok)
		}
		if size, _ := echo["size"].(map[string]any); size["bytes"] == nil || size["tokens_approx"] == nil {
			t.Errorf("echo size: %v", echo["size"])
		}
		if !strings.Contains(lines[0], `"structuredContent":{"zeta":1,"alpha":{"y":2,"b":3}}`) {
			t.Errorf("the raw result lost its key order: %s", lines[0])
		}
		if normalize != strings.Contains(lines[0], `request_id=\u003crequest-id\u003e`) && normalize != strings.Contains(lines[0], "request_id=<request-id>") {
			t.Errorf("normalize=%v: %s", normalize, lines[0])
		}
		if strings.Contains(b.String(), "secret-token") {
			t.Error("the secret was not redacted")
		}
		if objs[2]["missing_variable"] != "$next_read_args" || objs[2]["error"] == nil {
			t.Errorf("failed call object: %v", objs[2])
		}
	}
}

// With a width every line of a panel fits, continuation lines sit behind
// the dashed gutter, and nothing of the text is lost; colour does not
// change the layout.
func TestPrinterWidth(t *testing.T) {
	long := "search: 1 hit(s). first_fetch_id=cin_3a769b3e43e3792e0a811ceb/mail_bodies:177aa15315e811e9_body " +
		strings.Repeat("word ", 40) + strings.Repeat("x", 150)
	for _, color := range []Color{ColorNever, ColorAlways} {
		for _, width := range []int{80, 50} {
			var b bytes.Buffer
			r := testResult(1, long)
			r.Call.Comment = []string{strings.Repeat("a comment that runs on ", 6)}
			r.Latency = time.Millisecond
			if err := NewPrinter(&b, PrinterOptions{Color: color, Width: width}).Print(r); err != nil {
				t.Fatal(err)
			}
			out := stripSGR(b.String())
			var text strings.Builder
			for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if n := len([]rune(line)); n > width {
					t.Errorf("%s width %d: a line of %d columns: %q", color, width, n, line)
				}
				if rest, ok := strings.CutPrefix(line, "┆ "); ok {
					text.WriteString(rest)
				} else if rest, ok := strings.CutPrefix(line, "│ "); ok && !strings.HasPrefix(rest, "#") && !strings.HasPrefix(rest, "arguments") {
					text.WriteString(rest)
				}
			}
			// The wrapped text, joined again without the breaks, holds every
			// non-space character of the original in order.
			squash := func(s string) string { return strings.Join(strings.Fields(s), "") }
			if got := squash(text.String()); !strings.Contains(got, squash(long)) {
				t.Errorf("%s width %d: text lost in wrapping:\n%s", color, width, out)
			}
		}
	}
	// Width 0 is the unwrapped panel, byte for byte.
	var plain, zero bytes.Buffer
	NewPrinter(&plain, PrinterOptions{Color: ColorNever}).Print(testResult(1, long))
	NewPrinter(&zero, PrinterOptions{Color: ColorNever, Width: 0}).Print(testResult(1, long))
	if plain.String() != zero.String() || strings.Contains(plain.String(), "┆") {
		t.Error("width 0 wraps")
	}
}

// Tour comments fit an 80-column terminal unwrapped: "│ " plus the line.
func TestTourCommentsFit80(t *testing.T) {
	for i, line := range strings.Split(TourScript, "\n") {
		if strings.HasPrefix(line, "#") && len([]rune(line)) > 78 {
			t.Errorf("tour.probe:%d is %d characters; comments are at most 78 so a panel shows them in 80 columns", i+1, len([]rune(line)))
		}
	}
}
