package tools_test

import (
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// The size budgets of model-visible text, measured on the demo dataset.
func TestTextBudgets(t *testing.T) {
	h := newHarness(t, harnessOptions{demo: true})
	for _, tc := range []struct {
		name   string
		tool   string
		args   map[string]any
		budget int
		check  func(t *testing.T) // what makes the case meaningful
	}{
		{"search with 100 hits", "search", map[string]any{"q": "launch", "limit": 100}, 1800, func(t *testing.T) {
			if n := len(h.rawResults(t)); n != 100 {
				t.Errorf("%d hits; the case needs 100", n)
			}
		}},
		{"fetch of a 50,000-character record", "fetch", map[string]any{"id": dataset.DemoWorkMailConnection + "/" + dataset.DemoLongStream + ":" + dataset.DemoLongRecordKey}, 20000, nil},
		{"query_records with 100 wide records", "query_records", map[string]any{"stream": "mail_messages", "limit": 100, "connection_id": dataset.DemoWorkMailConnection}, 1800, func(t *testing.T) {
			if n := len(h.rawData(t)); n < 50000 {
				t.Errorf("the page is only %d bytes; the case needs wide records", n)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := h.call(t, tc.tool, tc.args)
			if res.IsError {
				t.Fatal(text(res))
			}
			n := len(text(res))
			t.Logf("%s: %d bytes of content text (budget %d)", tc.name, n, tc.budget)
			if n >= tc.budget {
				t.Errorf("%d bytes of text, budget %d", n, tc.budget)
			}
			if tc.check != nil {
				tc.check(t)
			}
		})
	}
}
