package budget_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/budget"
	"github.com/pdpp-mcp/pdpp-mcp/internal/goldenfile"
	"github.com/pdpp-mcp/pdpp-mcp/internal/probe"
)

// words counts whitespace-separated words: a stand-in tokenizer whose counts
// a test can work out by hand.
type words struct{}

func (words) Count(s string) (int, error) { return len(strings.Fields(s)), nil }
func (words) Name() string                { return "words (test)" }

// synthetic is a server definition a test can bend: instructions and tool
// definitions, each tool answering with the text and structured content
// given for it.
type synthetic struct {
	instructions string
	tools        []*mcp.Tool
	answers      map[string]func(args map[string]any) *mcp.CallToolResult
}

const strictInput = `{"type": "object", "properties": {%s}, "additionalProperties": false}`

func input(props string) json.RawMessage {
	return json.RawMessage(strings.Replace(strictInput, "%s", props, 1))
}

const objectOutput = `{"type": "object", "properties": {"data": {"type": "object"}}, "required": ["data"]}`

// healthy is a six-tool surface that passes every check under testLimits.
func healthy() *synthetic {
	conn := `"connection_id": {"type": "string", "description": "Source connection."}`
	mk := func(name, desc, props string) *mcp.Tool {
		return &mcp.Tool{Name: name, Description: desc, InputSchema: input(props), OutputSchema: json.RawMessage(objectOutput)}
	}
	return &synthetic{
		instructions: "Read-only PDPP tools. Start with schema; pass connection_id when a stream has several sources; " +
			`filter is a typed object such as {"field": value}; keep pages small with limit and continue with cursor.`,
		tools: []*mcp.Tool{
			mk("schema", "Describe granted streams (GET /v1/schema). Read-only.", `"stream": {"type": "string"}, `+conn),
			mk("query_records", "List records of one stream (GET /v1/streams/{stream}/records). Read-only.",
				`"stream": {"type": "string"}, "limit": {"type": "integer"}, "filter": {"type": "object"}, `+conn),
			mk("aggregate", "Count or total records (GET /v1/streams/{stream}/aggregate). Read-only.",
				`"stream": {"type": "string"}, "metric": {"type": "string", "enum": ["count", "sum"]}, `+conn),
			mk("search", "Find records by text (GET /v1/search). Read-only.", `"q": {"type": "string"}, `+conn),
			mk("fetch", "Read one record by id (GET /v1/streams/{stream}/records/{id}). Read-only.", `"id": {"type": "string"}, `+conn),
			mk("read_record_field", "Read a window of one field (GET .../field-window). Read-only.", `"id": {"type": "string"}, `+conn),
		},
		answers: map[string]func(map[string]any) *mcp.CallToolResult{},
	}
}

func (s *synthetic) tool(name string) *mcp.Tool {
	for _, t := range s.tools {
		if t.Name == name {
			return t
		}
	}
	panic("no tool " + name)
}

// connect serves the synthetic definition and returns a client session and
// the recorder of its traffic.
func (s *synthetic) connect(t *testing.T) (*mcp.ClientSession, *probe.Wire) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "synthetic", Version: "v0"}, &mcp.ServerOptions{Instructions: s.instructions})
	for _, tool := range s.tools {
		answer := s.answers[tool.Name]
		srv.AddTool(tool, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args map[string]any
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			if answer == nil {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: tool.Name + " ok"}}}, nil
			}
			return answer(args), nil
		})
	}
	cs, wire, stop, err := budget.Connect(t.Context(), srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return cs, wire
}

func testLimits() *budget.Limits {
	l := &budget.Limits{
		PDPP: true,
		ToolsList: budget.ToolsListLimits{
			MaxBytes:            4000,
			DescriptionMaxBytes: 200,
			ToolMaxBytes:        map[string]int{},
		},
		Instructions: budget.InstructionsLimits{MaxBytes: 600, HeadChars: 512},
		Prose:        budget.ProseLimits{MinChars: 60},
	}
	for _, name := range budget.Surface() {
		l.ToolsList.ToolMaxBytes[name] = 900
	}
	return l
}

// surfaceChecks measures and checks a synthetic surface.
func surfaceChecks(t *testing.T, s *synthetic, l *budget.Limits) []budget.Check {
	t.Helper()
	cs, wire := s.connect(t)
	st, err := budget.ReadSurface(t.Context(), cs, wire, 0)
	if err != nil {
		t.Fatal(err)
	}
	fp, err := budget.Measure(st, words{})
	if err != nil {
		t.Fatal(err)
	}
	if l.PDPP {
		fp.PDPPOrder()
	}
	return budget.CheckSurface(st, fp, l)
}

// failedNames returns the names of the failed checks.
func failedNames(checks []budget.Check) []string {
	var out []string
	for _, c := range checks {
		if !c.Pass {
			out = append(out, c.Name)
		}
	}
	return out
}

// find returns the check of that name, the first failed one where several
// share it (a limit applied to each tool or call).
func find(t *testing.T, checks []budget.Check, name string) budget.Check {
	t.Helper()
	var found []budget.Check
	for _, c := range checks {
		if c.Name == name {
			found = append(found, c)
		}
	}
	for _, c := range found {
		if !c.Pass {
			return c
		}
	}
	if len(found) > 0 {
		return found[0]
	}
	t.Fatalf("no check %q", name)
	return budget.Check{}
}

// golden compares got with testdata/<name> (see internal/goldenfile).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got)
}
