package server

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

var hitLines = regexp.MustCompile(`(?m)^\d+\. id=.*$`)

// Over stdio, a search before any schema call titles hits by their declared
// primary-title (the subjects of these messages), and its hit lines are the
// same after a schema call, on the SDK path and the direct one.
func TestStdioTitlesFromTheFirstCall(t *testing.T) {
	ds, err := dataset.Demo()
	if err != nil {
		t.Fatal(err)
	}
	d := pdpptest.New(t, pdpptest.Options{Dataset: ds, Now: dataset.DemoTime})
	for _, direct := range []bool{false, true} {
		t.Run(map[bool]string{false: "sdk", true: "direct"}[direct], func(t *testing.T) {
			client, err := rs.New(rs.Options{BaseURL: d.URL(), Token: func() string { return d.Token(pdpptest.TokenClient) }})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(client.CloseIdleConnections)
			s, dr := NewWithDirect(Options{RS: client, ProviderURL: d.URL(), Name: "pdpp-test", Version: "1.2.3"})
			var o StdioOptions
			if direct {
				o.Direct = dr
			}
			testStdioTitlesFromTheFirstCall(t, runStdio(t, context.Background(), s, o))
		})
	}
}

func testStdioTitlesFromTheFirstCall(t *testing.T, st *stdio) {
	st.initialize("2025-11-25")
	call := func(id int, name, args string) string {
		st.send(`{"jsonrpc":"2.0","id":` + string(rune('0'+id)) + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}` + "\n")
		a := st.recv()
		if r := gjson.Get(a, "result"); !r.Exists() || r.Get("isError").Bool() {
			t.Fatalf("%s: %s", name, a)
		}
		return a
	}
	const search = `{"q":"launch","streams":["mail_messages"],"limit":10}`
	before := call(1, "search", search)
	lines := hitLines.FindAllString(gjson.Get(before, "result.content.0.text").Str, -1)
	subjects := 0
	gjson.Get(before, "result.structuredContent.results").ForEach(func(_, r gjson.Result) bool {
		plain := strings.NewReplacer("<mark>", "", "</mark>", "").Replace(r.Get("snippet").Str)
		if plain == r.Get("title").Str && strings.Contains(plain, "launch") {
			subjects++
		}
		return true
	})
	if subjects == 0 || len(lines) == 0 {
		t.Fatalf("no hit is titled by its subject before schema:\n%s", before)
	}
	call(2, "schema", `{}`)
	after := call(3, "search", search)
	if got := hitLines.FindAllString(gjson.Get(after, "result.content.0.text").Str, -1); strings.Join(got, "\n") != strings.Join(lines, "\n") {
		t.Errorf("hit lines changed after schema:\nbefore:\n%s\nafter:\n%s", strings.Join(lines, "\n"), strings.Join(got, "\n"))
	}
}
