package budget_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/budget"
)

func TestParseScenario(t *testing.T) {
	src := "# comment\n\n  schema  \nquery_records {\"stream\": \"s\", \"limit\": 100, \"fields\": [\"a\"]}\n" +
		"\tresources/read pdpp://stream/s\ntools/list\nfetch {\"id\": \"$first_fetch_id\"}\n"
	sc, err := budget.ParseScenario("s.txt", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []budget.Step{
		{Line: 3, Kind: budget.StepTool, Tool: "schema", Args: map[string]any{}},
		{Line: 4, Kind: budget.StepTool, Tool: "query_records", Args: map[string]any{"stream": "s", "limit": json.Number("100"), "fields": []any{"a"}}},
		{Line: 5, Kind: budget.StepRead, URI: "pdpp://stream/s"},
		{Line: 6, Kind: budget.StepListTools},
		{Line: 7, Kind: budget.StepTool, Tool: "fetch", Args: map[string]any{"id": "$first_fetch_id"}},
	}
	if diff := cmp.Diff(want, sc.Steps); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
}

func TestParseScenarioErrors(t *testing.T) {
	for _, tt := range []struct{ src, want string }{
		{"", "s.txt:1: no calls"},
		{"# only a comment\n", "s.txt:1: no calls"},
		{"schema {}\nfind/all {}\n", `s.txt:2: "find/all" is not a tool name`},
		{"query records {}\n", "s.txt:1: arguments of query are not one JSON object"},
		{"schema {\"stream\": }\n", "s.txt:1: arguments of schema are not one JSON object"},
		{"schema [1]\n", "s.txt:1: arguments of schema are not one JSON object"},
		{"schema null\n", "s.txt:1: arguments of schema are null"},
		{"schema {} {}\n", "s.txt:1: arguments of schema: text after the JSON object"},
		{"schema {}\n\n\nfetch {\"id\": \"$fetch_id\"}\n", "s.txt:4: unknown variable $fetch_id (known: $first_fetch_id, $next_cursor, $next_changes_since; write $$ for a literal $)"},
		{"tools/list now\n", "s.txt:1: tools/list takes no arguments"},
		{"resources/read\n", "s.txt:1: resources/read takes one URI"},
		{"resources/read a b\n", "s.txt:1: resources/read takes one URI"},
	} {
		_, err := budget.ParseScenario("s.txt", []byte(tt.src))
		var se *budget.ScenarioError
		if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("ParseScenario(%q) = %v, want %q", tt.src, err, tt.want)
		}
	}
}

// A literal $ that is not followed by a name, and $$, are not variables.
func TestParseScenarioDollars(t *testing.T) {
	sc, err := budget.ParseScenario("s", []byte(`search {"q": "$89 and $$total"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := sc.Steps[0].Args["q"]; got != "$89 and $$total" {
		t.Errorf("q = %v", got)
	}
}

// The parser never panics, and what it accepts is well formed: each step has
// a kind, lines ascend, and tool arguments encode as a JSON object.
func FuzzParseScenario(f *testing.F) {
	for _, s := range []string{
		"schema {}\n", resultScenario, "tools/list\n", "resources/read x\n", "fetch {\"id\": \"$next_cursor$$\"}",
		"a {\"b\": [1, {\"c\": null}]}\r\n# x\n", "schema {\"x\": \"\\u0000\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		sc, err := budget.ParseScenario("fuzz", src)
		if err != nil {
			var se *budget.ScenarioError
			if errors.As(err, &se) && se.Line < 1 {
				t.Fatalf("error line %d", se.Line)
			}
			return
		}
		last := 0
		for _, st := range sc.Steps {
			if st.Line <= last {
				t.Fatalf("line %d after %d", st.Line, last)
			}
			last = st.Line
			switch st.Kind {
			case budget.StepTool:
				b, err := json.Marshal(st.Args)
				if err != nil || len(b) == 0 || b[0] != '{' {
					t.Fatalf("arguments %s, %v", b, err)
				}
			case budget.StepRead:
				if st.URI == "" {
					t.Fatal("read without a URI")
				}
			case budget.StepListTools:
			default:
				t.Fatalf("kind %q", st.Kind)
			}
		}
	})
}
