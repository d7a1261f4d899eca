package budget_test

import (
	"strings"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/internal/budget"
	"github.com/pdpp-mcp/pdpp-mcp/internal/probe"
)

// Scenarios are probe scripts: the parser is probe's (tested and fuzzed
// there); budget adds only that a scenario must call something.
func TestParseScenario(t *testing.T) {
	sc, err := budget.ParseScenario("s.probe", []byte("# c\nschema\n!fetch {\"id\": \"x\"}\nresources/read pdpp://stream/s\ntools/list\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range sc.Calls {
		got = append(got, c.Source+" "+c.Name())
	}
	if want := "s.probe:2 schema|s.probe:3 fetch|s.probe:4 resources/read|s.probe:5 tools/list"; strings.Join(got, "|") != want {
		t.Errorf("calls %q, want %q", strings.Join(got, "|"), want)
	}
	if !sc.Calls[1].ExpectError || sc.Calls[0].Kind != probe.KindTool {
		t.Errorf("calls %+v", sc.Calls)
	}

	for _, tt := range []struct{ src, want string }{
		{"", "s.probe: no calls"},
		{"# only a comment\n\n", "s.probe: no calls"},
		{"schema {}\nfind/all {}\nfetch {\"id\": \"$fetch_id\"}\n", `s.probe:2: unknown method "find/all"`},
		{"schema {}\nfind/all {}\nfetch {\"id\": \"$fetch_id\"}\n", "s.probe:3: "},
	} {
		_, err := budget.ParseScenario("s.probe", []byte(tt.src))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseScenario(%q) = %v, want %q", tt.src, err, tt.want)
		}
	}
}
