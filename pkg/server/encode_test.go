package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// TestEncodeToolResultMatchesSDK: the hand-written encoding of a tool
// result is byte for byte the SDK's.
func TestEncodeToolResultMatchesSDK(t *testing.T) {
	sc := func(v any) json.RawMessage {
		b, err := json.Marshal(v) // as the guard encodes it
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	text := func(s ...string) []mcp.Content {
		var c []mcp.Content
		for _, x := range s {
			c = append(c, &mcp.TextContent{Text: x})
		}
		return c
	}
	size := int64(1 << 40)
	tricky := "a\"b\\c\n\r\t\b\f\x00\x1f\x7f <&> é 😀 \u2028\u2029 \xff\xfe end"
	for name, r := range map[string]*mcp.CallToolResult{
		"empty content":      {Content: []mcp.Content{}},
		"nil content":        {},
		"text":               {Content: text("hello")},
		"tricky text":        {Content: text(tricky, "")},
		"structured":         {Content: text("t"), StructuredContent: sc(map[string]any{"data": []any{1, "<b>", nil, tricky}, "provider_url": "http://x"})},
		"error":              {Content: text("error code=x"), IsError: true},
		"meta":               {Meta: mcp.Meta{mcp.MetaKeyServerInfo: &mcp.Implementation{Name: "p<>", Version: "1"}}, Content: text("m")},
		"not encoded yet":    {Content: text("t"), StructuredContent: map[string]any{"a": "<"}},
		"annotated":          {Content: []mcp.Content{&mcp.TextContent{Text: "a", Annotations: &mcp.Annotations{Priority: 1}}}},
		"image":              {Content: []mcp.Content{&mcp.ImageContent{Data: []byte{1, 2, 0xff, 0xfe}, MIMEType: "image/png"}}},
		"image without data": {Content: []mcp.Content{&mcp.ImageContent{MIMEType: ""}}},
		"image with meta":    {Content: []mcp.Content{&mcp.ImageContent{Data: []byte{1}, MIMEType: "image/gif", Meta: mcp.Meta{"k": "v"}}}},
		"links": {Content: append(text("t"),
			&mcp.ResourceLink{URI: "pdpp://record/c/s/<r>&", Name: tricky, MIMEType: "application/json"},
			&mcp.ResourceLink{URI: "pdpp://blob/c/b", Name: "b", Title: "T", Description: "d ", MIMEType: "image/png", Size: &size},
			&mcp.ResourceLink{},
			&mcp.ResourceLink{URI: "u", Size: new(int64)},
		), StructuredContent: sc(map[string]any{"k": 1})},
		"link with icons":       {Content: []mcp.Content{&mcp.ResourceLink{URI: "u", Icons: []mcp.Icon{{Source: "data:,"}}}}},
		"link with annotations": {Content: []mcp.Content{&mcp.ResourceLink{URI: "u", Annotations: &mcp.Annotations{Priority: 0.5}}}},
		"encoded by a tool":     {Content: text("t"), StructuredContent: json.RawMessage(`{"data":{"a":"\u003c"},"provider_url":"x"}`)},
		"request state":         {Content: text("t"), RequestState: "s"},
		"long text":             {Content: text(strings.Repeat("record <x> é\n", 2000))},
		"structured and meta":   {Meta: mcp.Meta{"k": 1}, Content: text("t"), StructuredContent: sc([]int{1}), IsError: true},
	} {
		want, err := jsonw.MarshalNoEscape(r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := EncodeToolResult(r)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s:\n got %.400s\nwant %.400s", name, got, want)
		}
	}
}

// TestSelfEncodedAnswersMatchSDK sends the same calls to a stdio server
// whose tool results leave the guard with their own encoding and to one
// whose results the SDK encodes, and requires identical answer lines.
func TestSelfEncodedAnswersMatchSDK(t *testing.T) {
	calls := []string{
		`{"name":"schema","arguments":{}}`,
		`{"name":"query_records","arguments":{"stream":"messages","limit":20}}`,
		`{"name":"search","arguments":{"q":"<b>&</b> Lisbon"}}`,
		`{"name":"fetch","arguments":{"id":"cin_gmail_personal/messages:p_msg_003"}}`,
		`{"name":"aggregate","arguments":{"stream":"messages","metric":"count","group_by":"has_attachments"}}`,
		`{"name":"read_record_field","arguments":{"id":"cin_gmail_personal/message_bodies:p_msg_002_body","field_path":"body_text"}}`,
		`{"name":"aggregate","arguments":{}}`,
		`{"name":"query_records","arguments":{"stream":"no_such"}}`,
	}
	answers := func(on bool) []string {
		selfEncode = on
		defer func() { selfEncode = true }()
		s := startStdio(t, context.Background(), StdioOptions{})
		s.initialize("2025-11-25")
		var out []string
		for i, c := range calls {
			s.send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"tools/call","params":` + c + "}\n")
			// Each run has its own double, which names each answer with
			// its own request id.
			a := rsRequestIDs.ReplaceAllString(s.recv(), "req_<rs>")
			out = append(out, loopbackOrigin.ReplaceAllString(a, "http://rs.test"))
		}
		return out
	}
	sdk, self := answers(false), answers(true)
	for i := range calls {
		if self[i] != sdk[i] {
			t.Errorf("%s:\nself-encoded %s\nSDK          %s", calls[i], self[i], sdk[i])
		}
		if !strings.Contains(self[i], `"result":{"content":[`) {
			t.Errorf("%s: not a tool result: %.300s", calls[i], self[i])
		}
	}
}

var (
	rsRequestIDs   = regexp.MustCompile(`req_[0-9a-f]{16}`)
	loopbackOrigin = regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+`)
)

// TestStdioDirectMatchesSDK sends the same lines to a stdio server that
// answers plain tool calls directly and to one that hands every request to
// the SDK, and requires identical answers; the direct path must have
// answered exactly the calls marked direct.
func TestStdioDirectMatchesSDK(t *testing.T) {
	held := errors.New("held: the start-up check has not finished")
	cases := []struct {
		name, params string
		direct       bool
	}{
		{"schema", `{"name":"schema","arguments":{}}`, true},
		{"query_records", `{"name":"query_records","arguments":{"stream":"messages","limit":20}}`, true},
		{"search with html", `{"name":"search","arguments":{"q":"<b>&</b> Lisbon"}}`, true},
		{"fetch", `{"name":"fetch","arguments":{"id":"cin_gmail_personal/messages:p_msg_003"}}`, true},
		{"aggregate", `{"arguments":{"stream":"messages","metric":"count","group_by":"has_attachments"},"name":"aggregate"}`, true},
		{"read_record_field", `{"name":"read_record_field","arguments":{"id":"cin_gmail_personal/message_bodies:p_msg_002_body","field_path":"body_text"}}`, true},
		{"tool error", `{"name":"aggregate","arguments":{}}`, true},
		{"no arguments", `{"name":"schema"}`, true},
		{"held", `{"name":"schema","arguments":{"stream":"held"}}`, true},
		{"unknown tool", `{"name":"nope","arguments":{}}`, false},
		{"_meta", `{"name":"schema","arguments":{},"_meta":{"progressToken":1}}`, false},
		{"arguments null", `{"name":"schema","arguments":null}`, false},
		{"escaped name", `{"name":"sch\u0065ma","arguments":{}}`, false},
		{"duplicate name", `{"name":"schema","name":"search","arguments":{}}`, false},
		{"extra key", `{"name":"schema","arguments":{},"x":1}`, false},
	}
	run := func(direct bool) ([]string, uint64) {
		c, d := newTestRS(t, rs.Options{})
		srv, dir := NewWithDirect(Options{RS: c, ProviderURL: d.URL(), Name: "pdpp-test", Version: "1.2.3"})
		var o StdioOptions
		if direct {
			o.Direct = dir
		}
		// Hold refuses the "held" call, so the error answer of a
		// middleware RunStdio adds is compared too.
		o.Hold = func(ctx context.Context) error {
			if heldCall.Load() {
				return held
			}
			return nil
		}
		s := runStdio(t, context.Background(), srv, o)
		s.initialize("2025-11-25")
		var out []string
		for i, tc := range cases {
			heldCall.Store(tc.name == "held")
			before := dir.calls.Load()
			s.send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"tools/call","params":` + tc.params + "}\n")
			a := rsRequestIDs.ReplaceAllString(s.recv(), "req_<rs>")
			if answered := dir.calls.Load() > before; direct && answered != tc.direct {
				t.Errorf("%s: answered by the direct path: %v, want %v", tc.name, answered, tc.direct)
			}
			if tc.name == "held" && !strings.Contains(a, held.Error()) {
				t.Errorf("held: %s", a)
			}
			out = append(out, loopbackOrigin.ReplaceAllString(a, "http://rs.test"))
		}
		heldCall.Store(false)
		return out, dir.calls.Load()
	}
	sdk, sdkCalls := run(false)
	direct, directCalls := run(true)
	if sdkCalls != 0 {
		t.Errorf("without StdioOptions.Direct the direct path answered %d calls", sdkCalls)
	}
	want := 0
	for i, tc := range cases {
		if tc.direct {
			want++
		}
		if direct[i] != sdk[i] {
			t.Errorf("%s:\ndirect %.800s\nSDK    %.800s", tc.name, direct[i], sdk[i])
		}
	}
	if directCalls != uint64(want) {
		t.Errorf("the direct path answered %d calls, want %d", directCalls, want)
	}
}

var heldCall atomic.Bool

// TestToolAnswersEncodedByHand: the answers the tools give, links to
// records and blobs included, leave the guard with their wire form written
// by appendToolResult, not by the SDK's encoder (which scans a page of
// records twice more). A new content shape a tool starts sending fails here
// until appendToolResult writes it.
func TestToolAnswersEncodedByHand(t *testing.T) {
	c, d := newTestRS(t, rs.Options{})
	_, dir := NewWithDirect(Options{RS: c, ProviderURL: d.URL()})
	for _, rev := range []string{"2025-03-26", "2025-11-25", "2026-07-28"} {
		for _, tc := range []struct{ name, args string }{
			{"schema", `{}`},
			{"schema", `{"stream":"messages"}`},
			{"query_records", `{"stream":"messages","limit":25}`},
			{"search", `{"q":"Lisbon"}`},
			{"fetch", `{"id":"cin_gmail_personal/messages:p_msg_003"}`},
			{"aggregate", `{"stream":"messages","metric":"count","group_by":"has_attachments"}`},
			{"read_record_field", `{"id":"cin_gmail_personal/message_bodies:p_msg_002_body","field_path":"body_text"}`},
			{"query_records", `{"stream":"no_such"}`},
			{"fetch", `{"id":"pdpp://blob/cin_gmail_personal/blob_sha256_c514bff25a8680e2bda41ec474006756282def0bcc3690db3cf55dad1c4837e6"}`},
		} {
			h := http.Header{}
			h.Set("MCP-Protocol-Version", rev)
			req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: tc.name, Arguments: json.RawMessage(tc.args)}, Extra: &mcp.RequestExtra{Header: h}}
			res, wire, err := dir.Call(t.Context(), req)
			if err != nil {
				t.Fatalf("%s %s %s: %v", rev, tc.name, tc.args, err)
			}
			if wire == nil {
				var kinds []string
				for _, c := range res.Content {
					kinds = append(kinds, fmt.Sprintf("%T", c))
				}
				t.Errorf("%s %s %s: encoded by the SDK (content %v, structuredContent %T)", rev, tc.name, tc.args, kinds, res.StructuredContent)
				continue
			}
			if tc.name == "fetch" && res.IsError {
				t.Errorf("%s %s: %s", rev, tc.args, wire)
			}
			if want, _ := jsonw.MarshalNoEscape(res); string(wire) != string(want) {
				t.Errorf("%s %s: wire form differs from the SDK's:\n got %.300s\nwant %.300s", rev, tc.name, wire, want)
			}
		}
	}
}
