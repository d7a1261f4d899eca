package budget_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/budget"
	"github.com/pdpp-mcp/pdpp-mcp/internal/probe"
)

func text(s string) []mcp.Content { return []mcp.Content{&mcp.TextContent{Text: s}} }

// resultServer answers with fixed sizes and handles so every measurement of
// the runner can be worked out by hand.
func resultServer(t *testing.T) (*mcp.ClientSession, *probe.Wire) {
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
	s.answers["aggregate"] = func(args map[string]any) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: text("aggregate ok"), IsError: args["stream"] == "fail"}
	}
	s.answers["search"] = func(map[string]any) *mcp.CallToolResult {
		return &mcp.CallToolResult{IsError: true, Content: text("invalid_arguments: q is required\nnext: pass q")}
	}
	s.answers["fetch"] = func(args map[string]any) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: text(strings.Repeat("x", 300) + " " + fmt.Sprint(args["id"]))}
	}
	s.answers["schema"] = func(map[string]any) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "streams: s first_fetch_id=conn/s:r1 more"},
			&mcp.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"},
		}}
	}
	return s.connect(t)
}

const resultScenario = `# sizes
query_records {"stream": "s"}
aggregate {"stream": "s", "since": "$next_changes_since"}
query_records {"stream": "s", "cursor": "$next_cursor"}
schema {}
fetch {"id": "$first_fetch_id"}
fetch {"id": "$$5"}
search {"q": "x"}
!search {"q": "y"}
!aggregate {"stream": "s"}
resources/read pdpp://stream/s
`

func TestRunScenario(t *testing.T) {
	sc, err := budget.ParseScenario("sizes", []byte(resultScenario))
	if err != nil {
		t.Fatal(err)
	}
	cs, wire := resultServer(t)
	calls, err := budget.RunScenario(t.Context(), &probe.Runner{Session: cs, Wire: wire}, sc, words{})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Source     string
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
		got = append(got, row{c.Source, c.Label(), string(c.Arguments), c.Text, c.NonText, c.Structured.Bytes, c.IsError, c.ErrorLine, c.Error})
	}
	page1 := `page 1 of s: has_more=true. next_cursor="c2 /x" next_changes_since=ch9.` + "\nrecord[0] é"
	searchErr := budget.TextSize{Bytes: 45, Chars: 45, Tokens: 7}
	want := []row{
		{Source: "sizes:2", Label: "query_records", Args: `{"stream":"s"}`, Text: budget.TextSize{Bytes: len(page1), Chars: len(page1) - 1, Tokens: 10}, Structured: len(`{"data":{"n":1}}`)},
		{Source: "sizes:3", Label: "aggregate", Args: `{"stream":"s","since":"ch9"}`, Text: budget.TextSize{Bytes: 12, Chars: 12, Tokens: 2}},
		{Source: "sizes:4", Label: "query_records", Args: `{"stream":"s","cursor":"c2 /x"}`, Text: budget.TextSize{Bytes: 23, Chars: 23, Tokens: 6}},
		{Source: "sizes:5", Label: "schema", Args: `{}`, Text: budget.TextSize{Bytes: 40, Chars: 40, Tokens: 4}, NonText: 1},
		{Source: "sizes:6", Label: "fetch", Args: `{"id":"conn/s:r1"}`, Text: budget.TextSize{Bytes: 300 + 1 + 9, Chars: 310, Tokens: 2}},
		{Source: "sizes:7", Label: "fetch", Args: `{"id":"$5"}`, Text: budget.TextSize{Bytes: 300 + 1 + 2, Chars: 303, Tokens: 2}},
		{Source: "sizes:8", Label: "search", Args: `{"q":"x"}`, Text: searchErr, IsError: true, ErrorLine: "invalid_arguments: q is required"},
		{Source: "sizes:9", Label: "search", Args: `{"q":"y"}`, Text: searchErr, IsError: true, ErrorLine: "invalid_arguments: q is required"},
		{Source: "sizes:10", Label: "aggregate", Args: `{"stream":"s"}`, Text: budget.TextSize{Bytes: 12, Chars: 12, Tokens: 2}},
		{Source: "sizes:11", Label: "resources/read", Error: `resources/read pdpp://stream/s: calling "resources/read": Resource not found`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}

	// Checks: the unmarked error result and the ! call that succeeded fail,
	// the ! call that failed passes; the read produced nothing.
	var failed []string
	for _, c := range budget.CheckResults(calls, testLimits(), false) {
		if !c.Pass {
			failed = append(failed, c.Name)
		}
	}
	if diff := cmp.Diff([]string{"result[7].search.call", "result[9].aggregate.call", "result[10].resources/read.call"}, failed); diff != "" {
		t.Errorf("failed checks (-want +got):\n%s", diff)
	}
}

