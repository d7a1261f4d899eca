package budget_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/budget"
)

func text(s string) []mcp.Content { return []mcp.Content{&mcp.TextContent{Text: s}} }

// resultServer answers with fixed sizes and handles so every measurement of
// the runner can be worked out by hand.
func resultServer(t *testing.T) *mcp.ClientSession {
	s := healthy()
	s.answers["query_records"] = func(args map[string]any) *mcp.CallToolResult {
		if args["cursor"] == "c2 /x" {
			return &mcp.CallToolResult{Content: text("page 2 of s: last page.")}
		}
		return &mcp.CallToolResult{
			Content:           text(`page 1 of s: has_more=true. next_cursor="c2 /x" next_changes_since=ch9.` + "\nrecord[0] é"),
			StructuredContent: map[string]any{"data": map[string]any{"n": 1}},
		}
	}
	s.answers["search"] = func(map[string]any) *mcp.CallToolResult {
		return &mcp.CallToolResult{IsError: true, Content: text("invalid_arguments: q is required\nnext: pass q")}
	}
	s.answers["fetch"] = func(args map[string]any) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: text(strings.Repeat("x", 300) + " " + args["id"].(string))}
	}
	s.answers["schema"] = func(map[string]any) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "streams: s first_fetch_id=conn/s:r1, more"},
			&mcp.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"},
		}}
	}
	return s.connect(t)
}

const resultScenario = `# sizes
query_records {"stream": "s"}
query_records {"stream": "s", "cursor": "$next_cursor"}
fetch {"id": "$first_fetch_id"}
schema {}
fetch {"id": "$first_fetch_id and $$5"}
search {"q": "x"}
resources/read pdpp://stream/s
aggregate {"stream": "s", "since": "$next_changes_since"}
`

