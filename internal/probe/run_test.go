package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The hostile text a test server returns: an OSC window title ended by BEL,
// colour and clear-screen CSI sequences, a C1 CSI, a carriage return that
// would overwrite the line, and a bidi override.
const hostileText = "\x1b]0;pwned\x07\x1b[2J\x1b[31mred\x1b[0m \u009b1mC1\rFAKE ok\u202eesrever"

// testServer is an MCP server (not a resource server) whose tools return
// exactly what a test needs: the probe's subject is the client side.
func testServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "probe-test", Version: "0"}, nil)
	add := func(name string, h mcp.ToolHandler) {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, h)
	}
	text := func(s string) []mcp.Content { return []mcp.Content{&mcp.TextContent{Text: s}} }
	add("echo", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{
			Content: text("args=" + string(req.Params.Arguments) + "\nnext_cursor=\"c2\" request_id=req_9"),
			// Authored key order, which a decode into map[string]any loses.
			StructuredContent: json.RawMessage(`{"zeta":1,"alpha":{"y":2,"b":3}}`),
		}, nil
	})
	add("page", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a struct{ Cursor string }
		json.Unmarshal(req.Params.Arguments, &a)
		if a.Cursor == "" {
			return &mcp.CallToolResult{Content: text(`page 1. has_more=true. next_cursor="p2".`)}, nil
		}
		return &mcp.CallToolResult{Content: text("page 2 (" + a.Cursor + "). last page.")}, nil
	})
	add("mixed", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "héllo"},
			&mcp.ImageContent{MIMEType: "image/png", Data: []byte{1, 2, 3}},
			&mcp.ResourceLink{URI: "pdpp://record/x", Name: "x"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "pdpp://stream/a", MIMEType: "application/json", Text: `{"a":1}`}},
			&mcp.TextContent{Text: "second"},
		}}, nil
	})
	add("fail", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: text("error code=nope\nnext: do something else")}, nil
	})
	add("hostile", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: text(hostileText + "\nsecret-token")}, nil
	})
	s.AddResource(&mcp.Resource{URI: "test://doc", Name: "doc", MIMEType: "text/plain"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://doc", MIMEType: "text/plain", Text: "doc text"}}}, nil
		})
	return s
}

// inMemory connects a client session to s the way the probe does, with the
// wire recorder around the client transport.
func inMemory(t *testing.T, s *mcp.Server) (*mcp.ClientSession, *Wire) {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	w := NewWire()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx, w.Transport(ct), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, w
}

func parse(t *testing.T, script string) []Call {
	t.Helper()
	calls, err := ParseScript("t.probe", strings.NewReader(script))
	if err != nil {
		t.Fatal(err)
	}
	return calls
}

func runAll(t *testing.T, r *Runner, script string) ([]*Result, error) {
	t.Helper()
	var out []*Result
	err := r.Run(context.Background(), parse(t, script), func(res *Result) error {
		out = append(out, res)
		return nil
	})
	return out, err
}

func TestRunner(t *testing.T) {
	cs, w := inMemory(t, testServer())
	results, err := runAll(t, &Runner{Session: cs, Wire: w}, `
echo {"b":1, "a":"x"}
page
page {"cursor":"$next_cursor"}
mixed
!fail
fail
nope
tools/list
resources/read test://doc
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 9 {
		t.Fatalf("%d results, want 9", len(results))
	}
	echo := results[0]
	if string(echo.Args) != `{"b":1,"a":"x"}` {
		t.Errorf("echo sent %s; want the arguments compacted in authored order", echo.Args)
	}
	if want := `{"zeta":1,"alpha":{"y":2,"b":3}}`; string(echo.Structured) != want {
		t.Errorf("structuredContent = %s, want the wire bytes %s", echo.Structured, want)
	}
	if !strings.Contains(string(echo.Raw), `"structuredContent":{"zeta":1,"alpha":{"y":2,"b":3}}`) {
		t.Errorf("raw result = %s", echo.Raw)
	}
	if got := echo.Blocks[0].Text; echo.Size.Bytes != len(got) || echo.Size.Chars != len([]rune(got)) || echo.Size.Tokens <= 0 {
		t.Errorf("size %+v for %q", echo.Size, got)
	}

	if p2 := results[2]; string(p2.Args) != `{"cursor":"p2"}` || len(p2.Uses) != 1 || p2.Uses[0].From != 2 {
		t.Errorf("page 2: args %s, uses %+v", p2.Args, p2.Uses)
	}

	mixed := results[3]
	var labels []string
	for _, b := range mixed.Blocks {
		labels = append(labels, b.Label+"|"+b.Note)
	}
	want := []string{
		"content[0] text|",
		"content[1] image|image/png, 3 bytes (base64 4 characters, not shown)",
		`content[2] resource_link|uri=pdpp://record/x name="x"`,
		"content[3] resource pdpp://stream/a (application/json)|",
		"content[4] text|",
	}
	if strings.Join(labels, "\n") != strings.Join(want, "\n") {
		t.Errorf("mixed blocks:\n%s\nwant:\n%s", strings.Join(labels, "\n"), strings.Join(want, "\n"))
	}
	// Sizes count every text the model reads: "héllo" + `{"a":1}` + "second".
	if mixed.Size.Bytes != 6+7+6 || mixed.Size.Chars != 5+7+6 {
		t.Errorf("mixed size = %+v", mixed.Size)
	}

	if f := results[4]; !f.IsError || f.Unexpected() {
		t.Errorf("!fail: IsError %v, Unexpected %v", f.IsError, f.Unexpected())
	}
	if f := results[5]; !f.IsError || !f.Unexpected() {
		t.Errorf("fail: IsError %v, Unexpected %v", f.IsError, f.Unexpected())
	}
	if n := results[6]; n.Err == nil || !strings.Contains(n.Err.Error(), "nope") {
		t.Errorf("unknown tool: Err = %v", n.Err)
	}
	list := results[7]
	if list.Err != nil || !strings.HasPrefix(list.Blocks[0].Label, "tools: 5") || !strings.Contains(list.Blocks[0].Text, `"name": "echo"`) {
		t.Errorf("tools/list: %v %+v", list.Err, list.Blocks)
	}
	if res := results[8]; res.Err != nil || res.Blocks[0].Text != "doc text" || res.Blocks[0].Label != "contents[0] test://doc (text/plain)" {
		t.Errorf("resources/read: %v %+v", res.Err, res.Blocks)
	}
}