// A variable no earlier text provided stops the run: the later calls are
// listed as not run rather than left out.
func TestRunScenarioMissingVariable(t *testing.T) {
	sc, err := budget.ParseScenario("v", []byte("schema {}\nfetch {\"id\": \"$next_read_args\"}\naggregate {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	cs, wire := resultServer(t)
	calls, err := budget.RunScenario(t.Context(), &probe.Runner{Session: cs, Wire: wire}, sc, words{})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 3 || calls[0].Error != "" ||
		!strings.Contains(calls[1].Error, "$next_read_args is not available") ||
		calls[2].Error != "not run: the scenario stopped at call 2 (v:2), whose variable had no value" {
		t.Errorf("calls %+v", calls)
	}
}

func TestRunScenarioStopsWhenCancelled(t *testing.T) {
	sc, err := budget.ParseScenario("x", []byte("schema {}\nschema {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cs, wire := resultServer(t)
	cancel()
	calls, err := budget.RunScenario(ctx, &probe.Runner{Session: cs, Wire: wire}, sc, words{})
	if !errors.Is(err, context.Canceled) || len(calls) > 1 {
		t.Errorf("calls %v, error %v", calls, err)
	}
}

func TestCheckResults(t *testing.T) {
	calls := []budget.Call{
		{Seq: 1, Source: "c:3", Method: "tools/call", Tool: "search", Text: budget.TextSize{Bytes: 1700, Chars: 1600}, Structured: budget.TextSize{Bytes: 9000}},
		{Seq: 2, Source: "c:4", Method: "tools/call", Tool: "search", Text: budget.TextSize{Bytes: 1900, Chars: 1900}},
		{Seq: 3, Source: "c:5", Method: "tools/call", Tool: "aggregate", Text: budget.TextSize{Bytes: 500, Chars: 401}},
		{Seq: 4, Source: "c:6", Method: "tools/call", Tool: "fetch", Error: "$first_fetch_id is not set"},
		{Seq: 5, Source: "c:7", Method: "tools/call", Tool: "schema", IsError: true, ErrorLine: "invalid_arguments: stream is not granted", Text: budget.TextSize{Bytes: 10}},
		{Seq: 6, Source: "c:8", Method: "resources/read", URI: "pdpp://stream/s", Text: budget.TextSize{Bytes: 10}},
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
		name := c.Name
		if c.Subject != "" {
			name += " (" + c.Subject + ")"
		}
		got = append(got, row{name, c.Pass, msg})
	}
	want := []row{
		{"results.search.text_max_bytes (call 1)", true, ""},
		{"results.search.structured_max_bytes (call 1)", true, ""},
		{"results.search.text_max_bytes (call 2)", false, "c:4 (search) content[] text: 1,900 bytes, 100 over the budget of 1,800"},
		{"results.search.structured_max_bytes (call 2)", true, ""},
		{"results.aggregate.text_max_chars (call 3)", false, "c:5 (aggregate) content[] text: 401 chars, 1 over the budget of 400"},
		{"result[4].fetch.call", false, "c:6 (fetch) produced no result: $first_fetch_id is not set"},
		{"result[5].schema.call", false, "c:7 (schema) returned an error result (mark the line with ! when that is the point, or pass --allow-errors): invalid_arguments: stream is not granted"},
		{"results.schema.text_max_bytes (call 5)", true, ""},
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
	c := budget.Call{Seq: 1, Source: "s:2", Method: "tools/call", Tool: "fetch", Arguments: json.RawMessage(`{"id":"a"}`), Text: budget.TextSize{Bytes: 3, Chars: 3, Tokens: 1}}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"seq":1,"source":"s:2","method":"tools/call","tool":"fetch","arguments":{"id":"a"},"text":{"bytes":3,"chars":3,"tokens":1},"structured":{"bytes":0,"chars":0,"tokens":0}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}