func TestRunScenario(t *testing.T) {
	sc, err := budget.ParseScenario("sizes", []byte(resultScenario))
	if err != nil {
		t.Fatal(err)
	}
	calls, err := budget.RunScenario(t.Context(), resultServer(t), sc, words{})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Line       int
		Label      string
		Args       string
		Text       budget.TextSize
		NonText    int
		Structured int
		IsError    bool
		ErrorLine  string
		Error      string
	}
	var got []row
	for _, c := range calls {
		got = append(got, row{c.Line, c.Label(), string(c.Arguments), c.Text, c.NonText, c.Structured.Bytes, c.IsError, c.ErrorLine, c.Error})
	}
	page1 := `page 1 of s: has_more=true. next_cursor="c2 /x" next_changes_since=ch9.` + "\nrecord[0] é"
	want := []row{
		{Line: 2, Label: "query_records", Args: `{"stream":"s"}`, Text: budget.TextSize{Bytes: len(page1), Chars: len(page1) - 1, Tokens: 10}, Structured: len(`{"data":{"n":1}}`)},
		{Line: 3, Label: "query_records", Args: `{"cursor":"c2 /x","stream":"s"}`, Text: budget.TextSize{Bytes: 23, Chars: 23, Tokens: 6}},
		{Line: 4, Label: "fetch", Error: "$first_fetch_id is not set: no earlier result's text carried first_fetch_id"},
		{Line: 5, Label: "schema", Args: `{}`, Text: budget.TextSize{Bytes: 41, Chars: 41, Tokens: 4}, NonText: 1},
		{Line: 6, Label: "fetch", Args: `{"id":"conn/s:r1 and $5"}`, Text: budget.TextSize{Bytes: 300 + 1 + 16, Chars: 317, Tokens: 4}},
		{Line: 7, Label: "search", Args: `{"q":"x"}`, Text: budget.TextSize{Bytes: 45, Chars: 45, Tokens: 7}, IsError: true, ErrorLine: "invalid_arguments: q is required"},
		{Line: 8, Label: "resources/read", Error: `calling "resources/read": Resource not found`},
		{Line: 9, Label: "aggregate", Args: `{"since":"ch9","stream":"s"}`, Text: budget.TextSize{Bytes: 12, Chars: 12, Tokens: 2}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestRunScenarioStopsWhenCancelled(t *testing.T) {
	sc, err := budget.ParseScenario("x", []byte("schema {}\nschema {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cs := resultServer(t)
	cancel()
	calls, err := budget.RunScenario(ctx, cs, sc, words{})
	if err == nil || len(calls) != 0 || !strings.Contains(err.Error(), "x line 1") {
		t.Errorf("calls %v, error %v", calls, err)
	}
}

func TestCheckResults(t *testing.T) {
	calls := []budget.Call{
		{Seq: 1, Line: 3, Method: budget.StepTool, Tool: "search", Text: budget.TextSize{Bytes: 1700, Chars: 1600}, Structured: budget.TextSize{Bytes: 9000}},
		{Seq: 2, Line: 4, Method: budget.StepTool, Tool: "search", Text: budget.TextSize{Bytes: 1900, Chars: 1900}},
		{Seq: 3, Line: 5, Method: budget.StepTool, Tool: "aggregate", Text: budget.TextSize{Bytes: 500, Chars: 401}},
		{Seq: 4, Line: 6, Method: budget.StepTool, Tool: "fetch", Error: "$first_fetch_id is not set"},
		{Seq: 5, Line: 7, Method: budget.StepTool, Tool: "schema", IsError: true, ErrorLine: "invalid_arguments: stream is not granted", Text: budget.TextSize{Bytes: 10}},
		{Seq: 6, Line: 8, Method: budget.StepRead, URI: "pdpp://stream/s", Text: budget.TextSize{Bytes: 10}},
	}
	l := testLimits()
	l.Results = map[string]budget.ResultLimits{
		"search":    {TextMaxBytes: 1800, StructuredMaxBytes: 10000},
		"aggregate": {TextMaxChars: 400},
		"schema":    {TextMaxBytes: 100},
	}
	type row struct {
		Name string
		Pass bool
		Msg  string
	}
	var got []row
	for _, c := range budget.CheckResults(calls, l, false) {
		msg := c.Message
		if len(c.Findings) > 0 {
			msg += ": " + strings.Join(c.Findings, "; ")
		}
		got = append(got, row{c.Name, c.Pass, msg})
	}
	want := []row{
		{"result[1].search.text_bytes", true, ""},
		{"result[1].search.structured_bytes", true, ""},
		{"result[2].search.text_bytes", false, "scenario line 4 (search) content[] text: 1,900 bytes, 100 over the budget of 1,800"},
		{"result[2].search.structured_bytes", true, ""},
		{"result[3].aggregate.text_chars", false, "scenario line 5 (aggregate) content[] text: 401 chars, 1 over the budget of 400"},
		{"result[4].fetch.call", false, "scenario line 6 (fetch) produced no result: $first_fetch_id is not set"},
		{"result[5].schema.call", false, "scenario line 7 (schema) returned an error result (--allow-errors measures it without failing): invalid_arguments: stream is not granted"},
		{"result[5].schema.text_bytes", true, ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("checks (-want +got):\n%s", diff)
	}

	var allowed []string
	for _, c := range budget.CheckResults(calls, l, true) {
		allowed = append(allowed, c.Name)
	}
	if strings.Contains(strings.Join(allowed, " "), "result[5].schema.call") {
		t.Errorf("allowErrors still checks the error result: %v", allowed)
	}
}

// A call's JSON is part of --json output: zero and empty members are left
// out except the sizes, which are always there.
func TestCallJSON(t *testing.T) {
	c := budget.Call{Seq: 1, Line: 2, Method: budget.StepTool, Tool: "fetch", Arguments: json.RawMessage(`{"id":"a"}`), Text: budget.TextSize{Bytes: 3, Chars: 3, Tokens: 1}}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"seq":1,"line":2,"method":"tools/call","tool":"fetch","arguments":{"id":"a"},"text":{"bytes":3,"chars":3,"tokens":1},"structured":{"bytes":0,"chars":0,"tokens":0}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}
