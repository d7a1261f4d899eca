package fanout_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/hiddenrs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/resultid"
)

// TestHiddenTextFanout: the tools over a package of two grants whose RS
// answers hide text (one grant's connection id holds a zero-width space):
// merged schema, ranked search, routed reads and the source warnings show
// no character a person cannot see, mark where values held some, spell the
// tag characters' sentence and count their marks.
func TestHiddenTextFanout(t *testing.T) {
	h := hiddenrs.New(t)
	member := func(grant, conn string) fanout.Member {
		return fanout.Member{GrantID: grant, ConnectionIDs: []string{conn}, ConnectorKey: "mail",
			DisplayName: "Mail " + hiddenrs.Bidi, Streams: []string{"messages", hiddenrs.Broken}, RS: rsClient(t, h.URL, "tok_"+grant)}
	}
	// A third grant whose RS does not answer: its label is quoted in the
	// source_unavailable warnings of merged reads.
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	down := member("grt_down", "cin_down")
	down.DisplayName = "Down " + hiddenrs.Tags
	down.RS = rsClient(t, gone.URL, "tok_down")
	c, err := fanout.New(fanout.Options{Members: []fanout.Member{member("grt_a", hiddenrs.Conn), member("grt_b"+hiddenrs.ZW, hiddenrs.HiddenConn), down},
		ChildTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cs := session(t, c, h.URL)
	for _, conn := range []string{hiddenrs.Conn, hiddenrs.HiddenConn} {
		rid, err := resultid.New(conn, "messages", hiddenrs.RecordKey)
		if err != nil {
			t.Fatal(err)
		}
		for _, call := range hiddenrs.Calls(rid.String()) {
			where := call.Tool + " " + conn
			if call.Tool == "query_records" || call.Tool == "aggregate" {
				// A package reads one grant's stream at a time.
				call.Args["connection_id"] = conn
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: call.Tool, Arguments: call.Args})
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			var text strings.Builder
			for _, b := range res.Content {
				if tc, ok := b.(*mcp.TextContent); ok {
					text.WriteString(tc.Text)
				}
			}
			if res.IsError != call.Error {
				t.Errorf("%s: isError=%v:\n%s", where, res.IsError, text.String())
			}
			hiddenrs.Check(t, where, call, text.String())
		}
	}
}
