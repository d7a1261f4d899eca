package hosted

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/hiddenrs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/resultid"
)

// TestHiddenTextHosted: every tool at hosted /mcp, reading an RS whose
// answers hide text, shows no character a person cannot see in its content
// blocks (raw, or escaped in the JSON of the HTTP answer), marks where the
// values held some, spells the tag characters' sentence, counts its marks,
// and leaves query_records' structuredContent.data as the RS sent it. The
// bearer is verified by the double; the reads go to the hostile RS.
func TestHiddenTextHosted(t *testing.T) {
	h := hiddenrs.New(t)
	g := newGateway(t, gatewayOptions{mutate: func(o *Options) { o.ProviderURL = h.URL }})
	tok := g.token(pdpptest.TokenClient)
	rid, err := resultid.New(hiddenrs.Conn, "messages", hiddenrs.RecordKey)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range hiddenrs.Calls(rid.String()) {
		where := c.Tool + " " + toJSON(c.Args)
		args := c.Args
		if args == nil {
			args = map[string]any{}
		}
		x := g.do(t, req{token: tok, body: rpc(i+2, "tools/call", map[string]any{"name": c.Tool, "arguments": args}),
			header: map[string]string{"MCP-Protocol-Version": "2025-06-18"}})
		msg := x.body
		if s := string(msg); strings.HasPrefix(s, "event:") || strings.HasPrefix(s, "data:") {
			for _, line := range strings.Split(s, "\n") {
				if d, ok := strings.CutPrefix(line, "data:"); ok {
					msg = []byte(strings.TrimSpace(d))
				}
			}
		}
		res := gjson.ParseBytes(msg).Get("result")
		if x.status != 200 || !res.Exists() {
			t.Fatalf("%s: status %d: %.500s", where, x.status, x.body)
		}
		if res.Get("isError").Bool() != c.Error {
			t.Errorf("%s: isError=%v", where, res.Get("isError").Bool())
		}
		for _, p := range hiddenrs.Problems(res.Get("content").Raw) {
			t.Errorf("%s: in the answer's JSON: %s", where, p)
		}
		var text strings.Builder
		res.Get("content").ForEach(func(_, b gjson.Result) bool {
			text.WriteString(b.Get("text").String())
			return true
		})
		hiddenrs.Check(t, where, c, text.String())
		if c.Tool == "query_records" && !c.Error && !c.Terse {
			if data := res.Get("structuredContent.data").Raw; data != hiddenrs.Record("", 1) {
				t.Errorf("structuredContent.data is not the RS's answer:\n got %s\nwant %s", data, hiddenrs.Record("", 1))
			}
		}
	}
}
