package server

import (
	"bufio"
	"context"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// BenchmarkStdioToolCall is one tools/call line through RunStdio (line
// filter, id echo, the direct path, the tool, the RS client) against the
// double over loopback: the path a stdio client exercises, without a client
// library decoding the answer. Run it with -cpuprofile and -memprofile to
// see where a call's time and allocations go.
//
//	go test -run '^$' -bench StdioToolCall -benchmem ./pkg/server
func BenchmarkStdioToolCall(b *testing.B) {
	c, d := newTestRS(b, rs.Options{})
	s, direct := NewWithDirect(Options{RS: c, ProviderURL: d.URL()})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- RunStdio(ctx, s, inR, outW, StdioOptions{Direct: direct}); outW.Close() }()
	b.Cleanup(func() {
		inW.Close()
		cancel()
		go io.Copy(io.Discard, outR)
		<-done
	})
	out := bufio.NewReaderSize(outR, 1<<20)
	roundTrip := func(line string) string {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			b.Fatal(err)
		}
		a, err := out.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		return a
	}
	roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"0"}}}`)
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct{ name, args string }{
		{"schema", `"schema","arguments":{}`},
		{"query_records", `"query_records","arguments":{"stream":"messages","limit":25}`},
		{"aggregate", `"aggregate","arguments":{"stream":"messages","metric":"count","group_by":"has_attachments"}`},
		{"search", `"search","arguments":{"q":"Lisbon"}`},
		{"fetch", `"fetch","arguments":{"id":"cin_gmail_personal/messages:p_msg_003"}`},
		{"read_record_field", `"read_record_field","arguments":{"id":"cin_gmail_personal/message_bodies:p_msg_002_body","field_path":"body_text"}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			n, bytes := 0, 0
			call := func() {
				n++
				a := roundTrip(`{"jsonrpc":"2.0","id":` + strconv.Itoa(n) + `,"method":"tools/call","params":{"name":` + bc.args + `}}`)
				if gjson.Get(a, "result.isError").Bool() || !strings.Contains(a, `"result"`) {
					b.Fatalf("answer: %.300s", a)
				}
				bytes = len(a)
			}
			call()
			b.ResetTimer()
			for b.Loop() {
				call()
			}
			b.ReportMetric(float64(bytes), "answer-bytes")
		})
	}
}
