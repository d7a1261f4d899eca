package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/internal/budget"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/server"
)

const looseBudget = `{
  "tools_list": {"max_bytes": 16384, "description_max_bytes": 600,
    "tool_max_bytes": {"schema": 3000, "query_records": 4000, "aggregate": 4000, "search": 4000, "fetch": 4000, "read_record_field": 4000}},
  "instructions": {"max_bytes": 2048, "head_chars": 512},
  "prose": {"min_chars": 60},
  "results": {"search": {"text_max_bytes": 1800}}
}`

// TestExitCodes pins each exit status, and that stdout carries a report only
// when something was measured.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	budgetFile := write("budget.json", looseBudget)
	ok := write("ok.txt", "schema {}\nsearch {\"q\": \"x\"}\n")
	unknown := write("unknown.txt", "list_streams {}\n")
	broken := write("broken.txt", "schema {\n")
	empty := filepath.Join(dir, "empty-cache")
	t.Setenv("PDPP_MCP_BUDGET_TEST_TOKEN", "token")
	baseline := filepath.Join(dir, "baseline.json")
	var so, se bytes.Buffer
	if code := runWith(t.Context(), []string{cmdName, "--server", "testmcp-ok 3 50", "--write-baseline", baseline}, &so, &se, server.New); code != 0 {
		t.Fatalf("writing the baseline: exit %d: %s", code, se.String())
	}

	for _, tt := range []struct {
		name   string
		build  newServer
		args   []string
		code   int
		report bool // stdout holds a report
	}{
		{"within budget", syntheticServer, []string{"--budget", budgetFile, "--scenario", ok}, 0, true},
		{"within budget, no results", syntheticServer, []string{"--budget", budgetFile, "--no-results", "--json"}, 0, true},
		{"over budget", syntheticServer, []string{"--budget", budgetFile, "--scenario", ok, "--max-bytes", "100"}, 3, true},
		{"result over budget", syntheticServer, []string{"--budget", budgetFile, "--scenario", ok, "--limit", "results.search.text_max_bytes=1"}, 3, true},
		{"failed call", syntheticServer, []string{"--budget", budgetFile, "--scenario", unknown}, 3, true},
		{"help", syntheticServer, []string{"--help"}, 0, false},
		{"version", syntheticServer, []string{"--version"}, 0, false},
		{"unknown flag", syntheticServer, []string{"--nope"}, 64, false},
		{"argument", syntheticServer, []string{"--budget", budgetFile, "x"}, 64, false},
		{"missing budget file", syntheticServer, []string{"--budget", filepath.Join(dir, "none.json")}, 78, false},
		{"scenario syntax", syntheticServer, []string{"--budget", budgetFile, "--scenario", broken}, 78, false},
		{"bad override", syntheticServer, []string{"--budget", budgetFile, "--limit", "x=1"}, 64, false},
		{"no credential", server.New, []string{"--budget", budgetFile, "--provider-url", "https://rs.example", "--cache-root", empty, "--scenario", ok}, 78, false},
		{"invalid provider URL", server.New, []string{"--budget", budgetFile, "--provider-url", "ftp://rs.example", "--cache-root", empty, "--scenario", ok}, 64, false},

		// Any server: testmcp-ok and testmcp-bad are this test binary (see
		// TestMain).
		{"any server within budget", server.New, []string{"--server", "testmcp-ok 3 50"}, 0, true},
		{"any server over a limit", server.New, []string{"--server", "testmcp-ok 3 50", "--limit", "tools_list.max_bytes=10"}, 3, true},
		{"any server grown past its baseline", server.New, []string{"--server", "testmcp-ok 4 50", "--baseline", baseline}, 3, true},
		{"any server, its own baseline", server.New, []string{"--server", "testmcp-ok 3 50", "--baseline", baseline}, 0, true},
		{"server that cannot be measured", server.New, []string{"--server", "testmcp-bad exit"}, 1, false},
		{"server that never answers", server.New, []string{"--server", "testmcp-bad silent", "--timeout", "100ms"}, 1, false},
		{"missing baseline", server.New, []string{"--server", "testmcp-ok 3 50", "--baseline", filepath.Join(dir, "none.json")}, 78, false},
		{"--server and --url", server.New, []string{"--server", "x", "--url", "https://mcp.example/mcp"}, 64, false},
		{"--provider-url with --server", server.New, []string{"--server", "x", "--provider-url", "https://rs.example"}, 64, false},
		{"--header without --url", server.New, []string{"--server", "x", "--header", "A: b"}, 64, false},
		{"malformed --header", server.New, []string{"--url", "https://mcp.example/mcp", "--header", "no colon"}, 64, false},
		{"unset --bearer-env", server.New, []string{"--url", "https://mcp.example/mcp", "--bearer-env", "PDPP_MCP_BUDGET_TEST_UNSET"}, 64, false},
		{"bearer over cleartext", server.New, []string{"--url", "http://mcp.example/mcp", "--bearer-env", "PDPP_MCP_BUDGET_TEST_TOKEN"}, 64, false},
		{"--max-growth without --baseline", server.New, []string{"--server", "x", "--max-growth", "5"}, 64, false},
		{"negative --max-growth", server.New, []string{"--server", "x", "--baseline", baseline, "--max-growth", "-1"}, 64, false},
		{"unsplittable --server", server.New, []string{"--server", "x 'y"}, 64, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runWith(t.Context(), append([]string{cmdName}, tt.args...), &stdout, &stderr, tt.build)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout.String(), stderr.String())
			}
			out := stdout.String()
			if got := strings.Contains(out, " checks passed") || strings.Contains(out, " checks failed") || strings.Contains(out, `"checks": [`); got != tt.report {
				t.Errorf("report on stdout %v, want %v:\n%s", got, tt.report, stdout.String())
			}
			switch {
			case tt.args[0] == "--help" || tt.args[0] == "--version":
				if stderr.Len() > 0 || !strings.Contains(out, cmdName) {
					t.Errorf("%s: stdout %q stderr %q", tt.args[0], out, stderr.String())
				}
			case tt.code != 0 && tt.code != 3:
				if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], cmdName+": ") {
					t.Errorf("stderr is not one %q line:\n%s", cmdName+": …", stderr.String())
				}
			case stderr.Len() > 0:
				t.Errorf("stderr:\n%s", stderr.String())
			}
		})
	}
}

