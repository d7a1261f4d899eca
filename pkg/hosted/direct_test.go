package hosted

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

// TestDirectMatchesSDK sends each request to two gateways over one double,
// one with the direct path and one without, and requires the same status,
// headers and body from both; each case also says whether the direct path
// must have answered it, so the comparison cannot pass by both gateways
// taking the SDK's way.
func TestDirectMatchesSDK(t *testing.T) {
	// The comparison below proves the direct path for one SDK version.
	if got := sdkVersion(t); got != directProvenSDK {
		t.Fatalf("go-sdk is %s, but the direct path was proven byte-identical against %s: re-run this comparison, "+
			"re-read the SDK's stateless POST handling (header, _meta and dispatch rules; listTools, readResource and its "+
			"template matching; result annotation and error statuses) for changes the cases do not cover, "+
			"then set directProvenSDK to %s", got, directProvenSDK, got)
	}
	d := pdpptest.New(t, pdpptest.Options{})
	direct := newGateway(t, gatewayOptions{double: d})
	sdk := newGateway(t, gatewayOptions{double: d, mutate: func(o *Options) { o.DisableDirectCalls = true }})
	tok := d.Token(pdpptest.TokenClient)

	call := func(name string, args any) string {
		return rpc(7, "tools/call", map[string]any{"name": name, "arguments": args})
	}
	agg := call("aggregate", map[string]any{"stream": "messages", "metric": "count"})
	v := func(ver string) map[string]string { return map[string]string{"MCP-Protocol-Version": ver} }
	const aggArgs = `{"stream":"messages","metric":"count"}`
	const meta26 = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	h26 := func(name string) map[string]string {
		return map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name}
	}
	read := func(uri string) string { return rpc(2, "resources/read", map[string]any{"uri": uri}) }
	read26h := func(uri string) map[string]string {
		return map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "resources/read", "Mcp-Name": uri}
	}
	read26 := func(uri, meta string) string {
		return `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"_meta":` + meta + `,"uri":"` + uri + `"}}`
	}
	list26 := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
	call26 := func(name, args, meta string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":` + meta + `,"name":"` + name + `","arguments":` + args + `}}`
	}
	cases := []struct {
		name   string
		r      req
		direct bool
	}{
		// Answered directly: plain tool calls, results and tool errors.
		{"aggregate 2025-11-25", req{header: v("2025-11-25"), body: agg}, true},
		{"no version header", req{body: agg}, true},
		{"2025-06-18", req{header: v("2025-06-18"), body: agg}, true},
		{"2025-03-26", req{header: v("2025-03-26"), body: agg}, true},
		{"2024-11-05", req{header: v("2024-11-05"), body: agg}, true},
		{"schema", req{body: call("schema", map[string]any{})}, true},
		{"query_records, a large answer", req{body: call("query_records", map[string]any{"stream": "messages", "limit": 50})}, true},
		{"search", req{body: call("search", map[string]any{"q": "offsite", "limit": 5})}, true},
		{"missing required argument", req{body: call("aggregate", map[string]any{})}, true},
		{"no arguments", req{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"schema"}}`}, true},
		{"unknown argument", req{body: call("aggregate", map[string]any{"stream": "messages", "metric": "count", "nope": 1})}, true},
		{"invalid filter", req{body: call("query_records", map[string]any{"stream": "messages", "filter": map[string]any{"x": map[string]any{"zz": 1}}})}, true},
		{"unknown stream", req{body: call("aggregate", map[string]any{"stream": "no_such", "metric": "count"})}, true},
		{"string id", req{body: `{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"schema","arguments":{}}}`}, true},
		{"string id with <>&", req{body: `{"jsonrpc":"2.0","id":"<a&b>","method":"tools/call","params":{"name":"aggregate","arguments":{"stream":"messages","metric":"count"}}}`}, true},
		{"negative id", req{body: strings.Replace(agg, `"id":7`, `"id":-5`, 1)}, true},
		{"zero id", req{body: strings.Replace(agg, `"id":7`, `"id":0`, 1)}, true},
		{"15-digit id", req{body: strings.Replace(agg, `"id":7`, `"id":123456789012345`, 1)}, true},
		{"whitespace", req{body: "\n  " + strings.ReplaceAll(agg, ",", " ,\n ") + " \n"}, true},
		{"keys in another order", req{body: `{"params":{"arguments":{"metric":"count","stream":"messages"},"name":"aggregate"},"method":"tools/call","id":3,"jsonrpc":"2.0"}`}, true},
		// The stream name comes back in the error, so the answer carries
		// <, > and & from the arguments (checked below).
		{"html in arguments", req{body: call("aggregate", map[string]any{"stream": "<b>&</b>x", "metric": "count"})}, true},
		{"accept */*", req{header: map[string]string{"Accept": "*/*"}, body: agg}, true},
		{"content type with charset", req{header: map[string]string{"Content-Type": "application/json; charset=utf-8"}, body: agg}, true},
		{"2026-07-28", req{header: h26("aggregate"), body: call26("aggregate", aggArgs, meta26)}, true},
		{"2026-07-28 with client info and log level", req{header: h26("aggregate"), body: call26("aggregate", aggArgs, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/logLevel":"debug"}`)}, true},
		{"2026-07-28 query_records, a large answer", req{header: h26("query_records"), body: call26("query_records", `{"stream":"messages","limit":50}`, meta26)}, true},
		{"2026-07-28 html in arguments", req{header: h26("aggregate"), body: call26("aggregate", `{"stream":"<b>&</b>x","metric":"count"}`, meta26)}, true},
		{"2026-07-28 tool error", req{header: h26("aggregate"), body: call26("aggregate", `{}`, meta26)}, true},
		{"2026-07-28 string id", req{header: h26("schema"), body: strings.Replace(call26("schema", `{}`, meta26), `"id":7`, `"id":"s-1"`, 1)}, true},
		{"Mcp-Method header on an old revision", req{header: map[string]string{"MCP-Protocol-Version": "2025-11-25", "Mcp-Method": "tools/list"}, body: agg}, true},

		// tools/list, answered directly on every revision.
		{"tools/list", req{body: rpc(1, "tools/list", map[string]any{})}, true},
		{"tools/list 2025-03-26", req{header: v("2025-03-26"), body: rpc(1, "tools/list", map[string]any{})}, true},
		{"tools/list 2025-06-18", req{header: v("2025-06-18"), body: rpc(1, "tools/list", map[string]any{})}, true},
		{"tools/list 2025-11-25", req{header: v("2025-11-25"), body: rpc(1, "tools/list", map[string]any{})}, true},
		{"tools/list 2024-11-05", req{header: v("2024-11-05"), body: rpc(1, "tools/list", map[string]any{})}, true},
		{"tools/list string id", req{header: v("2025-11-25"), body: `{"jsonrpc":"2.0","id":"l-1","method":"tools/list","params":{}}`}, true},
		{"tools/list 2026-07-28", req{header: list26, body: `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":` + meta26 + `}}`}, true},
		{"tools/list 2026-07-28 with client info", req{header: list26, body: `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}}}`}, true},
		{"tools/list 2026-07-28 with an Mcp-Name header", req{header: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list", "Mcp-Name": "x"}, body: `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":` + meta26 + `}}`}, true},

		// resources/read, answered directly on every revision: reads,
		// the RS's refusals, unknown and malformed URIs.
		{"resources/read 2025-03-26", req{header: v("2025-03-26"), body: read("pdpp://stream/messages")}, true},
		{"resources/read 2025-06-18", req{header: v("2025-06-18"), body: read("pdpp://stream/messages")}, true},
		{"resources/read 2025-11-25", req{header: v("2025-11-25"), body: read("pdpp://stream/messages")}, true},
		{"resources/read no version header", req{body: read("pdpp://stream/messages")}, true},
		{"resources/read 2024-11-05", req{header: v("2024-11-05"), body: read("pdpp://stream/messages")}, true},
		{"resources/read record", req{header: v("2025-11-25"), body: read("pdpp://record/cin_gmail_personal%2Fmessages%3Ap_msg_003")}, true},
		{"resources/read record with a binary value", req{header: v("2025-11-25"), body: read("pdpp://record/cin_gmail_personal%2Fattachments%3Ap_msg_002_att_1")}, true},
		{"resources/read record not found", req{header: v("2025-11-25"), body: read("pdpp://record/cin_gmail_work%2Fmessages%3Anope")}, true},
		{"resources/read ambiguous record", req{body: read("pdpp://record/labels%3AINBOX")}, true},
		{"resources/read unknown stream", req{body: read("pdpp://stream/no_such")}, true},
		{"resources/read stream traversal", req{body: read("pdpp://stream/%2E%2E")}, true},
		{"resources/read field window of the wrong kind", req{body: read("pdpp://field-window/eyJ2IjoxLCJraW5kIjoicmVjb3JkIn0")}, true},
		{"resources/read text blob", req{body: read("pdpp://blob/cin_gmail_personal/blob_sha256_c514bff25a8680e2bda41ec474006756282def0bcc3690db3cf55dad1c4837e6")}, true},
		{"resources/read 2026-07-28 text blob", req{header: read26h("pdpp://blob/cin_gmail_personal/blob_sha256_c514bff25a8680e2bda41ec474006756282def0bcc3690db3cf55dad1c4837e6"), body: read26("pdpp://blob/cin_gmail_personal/blob_sha256_c514bff25a8680e2bda41ec474006756282def0bcc3690db3cf55dad1c4837e6", meta26)}, true},
		{"resources/read blob not found", req{body: read("pdpp://blob/cin_gmail_personal/nope")}, true},
		{"resources/read unknown scheme", req{body: read("https://example.com/x")}, true},
		{"resources/read no template", req{body: read("pdpp://other/x")}, true},
		{"resources/read template without its variable", req{body: read("pdpp://stream/")}, true},
		{"resources/read not a URI", req{body: read("not a uri")}, true},
		{"resources/read empty URI", req{body: read("")}, true},
		{"resources/read html in the URI", req{body: `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"pdpp://stream/<b>&</b>x"}}`}, true},
		{"resources/read 2026-07-28", req{header: read26h("pdpp://stream/messages"), body: read26("pdpp://stream/messages", meta26)}, true},
		{"resources/read 2026-07-28 record", req{header: read26h("pdpp://record/cin_gmail_personal%2Fmessages%3Ap_msg_003"), body: read26("pdpp://record/cin_gmail_personal%2Fmessages%3Ap_msg_003", meta26)}, true},
		{"resources/read 2026-07-28 not found", req{header: read26h("pdpp://stream/no_such"), body: read26("pdpp://stream/no_such", meta26)}, true},
		{"resources/read 2026-07-28 unknown URI", req{header: read26h("pdpp://other/x"), body: read26("pdpp://other/x", meta26)}, true},

		// Left to the SDK.
		{"resources/read escaped URI", req{body: `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"pdpp://stream/m\u0065ssages"}}`}, false},
		{"resources/read control character", req{body: `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"pdpp://stream/a` + "\t" + `"}}`}, false},
		{"resources/read URI not a string", req{body: `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":5}}`}, false},
		{"resources/read without a URI", req{body: `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{}}`}, false},
		{"resources/read extra param", req{body: `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"pdpp://stream/messages","requestState":"x"}}`}, false},
		{"resources/read duplicate URI", req{body: `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"pdpp://stream/x","uri":"pdpp://stream/messages"}}`}, false},
		{"resources/read _meta on an old revision", req{header: v("2025-11-25"), body: read26("pdpp://stream/messages", meta26)}, false},
		{"resources/read 2026-07-28 Mcp-Name mismatch", req{header: read26h("pdpp://stream/other"), body: read26("pdpp://stream/messages", meta26)}, false},
		{"resources/read 2026-07-28 without Mcp-Name", req{header: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "resources/read"}, body: read26("pdpp://stream/messages", meta26)}, false},
		{"resources/read 2026-07-28 Mcp-Method mismatch", req{header: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "pdpp://stream/messages"}, body: read26("pdpp://stream/messages", meta26)}, false},
		{"unknown tool", req{body: call("nope", map[string]any{})}, false},
		{"fractional id", req{body: strings.Replace(agg, `"id":7`, `"id":1.5`, 1)}, false},
		{"exponent id", req{body: strings.Replace(agg, `"id":7`, `"id":1e3`, 1)}, false},
		{"16-digit id", req{body: strings.Replace(agg, `"id":7`, `"id":1234567890123456`, 1)}, false},
		{"minus zero id", req{body: strings.Replace(agg, `"id":7`, `"id":-0`, 1)}, false},
		{"non-ASCII string id", req{body: strings.Replace(agg, `"id":7`, `"id":"é "`, 1)}, false},
		{"null id", req{body: strings.Replace(agg, `"id":7`, `"id":null`, 1)}, false},
		{"escaped string id", req{body: strings.Replace(agg, `"id":7`, `"id":"a\u0062"`, 1)}, false},
		{"notification", req{body: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"schema","arguments":{}}}`}, false},
		{"_meta", req{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"schema","arguments":{},"_meta":{"progressToken":1}}}`}, false},
		{"extra top-level key", req{body: strings.Replace(agg, `"id":7`, `"id":7,"x":1`, 1)}, false},
		{"duplicate id", req{body: strings.Replace(agg, `"id":7`, `"id":7,"id":8`, 1)}, false},
		{"duplicate name", req{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","name":"schema"}}`}, false},
		{"escaped key", req{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"n\u0061me":"schema"}}`}, false},
		{"key in another case", req{body: strings.Replace(agg, `"method"`, `"Method"`, 1)}, false},
		{"arguments not an object", req{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"schema","arguments":[1]}}`}, false},
		{"arguments null", req{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"schema","arguments":null}}`}, false},
		{"wrong jsonrpc version", req{body: strings.Replace(agg, `"2.0"`, `"1.0"`, 1)}, false},
		{"tools/list without params", req{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`}, false},
		{"tools/list null params", req{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}`}, false},
		{"tools/list empty cursor", req{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":""}}`}, false},
		{"tools/list invalid cursor", req{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"nope"}}`}, false},
		{"tools/list with a name", req{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"schema"}}`}, false},
		{"tools/list _meta on an old revision", req{header: v("2025-11-25"), body: `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":` + meta26 + `}}`}, false},
		{"tools/list 2026-07-28 without _meta", req{header: list26, body: rpc(1, "tools/list", map[string]any{})}, false},
		{"tools/list 2026-07-28 Mcp-Method mismatch", req{header: h26("schema"), body: `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":` + meta26 + `}}`}, false},
		{"tools/list 2026-07-28 without Mcp-Method", req{header: v("2026-07-28"), body: `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":` + meta26 + `}}`}, false},
		{"tools/list 2026-07-28 progress token", req{header: list26, body: `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":1}}}`}, false},
		{"tools/list notification", req{body: `{"jsonrpc":"2.0","method":"tools/list","params":{}}`}, false},
		{"tools/list batch", req{body: `[{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}]`}, false},
		{"batch", req{header: v("2025-03-26"), body: "[" + agg + "]"}, false},
		{"not JSON", req{body: `{"jsonrpc":"2.0",`}, false},
		{"2026-07-28 without _meta", req{header: h26("aggregate"), body: agg}, false},
		{"2026-07-28 _meta on an old revision", req{header: v("2025-11-25"), body: call26("aggregate", aggArgs, meta26)}, false},
		{"2026-07-28 without Mcp-Method", req{header: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Name": "aggregate"}, body: call26("aggregate", aggArgs, meta26)}, false},
		{"2026-07-28 Mcp-Method mismatch", req{header: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list", "Mcp-Name": "aggregate"}, body: call26("aggregate", aggArgs, meta26)}, false},
		{"2026-07-28 Mcp-Name mismatch", req{header: h26("schema"), body: call26("aggregate", aggArgs, meta26)}, false},
		{"2026-07-28 without Mcp-Name", req{header: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"}, body: call26("aggregate", aggArgs, meta26)}, false},
		{"2026-07-28 _meta version mismatch", req{header: h26("aggregate"), body: call26("aggregate", aggArgs, `{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}`)}, false},
		{"2026-07-28 no capabilities", req{header: h26("aggregate"), body: call26("aggregate", aggArgs, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`)}, false},
		{"2026-07-28 capabilities of the wrong shape", req{header: h26("aggregate"), body: call26("aggregate", aggArgs, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":"yes"}}}`)}, false},
		{"2026-07-28 client info of the wrong shape", req{header: h26("aggregate"), body: call26("aggregate", aggArgs, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":5}}`)}, false},
		{"2026-07-28 progress token", req{header: h26("aggregate"), body: call26("aggregate", aggArgs, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":1}`)}, false},
		{"2026-07-28 duplicate _meta key", req{header: h26("aggregate"), body: call26("aggregate", aggArgs, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientCapabilities":{}}`)}, false},
		{"2026-07-28 unknown tool", req{header: h26("nope"), body: call26("nope", `{}`, meta26)}, false},
		{"2026-07-28 later revision", req{header: map[string]string{"MCP-Protocol-Version": "2027-01-01", "Mcp-Method": "tools/call", "Mcp-Name": "aggregate"}, body: call26("aggregate", aggArgs, strings.ReplaceAll(meta26, "2026-07-28", "2027-01-01"))}, false},
		{"unsupported version", req{header: v("1999-01-01"), body: agg}, false},
		{"Last-Event-ID", req{header: map[string]string{"Last-Event-ID": "1"}, body: agg}, false},
		{"accept json only", req{header: map[string]string{"Accept": "application/json"}, body: agg}, false},
		{"wrong content type", req{header: map[string]string{"Content-Type": "text/plain"}, body: agg}, false},
		{"non-loopback Host on a loopback listener", req{header: map[string]string{"Host": "evil.example"}, body: agg}, false},
	}
	// Twice: the second pass answers 2026-07-28 requests from what the
	// first remembered of their _meta.
	for pass, tc := range slices.Concat(cases, cases) {
		name := tc.name
		if pass >= len(cases) {
			name += " again"
		}
		t.Run(name, func(t *testing.T) {
			tc.r.token = tok
			before := direct.h.directCalls.Load()
			got := wireForm(t, direct, tc.r)
			if n := direct.h.directCalls.Load() - before; n != map[bool]uint64{true: 1, false: 0}[tc.direct] {
				t.Fatalf("direct path answered %d times, want direct=%v", n, tc.direct)
			}
			want := wireForm(t, sdk, tc.r)
			if strings.Contains(tc.name, "html") && !strings.Contains(got, `<b>&</b>x`) && !strings.Contains(got, `\u003cb\u003e\u0026\u003c/b\u003ex`) {
				t.Fatalf("the answer does not carry the arguments' html, so this case compares nothing:\n%s", got)
			}
			if got != want {
				t.Errorf("direct path:\n%s\nSDK:\n%s", got, want)
			}
		})
	}
	if sdk.h.directCalls.Load() != 0 {
		t.Error("DisableDirectCalls did not keep requests on the SDK's path")
	}
}

// wireForm is what a client sees of one exchange, with the gateway's own
// origin and the Date header left out.
func wireForm(t *testing.T, g *gateway, r req) string {
	t.Helper()
	x := g.do(t, r)
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d length=%d chunked=%v\n", x.status, x.length, x.chunked)
	var keys []string
	for k := range x.header {
		if k != "Date" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(x.header[k], ", "))
	}
	b.Write(x.body)
	// The double gives each of its answers its own request id.
	return rsRequestID.ReplaceAllString(strings.ReplaceAll(b.String(), g.url, "http://gateway.test"), "req_<rs>")
}

var rsRequestID = regexp.MustCompile(`req_[0-9a-f]{16}`)

// sdkVersion is the go-sdk version go.mod requires (test binaries carry no
// dependency list in their build information).
func sdkVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatalf("read go.mod: %v", err)
	}
	m := sdkRequire.FindAllSubmatch(b, -1)
	if len(m) != 1 || bytes.Contains(b, []byte("=> github.com/modelcontextprotocol/go-sdk")) ||
		regexp.MustCompile(`(?m)^\s*(replace\s+)?github.com/modelcontextprotocol/go-sdk\S*\s*=>`).Match(b) {
		t.Fatalf("go.mod must require github.com/modelcontextprotocol/go-sdk once, without a replace directive")
	}
	return string(m[0][1])
}

var sdkRequire = regexp.MustCompile(`(?m)^\s*(?:require\s+)?github\.com/modelcontextprotocol/go-sdk\s+(v\S+)`)

// TestMetaMemo: a remembered _meta gives the same verdict as a fresh check,
// refusals included; each request gets its own copy; the memo is bounded.
func TestMetaMemo(t *testing.T) {
	var memo metaMemo
	r, _ := http.NewRequest(http.MethodPost, "/", nil)
	r.Header.Set("Mcp-Method", "tools/list")
	good := json.RawMessage(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}}}`)
	bad := json.RawMessage(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":"yes"}}}`)
	for pass := range 3 {
		m, ok := statelessMeta(r, directCall{method: "tools/list", meta: good}, &memo)
		if !ok {
			t.Fatalf("pass %d: good _meta refused", pass)
		}
		if _, ok := statelessMeta(r, directCall{method: "tools/list", meta: bad}, &memo); ok {
			t.Fatalf("pass %d: bad _meta accepted", pass)
		}
		caps := m[mcp.MetaKeyClientCapabilities].(map[string]any)
		if caps["roots"].(map[string]any)["listChanged"] != true {
			t.Fatalf("pass %d: decoded %v", pass, m)
		}
		// What one request's handlers do to their _meta stays theirs.
		caps["roots"].(map[string]any)["listChanged"] = false
		m[mcp.MetaKeyLogLevel] = "debug"
	}
	if n := memo.n.Load(); n != 2 {
		t.Fatalf("memo holds %d entries, want 2", n)
	}
	for i := range metaMemoEntries + 10 {
		raw := json.RawMessage(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c` + strconv.Itoa(i) + `","version":"1"}}`)
		if _, ok := statelessMeta(r, directCall{method: "tools/list", meta: raw}, &memo); !ok {
			t.Fatalf("_meta %d refused", i)
		}
	}
	if n := memo.n.Load(); n != metaMemoEntries {
		t.Fatalf("memo holds %d entries, want its bound %d", n, metaMemoEntries)
	}
}
