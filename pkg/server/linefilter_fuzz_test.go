package server

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/testlog"
)

// FuzzLineFilter feeds arbitrary lines to the stdio connection: it never
// panics, every line it writes is one JSON-RPC 2.0 answer (or a batch of
// them), and whatever it passes to the SDK is a request with a private id,
// a notification or a response.
func FuzzLineFilter(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping","params":{}}`,
		`[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method":"n"},7]`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x","data":[1]}}`,
		"\xef\xbb\xbf{}", "null", "[]", "[[[[", `{"a":"\u0000"}`, "{\"jsonrpc\":\"2.0\"} x",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, line string, batches bool) {
		if strings.ContainsAny(line, "\n") {
			t.Skip("one line at a time")
		}
		var out testlog.Buffer
		c := newLineConn(strings.NewReader(""), &out, 1<<16, slog.New(slog.DiscardHandler), nil)
		if batches {
			c.version = "2025-03-26"
		}
		msgs := c.accept([]byte(line))
		for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if l == "" {
				continue
			}
			if !json.Valid([]byte(l)) {
				t.Fatalf("answer is not JSON: %q", l)
			}
			r := gjson.Parse(l)
			answers := []gjson.Result{r}
			if r.IsArray() {
				answers = r.Array()
			}
			for _, a := range answers {
				if a.Get("jsonrpc").Str != "2.0" || a.Get("id").Raw != "null" || a.Get("error.code").Int() > -32000 {
					t.Fatalf("unexpected answer %s", a.Raw)
				}
			}
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, m := range msgs {
			if m == nil {
				t.Fatal("nil message")
			}
		}
		for p, cl := range c.calls {
			if p <= 0 || p > c.next || !json.Valid(cl.id) || bytes.ContainsAny(cl.id, "\n") {
				t.Fatalf("call %d has id %q", p, cl.id)
			}
		}
	})
}
