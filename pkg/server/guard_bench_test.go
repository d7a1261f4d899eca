package server

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
)

// BenchmarkGuard is the guard's own cost around a tool that does nothing:
// the RS lease, its release, the panic guard and the encoding, with the
// release waiting on the context (the SDK's path) or held by the
// transport (the direct paths).
func BenchmarkGuard(b *testing.B) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	next := func(context.Context) (mcp.Result, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}, StructuredContent: jsonw.Encoded(`{"data":{}}`)}, nil
	}
	for _, held := range []bool{false, true} {
		name := "context"
		if held {
			name = "held"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ctx, cancel := context.WithCancel(context.Background())
				end := func() {}
				if held {
					ctx, end = WithAnswerHold(ctx)
				}
				if _, err := guard(ctx, log, "tools/call", true, next); err != nil {
					b.Fatal(err)
				}
				end()
				cancel()
			}
		})
	}
}
