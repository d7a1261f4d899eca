package budget_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/budget"
)

func footprint(total int, tools ...budget.ToolFootprint) *budget.Footprint {
	return &budget.Footprint{Bytes: total, Tools: tools, Instructions: budget.TextSize{Bytes: 10}}
}

func tool(name string, n int) budget.ToolFootprint { return budget.ToolFootprint{Name: name, Bytes: n} }

func TestCompare(t *testing.T) {
	base := &budget.Baseline{Version: budget.BaselineVersion,
		ToolsList: footprint(300, tool("a", 100), tool("b", 100), tool("gone", 100)),
		Results:   []budget.Call{{Seq: 1, Method: "tools/call", Tool: "a", Text: budget.TextSize{Bytes: 50}}}}
	now := &budget.Report{
		ToolsList: footprint(330, tool("a", 105), tool("b", 90), tool("new", 135)),
		Results: []budget.Call{
			{Seq: 1, Method: "tools/call", Tool: "a", Text: budget.TextSize{Bytes: 50}},
			{Seq: 2, Method: "tools/call", Tool: "new", Text: budget.TextSize{Bytes: 9}},
		},
	}
	for _, tt := range []struct {
		growth float64
		over   []string
	}{
		{0, []string{"tools array", "tool a", "tool new"}},
		{5, []string{"tools array", "tool new"}},
		{10, []string{"tool new"}},
	} {
		c := budget.Compare(base, "base.json", now, tt.growth)
		var over []string
		changes := map[string]budget.Change{}
		for _, d := range c.Deltas {
			changes[d.Label()] = d.Change
			if d.Over {
				over = append(over, d.Label())
			}
		}
		if diff := cmp.Diff(tt.over, over); diff != "" {
			t.Errorf("--max-growth %v: over (-want +got):\n%s", tt.growth, diff)
		}
		want := map[string]budget.Change{
			"tools array": budget.Grown, "instructions": budget.Unchanged, "tool a": budget.Grown, "tool b": budget.Shrunk,
			"tool new": budget.Added, "tool gone": budget.Removed,
			"result text call 1 (a)": budget.Unchanged, "result call 2 (new)": budget.Added,
		}
		if diff := cmp.Diff(want, changes); diff != "" {
			t.Errorf("changes (-want +got):\n%s", diff)
		}
		ch := c.Check()
		if ch.Pass || ch.Name != "baseline.growth" || len(ch.Findings) != len(tt.over) {
			t.Errorf("check %+v", ch)
		}
	}
	if ch := budget.Compare(base, "base.json", &budget.Report{ToolsList: base.ToolsList, Results: base.Results}, 0).Check(); !ch.Pass {
		t.Errorf("the baseline compared with itself fails: %+v", ch)
	}
}

func TestBaselineRoundTrip(t *testing.T) {
	r := sampleReport(t)
	var b bytes.Buffer
	if err := budget.WriteBaseline(&b, budget.NewBaseline(r)); err != nil {
		t.Fatal(err)
	}
	back, err := budget.ParseBaseline(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if ch := budget.Compare(back, "x", r, 0).Check(); !ch.Pass {
		t.Errorf("a report compared with its own baseline: %+v", ch)
	}
	for _, tt := range []struct{ src, want string }{
		{`{"version": 2, "tools_list": {}}`, "version 2; this build reads version 1"},
		{`{"version": 1}`, "no tools_list"},
		{`{"version": 1, "tools_list": {}, "extra": 1}`, `unknown field "extra"`},
		{`{"version": 1, "tools_list": {}} {}`, "content after the top-level object"},
	} {
		if _, err := budget.ParseBaseline([]byte(tt.src)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseBaseline(%s) = %v, want %q", tt.src, err, tt.want)
		}
	}
}

// The baseline parser never panics, and what it accepts can be compared.
func FuzzParseBaseline(f *testing.F) {
	f.Add([]byte(`{"version": 1, "tokenizer": "x", "tools_list": {"bytes": 3, "tools": [{"name": "a", "bytes": 3}]}, "results": [{"seq": 1, "tool": "a"}]}`))
	f.Add([]byte(`{"version": 1, "tools_list": {"resource_templates": {"count": 1}}}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		b, err := budget.ParseBaseline(src)
		if err != nil {
			return
		}
		budget.Compare(b, "fuzz", &budget.Report{ToolsList: &budget.Footprint{}}, 0).Check()
		budget.Compare(&budget.Baseline{ToolsList: &budget.Footprint{}}, "fuzz", &budget.Report{ToolsList: b.ToolsList, Results: b.Results}, 1.5).Check()
	})
}
