package fanout_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/server"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

// session serves the tools over c in memory, as hosted mode does.
func session(t *testing.T, c *fanout.Client, providerURL string) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	srv := server.New(server.Options{RS: c, ProviderURL: providerURL, Mode: tools.ModeHosted})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "fanout-test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// callText calls a tool and returns its text and whether it failed.
func callText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

var (
	idRe     = regexp.MustCompile(`(?m)^\d+\. id=(\S+)`)
	cursorRe = regexp.MustCompile(`next_cursor=("(?:[^"\\]|\\.)*")`)
	argsRe   = regexp.MustCompile(`read_record_field args=(\{[^\n]*\})`)
)

// A model that reads only text: search across sources, fetch a hit of the
// second child by its id alone, read a field window, page to the end.
func TestContentOnlyJourneyOverPackage(t *testing.T) {
	s := demoServer(t)
	_, c := demoPackage(t, s)
	cs := session(t, c, s.URL())

	text, isErr := callText(t, cs, "search", map[string]any{"q": "invoice", "limit": 10})
	if isErr {
		t.Fatal(text)
	}
	if !strings.Contains(text, "source_mix=") {
		t.Errorf("search over several sources shows no source mix:\n%s", text)
	}
	var second string
	for _, m := range idRe.FindAllStringSubmatch(text, -1) {
		if strings.HasPrefix(m[1], dataset.DemoWorkMailConnection+"/") || strings.Contains(m[1], "chat") {
			second = m[1]
			break
		}
	}
	if second == "" {
		t.Fatalf("no hit from a second child:\n%s", text)
	}
	doc, isErr := callText(t, cs, "fetch", map[string]any{"id": second})
	if isErr {
		t.Fatalf("fetch %s: %s", second, doc)
	}

	long, isErr := callText(t, cs, "search", map[string]any{"q": dataset.DemoLongPhrase})
	if isErr {
		t.Fatal(long)
	}
	m := argsRe.FindStringSubmatch(long)
	if m == nil {
		t.Fatalf("no read_record_field args in:\n%s", long)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(m[1]), &args); err != nil {
		t.Fatal(err)
	}
	win, isErr := callText(t, cs, "read_record_field", args)
	if isErr || !strings.Contains(strings.ToLower(win), "marigold") {
		t.Fatalf("field window: %s", win)
	}

	seen := map[string]bool{}
	args = map[string]any{"q": "invoice", "limit": 7}
	for page := 0; ; page++ {
		if page > 30 {
			t.Fatal("paging never ended")
		}
		text, isErr := callText(t, cs, "search", args)
		if isErr {
			t.Fatal(text)
		}
		for _, m := range idRe.FindAllStringSubmatch(text, -1) {
			if seen[m[1]] {
				t.Errorf("page %d repeats %s", page, m[1])
			}
			seen[m[1]] = true
		}
		cm := cursorRe.FindStringSubmatch(text)
		if cm == nil {
			break
		}
		var cur string
		if err := json.Unmarshal([]byte(cm[1]), &cur); err != nil {
			t.Fatal(err)
		}
		args = map[string]any{"q": "invoice", "limit": 7, "cursor": cur}
	}
	if len(seen) < 8 {
		t.Errorf("paged %d hits in all", len(seen))
	}
}

func TestModelSeesAmbiguityUnusableAndPartial(t *testing.T) {
	s := demoServer(t)
	pms, c := demoPackage(t, s, pdpptest.PackageChild{ConnectionID: connectionOf(t, s, "calendar"), Revoked: true})
	cs := session(t, c, s.URL())

	text, isErr := callText(t, cs, "query_records", map[string]any{"stream": "mail_messages", "limit": 1})
	if !isErr || !strings.Contains(text, "ambiguous_connection") || !strings.Contains(text, "retry_with=connection_id") ||
		!strings.Contains(text, dataset.DemoWorkMailConnection) {
		t.Errorf("ambiguity text:\n%s", text)
	}
	revoked := pms[len(pms)-1]
	text, isErr = callText(t, cs, "query_records", map[string]any{"stream": "calendar_events", "connection_id": revoked.ConnectionID})
	if !isErr || !strings.Contains(text, "re-approved") || !strings.Contains(text, "choose another connection") {
		t.Errorf("unusable text:\n%s", text)
	}
	text, _ = callText(t, cs, "schema", map[string]any{})
	if !strings.Contains(text, "warning code=source_unavailable") || !strings.Contains(text, "re-approved") {
		t.Errorf("schema text has no source warning:\n%s", text)
	}
}

func TestSearchTextShowsSourceUnavailable(t *testing.T) {
	a := newScripted(t, "cin_a", hits("a", 2, -3))
	h := newScripted(t, "cin_h", nil)
	h.hang = true
	c, err := fanout.New(fanout.Options{Members: []fanout.Member{a.member(t, "ga"), h.member(t, "gh")}, ChildTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cs := session(t, c, "http://127.0.0.1:1")
	text, isErr := callText(t, cs, "search", map[string]any{"q": "x"})
	if isErr || !strings.Contains(text, "warnings=source_unavailable") || !strings.Contains(text, "Notes gh") ||
		!strings.Contains(text, "partial") {
		t.Errorf("partial search text:\n%s", text)
	}
}
