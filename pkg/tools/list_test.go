package tools_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

// listTools returns tools/list as a go-sdk client receives it.
func listTools(t *testing.T) []*mcp.Tool {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "list-test", Version: "v0"}, nil)
	tools.Register(s, &tools.Env{})
	res, err := connect(t, s).ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

// toolNames is the names tools/list holds, in its order.
func toolNames(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, tool := range listTools(t) {
		names = append(names, tool.Name)
	}
	return names
}

// tools/list holds exactly the six read tools.
func TestToolListIsTheTable(t *testing.T) {
	got := toolNames(t)
	slices.Sort(got)
	if want := []string{"aggregate", "fetch", "query_records", "read_record_field", "schema", "search"}; !slices.Equal(got, want) {
		t.Fatalf("tools/list %v, want %v", got, want)
	}
	for _, forbidden := range []string{"list_streams", "fetch_blob", "send_test_event"} {
		if slices.Contains(got, forbidden) {
			t.Errorf("%s is registered", forbidden)
		}
	}
}

func TestToolDefinitions(t *testing.T) {
	for _, tool := range listTools(t) {
		t.Run(tool.Name, func(t *testing.T) {
			a := tool.Annotations
			switch {
			case a == nil:
				t.Fatal("no annotations")
			case !a.ReadOnlyHint || !a.IdempotentHint:
				t.Errorf("readOnlyHint %v idempotentHint %v", a.ReadOnlyHint, a.IdempotentHint)
			case a.DestructiveHint == nil || *a.DestructiveHint:
				t.Error("destructiveHint is not an explicit false")
			case a.OpenWorldHint == nil || *a.OpenWorldHint:
				t.Error("openWorldHint is not an explicit false")
			}
			if tool.Title == "" || a.Title != tool.Title {
				t.Errorf("title %q, annotations.title %q", tool.Title, a.Title)
			}
			if tool.OutputSchema == nil {
				t.Error("no output schema")
			}
			d := tool.Description
			// The tool is how the model reads: a route in its description
			// reads as something else to call.
			if !strings.Contains(d, "Read-only") || strings.Contains(d, "/v1/") {
				t.Errorf("description does not say read-only, or names an RS route: %q", d)
			}
			in := tool.InputSchema.(map[string]any)
			if in["type"] != "object" || in["additionalProperties"] != false {
				t.Errorf("input schema is not a strict object: type %v additionalProperties %v", in["type"], in["additionalProperties"])
			}
			for _, k := range []string{"anyOf", "oneOf", "allOf"} {
				if _, ok := in[k]; ok {
					t.Errorf("input schema has top-level %s", k)
				}
			}
			raw, _ := json.Marshal(tool.InputSchema)
			for _, bad := range []string{`"null"`, "connector_instance_id", `"type":[`} {
				if strings.Contains(string(raw), bad) {
					t.Errorf("input schema contains %s", bad)
				}
			}
			props := in["properties"].(map[string]any)
			if c, ok := props["connection_id"].(map[string]any); !ok || c["type"] != "string" {
				t.Errorf("connection_id is not an optional string: %v", props["connection_id"])
			}
			if f, ok := props["filter"].(map[string]any); ok && f["type"] != "object" {
				t.Errorf("filter advertised as %v", f["type"])
			}
			if l, ok := props["limit"].(map[string]any); ok && (l["minimum"] != 1.0 || l["maximum"] != 100.0) {
				t.Errorf("limit bounds %v..%v", l["minimum"], l["maximum"])
			}
		})
	}
}

// Each tool's definition, as a client receives it, is pinned by a snapshot;
// UPDATE_GOLDEN=1 accepts a deliberate change.
func TestToolSnapshots(t *testing.T) {
	total := 0
	all := listTools(t)
	for _, tool := range all {
		b, err := json.MarshalIndent(tool, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		tools.Golden(t, "snapshots/"+tool.Name+".json", append(b, '\n'))
		compact, _ := json.Marshal(tool)
		t.Logf("%s: %d bytes", tool.Name, len(compact))
		total += len(compact)
	}
	// A snapshot without a registered tool is a tool that left the table.
	files, err := filepath.Glob(filepath.Join("testdata", "snapshots", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	registered := toolNames(t)
	for _, f := range files {
		if name := strings.TrimSuffix(filepath.Base(f), ".json"); !slices.Contains(registered, name) {
			t.Errorf("snapshot %s has no registered tool; delete it if the tool was removed on purpose", f)
		}
	}
	b, _ := json.Marshal(all)
	t.Logf("tools/list tools array: %d bytes for %d tools", len(b), len(all))
	// The six tools must fit 16,384 bytes (the TypeScript adapter needs 23,953).
	if len(b) > 16384 {
		t.Errorf("tools/list is %d bytes for %d tools; the six-tool budget is 16384", len(b), len(all))
	}
}