// The built-in scenario parses and calls every tool of the surface.
func TestBuiltinScenario(t *testing.T) {
	sc, err := budget.ParseScenario("built-in", []byte(builtinScenario))
	if err != nil {
		t.Fatal(err)
	}
	var called []string
	for _, c := range sc.Calls {
		called = append(called, c.Tool)
	}
	for _, name := range budget.Surface() {
		if !slices.Contains(called, name) {
			t.Errorf("the built-in scenario never calls %s", name)
		}
	}
}

// docs/budget.md shows the tools/list table this command prints with
// --format markdown, between two markers; UPDATE_GOLDEN=1 (scripts/budget-doc)
// rewrites it.
func TestBudgetDocCurrent(t *testing.T) {
	const begin, end = "<!-- budget-doc:begin -->\n", "<!-- budget-doc:end -->"
	var stdout, stderr bytes.Buffer
	budgetFile := filepath.Join("..", "..", "budget.json")
	if code := run(t.Context(), []string{cmdName, "--budget", budgetFile, "--no-results", "--format", "markdown"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	docFile := filepath.Join("..", "..", "docs", "budget.md")
	doc, err := os.ReadFile(docFile)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := strings.Cut(string(doc), begin)
	current, after, ok2 := strings.Cut(rest, end)
	if !ok1 || !ok2 {
		t.Fatalf("%s lacks the markers %q and %q", docFile, begin, end)
	}
	if current == stdout.String() {
		return
	}
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile(docFile, []byte(before+begin+stdout.String()+end+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/budget.md is stale; run scripts/budget-doc. The command prints:\n%s", stdout.String())
}
