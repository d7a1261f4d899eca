package server

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// BenchmarkToolCall measures what the MCP layer adds to an RS read: each
// iteration makes the RS GET a tool call maps to, once directly with a
// keep-alive client and once as the tool call (in-memory MCP client → server
// → tool → RS client → pdpptest over loopback). Per tool it reports the p50
// of both and their difference (added-p50-µs: everything between the MCP
// client and the RS, the client's own JSON decoding included), and the
// server's share alone (server-added-p50-µs: the server's handling of
// tools/call, measured by a middleware, minus the direct GET):
//
//	go test -run '^$' -bench ToolCall ./pkg/server
//
// The "rejected" case is a call refused by argument validation: the MCP
// round trip with no RS request, the floor under every other number.
func BenchmarkToolCall(b *testing.B) {
	srv := pdpptest.New(b, pdpptest.Options{})
	token := func() string { return srv.Token(pdpptest.TokenClient) }
	served, err := rs.New(rs.Options{BaseURL: srv.URL(), Token: token})
	if err != nil {
		b.Fatal(err)
	}
	direct, err := rs.New(rs.Options{BaseURL: srv.URL(), Token: token})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(served.CloseIdleConnections)
	b.Cleanup(direct.CloseIdleConnections)
	s := New(Options{RS: served, ProviderURL: srv.URL()})
	var handled time.Duration // of the last tools/call; calls are sequential
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			t0 := time.Now()
			res, err := next(ctx, method, req)
			if method == "tools/call" {
				handled = time.Since(t0)
			}
			return res, err
		}
	})
	cs := connect(b, s, nil)

	for _, bc := range []struct {
		name string
		tool string
		args map[string]any
		path string
		q    rs.Query
	}{
		{"schema", "schema", map[string]any{}, "/v1/schema", rs.Query{{Key: "view", Value: "compact"}}},
		{"schema_stream", "schema", map[string]any{"stream": "messages"}, "/v1/schema",
			rs.Query{{Key: "view", Value: "compact"}, {Key: "stream", Value: "messages"}}},
		{"query_records", "query_records", map[string]any{"stream": "messages", "connection_id": "cin_gmail_work", "limit": 5},
			"/v1/streams/messages/records", rs.Query{{Key: "limit", Value: "5"}, {Key: "connection_id", Value: "cin_gmail_work"}}},
		{"query_records_fields", "query_records", map[string]any{"stream": "messages", "connection_id": "cin_gmail_work", "limit": 5, "fields": []string{"id", "subject"}},
			"/v1/streams/messages/records", rs.Query{{Key: "limit", Value: "5"}, {Key: "fields", Value: "id"}, {Key: "fields", Value: "subject"}, {Key: "connection_id", Value: "cin_gmail_work"}}},
		{"aggregate", "aggregate", map[string]any{"stream": "messages", "metric": "count", "group_by": "has_attachments"},
			"/v1/streams/messages/aggregate", rs.Query{{Key: "metric", Value: "count"}, {Key: "group_by", Value: "has_attachments"}}},
		{"search", "search", map[string]any{"q": "Lisbon"}, "/v1/search", rs.Query{{Key: "q", Value: "Lisbon"}}},
		{"fetch", "fetch", map[string]any{"id": "cin_gmail_personal/messages:p_msg_003"},
			"/v1/streams/messages/records/p_msg_003", rs.Query{{Key: "connection_id", Value: "cin_gmail_personal"}}},
		{"read_record_field", "read_record_field", map[string]any{"id": "cin_gmail_personal/message_bodies:p_msg_002_body", "field_path": "body_text"},
			"/v1/streams/message_bodies/records/p_msg_002_body/field-window", rs.Query{{Key: "connection_id", Value: "cin_gmail_personal"}, {Key: "field", Value: "body_text"}}},
		{"rejected", "query_records", map[string]any{"stream": "messages", "limit": 500}, "", nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			params := &mcp.CallToolParams{Name: bc.tool, Arguments: bc.args}
			rejected := bc.path == ""
			get := func() {
				if rejected {
					return
				}
				if _, err := direct.Get(ctx, bc.path, bc.q); err != nil {
					b.Fatal(err)
				}
			}
			call := func() {
				res, err := cs.CallTool(ctx, params)
				if err != nil || res.IsError != rejected {
					b.Fatalf("%v %v", err, res)
				}
			}
			// Warm both paths (connections, caches) before measuring.
			for range 3 {
				get()
				call()
			}
			var directs, calls, server []time.Duration
			for b.Loop() {
				t0 := time.Now()
				get()
				t1 := time.Now()
				call()
				t2 := time.Now()
				directs = append(directs, t1.Sub(t0))
				calls = append(calls, t2.Sub(t1))
				server = append(server, handled)
			}
			d, c := percentile(directs, 50), percentile(calls, 50)
			b.ReportMetric(float64(d.Microseconds()), "direct-p50-µs")
			b.ReportMetric(float64(c.Microseconds()), "tool-p50-µs")
			b.ReportMetric(float64((c - d).Microseconds()), "added-p50-µs")
			b.ReportMetric(float64((percentile(server, 50) - d).Microseconds()), "server-added-p50-µs")
		})
	}
}

func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}
