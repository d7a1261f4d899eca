package budget_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/budget"
	"github.com/pdpp-mcp/pdpp-mcp/internal/probe"
)

// sampleReport is a report with a passing and a failing check of each
// kind, built from a synthetic surface and scenario so every number in the
// golden files can be traced.
func sampleReport(t *testing.T) *budget.Report {
	t.Helper()
	s := healthy()
	s.tool("search").Description += " " + connSentence
	s.tool("fetch").Description += " " + connSentence
	s.answers["query_records"] = func(map[string]any) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: text(strings.Repeat("record ", 40) + `next_cursor="c2"`),
			StructuredContent: map[string]any{"data": map[string]any{"records": []any{1, 2, 3}}}}
	}
	cs, wire := s.connect(t)
	st, err := budget.ReadSurface(t.Context(), cs, wire, 0)
	if err != nil {
		t.Fatal(err)
	}
	fp, err := budget.Measure(st, words{})
	if err != nil {
		t.Fatal(err)
	}
	fp.PDPPOrder()
	sc, err := budget.ParseScenario("sample", []byte(
		"query_records {\"stream\": \"messages\", \"limit\": 100, \"fields\": [\"subject\", \"from\", \"received_at\"]}\n"+
			"query_records {\"stream\": \"messages\", \"cursor\": \"$next_cursor\"}\n!search {\"q\": \"x\"}\nfetch {\"id\": \"$first_fetch_id\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	calls, err := budget.RunScenario(t.Context(), &probe.Runner{Session: cs, Wire: wire}, sc, words{})
	if err != nil {
		t.Fatal(err)
	}
	l := testLimits()
	l.Results = map[string]budget.ResultLimits{"query_records": {TextMaxBytes: 250, StructuredMaxBytes: 100}}
	checks := append(budget.CheckSurface(st, fp, l), budget.CheckResults(calls, l, false)...)
	return budget.NewReport(words{}, fp, sc.Name, calls, checks)
}

func TestReportFormats(t *testing.T) {
	r := sampleReport(t)
	if r.Pass {
		t.Fatal("sample report passes; it should hold failures")
	}
	for _, tt := range []struct {
		golden string
		write  func(*bytes.Buffer) error
	}{
		{"report/table.txt", func(b *bytes.Buffer) error {
			return budget.WriteText(b, r, budget.TextOptions{Color: budget.ColorNever})
		}},
		{"report/github.txt", func(b *bytes.Buffer) error {
			return budget.WriteGitHub(b, r, budget.GitHubOptions{File: "budget.json", Lines: map[string]int{"results.query_records.text_max_bytes": 9}})
		}},
		{"report/report.json", func(b *bytes.Buffer) error { return budget.WriteJSON(b, r) }},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.write(&b); err != nil {
				t.Fatal(err)
			}
			if bytes.ContainsRune(b.Bytes(), '\x1b') {
				t.Error("escape sequences in plain output")
			}
			golden(t, tt.golden, b.Bytes())
		})
	}
}

func TestReportJSONRoundTrip(t *testing.T) {
	var b bytes.Buffer
	if err := budget.WriteJSON(&b, sampleReport(t)); err != nil {
		t.Fatal(err)
	}
	var back budget.Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Pass || len(back.Checks) == 0 || back.ToolsList.AnchorBytes != 23953 || back.Tokenizer != "words (test)" {
		t.Errorf("decoded %+v", back)
	}
}

func TestReportColor(t *testing.T) {
	r := sampleReport(t)
	var always, never bytes.Buffer
	if err := budget.WriteText(&always, r, budget.TextOptions{Color: budget.ColorAlways}); err != nil {
		t.Fatal(err)
	}
	if err := budget.WriteText(&never, r, budget.TextOptions{Color: budget.ColorNever}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(always.Bytes(), []byte("\x1b[")) {
		t.Error("--color always wrote no colour")
	}
	// auto on a buffer (not a terminal) is plain.
	var auto bytes.Buffer
	if err := budget.WriteText(&auto, r, budget.TextOptions{Color: budget.ColorAuto}); err != nil {
		t.Fatal(err)
	}
	if auto.String() != never.String() {
		t.Error("--color auto on a pipe differs from never")
	}
}

// Text from the server (names, error lines, quoted descriptions) cannot
// drive the terminal: escape sequences and control characters are removed
// before printing, in every format.
func TestReportHostileText(t *testing.T) {
	hostile := "evil\x1b]0;owned\x07name\x1b[31m\r\x00\x9b2J"
	r := budget.NewReport(words{}, &budget.Footprint{Tools: []budget.ToolFootprint{{Name: hostile}}}, "s",
		[]budget.Call{{Seq: 1, Source: "s:1", Method: "tools/call", Tool: hostile, Arguments: json.RawMessage(`{"q":"\u001b[2J"}`)}},
		[]budget.Check{{Name: "tools.membership", Kind: budget.Exact, Message: "unexpected " + hostile}})
	for name, write := range map[string]func(*bytes.Buffer) error{
		"text": func(b *bytes.Buffer) error {
			return budget.WriteText(b, r, budget.TextOptions{Color: budget.ColorNever})
		},
		"github": func(b *bytes.Buffer) error {
			return budget.WriteGitHub(b, r, budget.GitHubOptions{File: "budget.json", Lines: map[string]int{"results.query_records.text_max_bytes": 9}})
		},
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		for _, c := range []string{"\x1b", "\x07", "\r", "\x00", "\u009b"} {
			if strings.Contains(b.String(), c) {
				t.Errorf("%s output holds %q:\n%s", name, c, b.String())
			}
		}
		if !strings.Contains(b.String(), "evil") {
			t.Errorf("%s output lost the visible text", name)
		}
	}
}
