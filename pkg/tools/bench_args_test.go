package tools

import (
	"encoding/json"
	"testing"
)

// BenchmarkArgDecode validates and decodes the arguments of a typical call
// of each tool: work every call does before its RS request.
func BenchmarkArgDecode(b *testing.B) {
	for _, bc := range []struct {
		name string
		run  func(json.RawMessage) error
		args string
	}{
		{"query_records", func(r json.RawMessage) error { var a queryArgs; return queryRecordsTool.validate(r, &a) }, `{"stream":"messages","limit":25}`},
		{"query_records-filter", func(r json.RawMessage) error { var a queryArgs; return queryRecordsTool.validate(r, &a) },
			`{"stream":"messages","limit":25,"filter":{"received_at":{"gte":"2026-01-01"}},"fields":["subject","received_at"],"sort":"-received_at","connection_id":null}`},
		{"aggregate", func(r json.RawMessage) error { var a aggregateArgs; return aggregateTool.validate(r, &a) }, `{"stream":"messages","metric":"count","group_by":"has_attachments"}`},
		{"fetch", func(r json.RawMessage) error { var a fetchArgs; return fetchTool.validate(r, &a) }, `{"id":"cin_gmail_personal/messages:p_msg_003"}`},
	} {
		raw := json.RawMessage(bc.args)
		if err := bc.run(raw); err != nil {
			b.Fatalf("%s: %v", bc.name, err)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := bc.run(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
