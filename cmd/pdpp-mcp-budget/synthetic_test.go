package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/server"
)

// syntheticServer stands in for server.New in tests that pin exact output:
// six small, healthy tools with fixed answers, so the numbers in the golden
// reports change only when the command or package budget does, never when a
// tool description is edited.
func syntheticServer(server.Options) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "synthetic", Version: "v0"}, &mcp.ServerOptions{
		Instructions: "Read-only PDPP tools. Start with schema; pass connection_id when a stream has several sources; " +
			`filter is a typed object such as {"field": value}; keep pages small with limit and continue with cursor.`,
	})
	answers := map[string]string{
		"schema":            "schema: streams=messages|events connections=1",
		"query_records":     `records from stream "messages": 2 record(s). has_more=true. next_cursor="c2".` + "\nrecord[0] id=m1\nrecord[1] id=m2",
		"aggregate":         "count(messages) = 42.",
		"search":            "search: 1 hit(s). first_fetch_id=conn/messages:m1",
		"fetch":             `{"id":"conn/messages:m1","title":"Hello","text":"Hello there.","url":"https://rs.test/m1","metadata":{}}`,
		"read_record_field": "record=conn/messages:m1 field=body chars=0..12 total=12\nHello there.",
	}
	for _, name := range []string{"schema", "query_records", "aggregate", "search", "fetch", "read_record_field"} {
		t := &mcp.Tool{
			Name:         name,
			Description:  fmt.Sprintf("Synthetic %s (GET /v1/%s). Read-only.", name, name),
			InputSchema:  json.RawMessage(`{"type": "object", "properties": {"stream": {"type": "string"}, "id": {"type": "string"}, "cursor": {"type": "string"}}, "additionalProperties": false}`),
			OutputSchema: json.RawMessage(`{"type": "object", "properties": {"data": {"type": "object"}}}`),
		}
		text := answers[name]
		s.AddTool(t, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: text}},
				StructuredContent: map[string]any{"data": map[string]any{"tool": name}},
			}, nil
		})
	}
	return s
}
