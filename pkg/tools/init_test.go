package tools

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestToolSchemasResolve checks every hand-written input and output schema,
// which start-up no longer resolves.
func TestToolSchemasResolve(t *testing.T) {
	for _, tl := range table {
		d := tl.definition()
		for kind, raw := range map[string]any{"input": d.InputSchema, "output": d.OutputSchema} {
			b, ok := raw.(json.RawMessage)
			if !ok {
				t.Fatalf("%s %s schema is %T, want json.RawMessage", d.Name, kind, raw)
			}
			var s jsonschema.Schema
			if err := json.Unmarshal(b, &s); err != nil {
				t.Fatalf("%s %s schema: %v", d.Name, kind, err)
			}
			if _, err := s.Resolve(nil); err != nil {
				t.Errorf("%s %s schema does not resolve: %v", d.Name, kind, err)
			}
		}
	}
}

// TestArgSpecsBuild builds every tool's argument checker, which is otherwise
// built on the tool's first call, so a schema without a rule for one of its
// arguments fails here rather than in a session.
func TestArgSpecsBuild(t *testing.T) {
	for _, l := range []*lazyArgSpec{schemaTool.args, queryRecordsTool.args, aggregateTool.args,
		searchTool.args, fetchTool.args, readFieldTool.args} {
		if s := l.get(); len(s.order) == 0 {
			t.Errorf("%s: no arguments parsed", s.tool)
		}
	}
	if len(table) != 6 {
		t.Errorf("table has %d tools; add the new one's checker above", len(table))
	}
}