// A missing variable ends the run, after its result has been handed over.
func TestRunnerMissingVariable(t *testing.T) {
	cs, w := inMemory(t, testServer())
	results, err := runAll(t, &Runner{Session: cs, Wire: w}, "page\npage {\"cursor\":\"$next_cursor\"}\npage {\"cursor\":\"$next_cursor\"}\necho\n")
	var ve *VarError
	if !errors.As(err, &ve) || ve.N != 3 || ve.Name != "next_cursor" {
		t.Fatalf("Run = %v, want a *VarError for call 3", err)
	}
	if len(results) != 3 || !errors.Is(results[2].Err, err) {
		t.Fatalf("results = %d, last Err %v", len(results), results[len(results)-1].Err)
	}
	if !strings.Contains(err.Error(), "the latest page result (call 2) shows no next_cursor=") {
		t.Errorf("error = %v", err)
	}
}

// Without a wire recording the results are re-encoded; the text is the same.
func TestRunnerWithoutWire(t *testing.T) {
	cs, _ := inMemory(t, testServer())
	results, err := runAll(t, &Runner{Session: cs}, "echo\ntools/list\n")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(results[0].Blocks[0].Text, "args={}") || results[0].Structured == nil {
		t.Errorf("echo without wire: %+v", results[0])
	}
	if results[1].Size.Bytes == 0 {
		t.Error("tools/list without wire has no size")
	}
}

// Over Streamable HTTP, raw results come from the HTTP layer, both from JSON
// bodies and from event streams.
func TestWireHTTP(t *testing.T) {
	for _, jsonResponse := range []bool{true, false} {
		name := "sse"
		if jsonResponse {
			name = "json"
		}
		t.Run(name, func(t *testing.T) {
			srv := testServer()
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
				&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: jsonResponse})
			hs := httptest.NewServer(h)
			t.Cleanup(hs.Close)
			w := NewWire()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(context.Background(),
				&mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: &http.Client{Transport: w.RoundTripper(http.DefaultTransport)}, MaxRetries: -1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			results, err := runAll(t, &Runner{Session: cs, Wire: w}, "echo\ntools/list\n")
			if err != nil {
				t.Fatal(err)
			}
			if want := `{"zeta":1,"alpha":{"y":2,"b":3}}`; string(results[0].Structured) != want {
				t.Errorf("structuredContent = %s, want the wire bytes %s", results[0].Structured, want)
			}
			if !bytes.Contains(results[1].Raw, []byte(`"tools":[`)) {
				t.Errorf("tools/list raw = %s", results[1].Raw)
			}
		})
	}
}

func TestSSETee(t *testing.T) {
	w := NewWire()
	w.request(idKey("1"), "tools/call")
	w.request(idKey("n:2"), "tools/call")
	stream := "event: message\r\nid: 1\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"1\",\r\ndata: \"result\":{\"a\":1}}\r\n\r\n: comment\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"n:2\",\"result\":{\"b\":2}}\n"
	tee := &sseTee{ReadCloser: readCloser{strings.NewReader(stream)}, w: w}
	buf := make([]byte, 7) // small reads split lines and events
	var got bytes.Buffer
	for {
		n, err := tee.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if got.String() != stream {
		t.Fatal("the tee changed the stream")
	}
	res := w.Take("tools/call")
	if len(res) != 2 || string(res[0]) != `{"a":1}` || string(res[1]) != `{"b":2}` {
		t.Fatalf("results = %q", res)
	}
}

type readCloser struct{ *strings.Reader }

func (readCloser) Close() error { return nil }
