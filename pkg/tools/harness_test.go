package tools_test

import (
	"context"
	"encoding/json"
	"io"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

// harness is an MCP client connected in memory to a server with the PDPP
// tools, reading from a pdpptest double over loopback HTTP.
type harness struct {
	rs *pdpptest.Server
	cs *mcp.ClientSession
	// token is the bearer the tools use; no result may contain it.
	token string
	// wire records every JSON-RPC message the client read, as raw JSON.
	wire  *wireLog
	tools map[string]*mcp.Tool
	// outputs are the advertised output schemas, resolved, by tool name.
	outputs map[string]*jsonschema.Resolved
}

type harnessOptions struct {
	kind  pdpptest.TokenKind // default TokenClient
	token func(*pdpptest.Server) string
	rs    func(*pdpptest.Server) tools.RS // default: an rs.Client with the token
	cache *tools.CapabilityCache
	// demo serves the demo dataset instead of gmail.
	demo bool
	// fetchTextChars sets Env.FetchTextChars.
	fetchTextChars int
	// blobMax sets Env.BlobMaxBytes.
	blobMax int64
	// srv, when set, is the double to read from (shared by several
	// harnesses, so a large dataset is indexed once).
	srv *pdpptest.Server
	// env, when set, adjusts the Env before the tools are registered.
	env func(*tools.Env)
}

func newHarness(t testing.TB, o harnessOptions) *harness {
	t.Helper()
	var po pdpptest.Options
	if o.demo {
		po.Dataset = demoDataset(t)
	}
	srv := o.srv
	if srv == nil {
		srv = pdpptest.New(t, po)
	}
	var client tools.RS
	token := srv.Token(pdpptest.TokenClient)
	if o.rs != nil {
		client = o.rs(srv)
	} else {
		tok := o.token
		if tok == nil {
			kind := o.kind
			if kind == "" {
				kind = pdpptest.TokenClient
			}
			tok = func(s *pdpptest.Server) string { return s.Token(kind) }
		}
		token = tok(srv)
		c, err := rs.New(rs.Options{BaseURL: srv.URL(), Token: func() string { return tok(srv) }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.CloseIdleConnections)
		client = c
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "tools-test", Version: "v0"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	env := &tools.Env{RS: client, ProviderURL: srv.URL(), Capabilities: o.cache, FetchTextChars: o.fetchTextChars, BlobMaxBytes: o.blobMax}
	if o.env != nil {
		o.env(env)
	}
	tools.Register(s, env)
	wire := &wireLog{}
	h := &harness{rs: srv, token: token, wire: wire, cs: connectLogged(t, s, wire),
		tools: map[string]*mcp.Tool{}, outputs: map[string]*jsonschema.Resolved{}}
	ctx := context.Background()
	for tool, err := range h.cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		h.tools[tool.Name] = tool
		if tool.OutputSchema != nil {
			h.outputs[tool.Name] = resolve(t, tool.OutputSchema)
		}
	}
	srv.ResetRequests()
	return h
}

// demoDataset builds the demo dataset once per test binary: it is large.
var demoDataset = func() func(testing.TB) *dataset.Dataset {
	var (
		once sync.Once
		ds   *dataset.Dataset
		err  error
	)
	return func(t testing.TB) *dataset.Dataset {
		t.Helper()
		once.Do(func() { ds, err = dataset.Demo() })
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
}()

// connect connects an in-memory client to s (server first, as the SDK
// requires).
func connect(t testing.TB, s *mcp.Server) *mcp.ClientSession {
	t.Helper()
	return connectLogged(t, s, nil)
}

// connectLogged is connect, recording what the client reads in wire (when
// not nil).
func connectLogged(t testing.TB, s *mcp.Server, wire *wireLog) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, inner := mcp.NewInMemoryTransports()
	var ct mcp.Transport = inner
	if wire != nil {
		ct = &mcp.LoggingTransport{Transport: inner, Writer: wire}
	}
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "tools-test-client", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func resolve(t testing.TB, schema any) *jsonschema.Resolved {
	t.Helper()
	b, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// call calls a tool through the go-sdk client and checks what every client
// relies on: no protocol error, exactly one text block, and
// structuredContent valid against the advertised output schema (the official
// TypeScript client checks this even on error results). Errors carry
// structuredContent.error with at least a code and a next step.
func (h *harness) call(t testing.TB, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	if strings.Contains(text0(res), h.token) || strings.Contains(h.wire.last(), h.token) {
		t.Fatalf("%s: the bearer token appears in the result", name)
	}
	if len(res.Content) == 0 {
		t.Fatalf("%s: no content blocks", name)
	}
	if _, ok := res.Content[0].(*mcp.TextContent); !ok {
		t.Fatalf("%s: content[0] is %T, want text", name, res.Content[0])
	}
	// After the text, only links to the resources the result names.
	for i, c := range res.Content[1:] {
		if _, ok := c.(*mcp.ResourceLink); !ok || res.IsError {
			t.Fatalf("%s: content[%d] is %T (isError %v), want only resource_link after the text", name, i+1, c, res.IsError)
		}
	}
	if res.StructuredContent == nil {
		t.Fatalf("%s: result without structuredContent", name)
	}
	if err := h.outputs[name].Validate(res.StructuredContent); err != nil {
		t.Fatalf("%s: structuredContent does not match the output schema: %v", name, err)
	}
	sc, _ := res.StructuredContent.(map[string]any)
	e, hasError := sc["error"].(map[string]any)
	switch {
	case res.IsError && (!hasError || len(sc) != 1 || e["code"] == "" || e["next"] == ""):
		t.Fatalf("%s: error result without a complete structuredContent.error: %v", name, res.StructuredContent)
	case !res.IsError && hasError:
		t.Fatalf("%s: successful result carries an error: %v", name, res.StructuredContent)
	}
	return res
}

func text(res *mcp.CallToolResult) string { return res.Content[0].(*mcp.TextContent).Text }

func text0(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// wireLog collects the "read: <json>" lines of an mcp.LoggingTransport.
type wireLog struct {
	mu    sync.Mutex
	lines []string
}

func (w *wireLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if msg, ok := strings.CutPrefix(l, "read: "); ok {
			w.lines = append(w.lines, msg)
		}
	}
	return len(p), nil
}

// last returns the last message the client read.
func (w *wireLog) last() string {
	if w == nil {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.lines) == 0 {
		return ""
	}
	return w.lines[len(w.lines)-1]
}

// rawData returns structuredContent.data of the last result exactly as it
// crossed the wire.
func (h *harness) rawData(t testing.TB) string {
	t.Helper()
	d := gjson.Get(h.wire.last(), "result.structuredContent.data")
	if !d.Exists() {
		t.Fatal("the last result has no structuredContent.data")
	}
	return d.Raw
}

// rawResults returns structuredContent.results of the last result.
func (h *harness) rawResults(t testing.TB) []gjson.Result {
	t.Helper()
	return gjson.Get(h.wire.last(), "result.structuredContent.results").Array()
}

// sameJSON reports whether a and b hold the same JSON tokens in the same
// order: equal values with equal key order, whatever the whitespace or
// string escaping.
func sameJSON(t testing.TB, a, b string) bool {
	t.Helper()
	ta, tb := jsonTokens(t, a), jsonTokens(t, b)
	if len(ta) != len(tb) {
		return false
	}
	for i := range ta {
		if ta[i] != tb[i] {
			t.Logf("first difference at token %d: %v vs %v", i, ta[i], tb[i])
			return false
		}
	}
	return true
}

func jsonTokens(t testing.TB, s string) []any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var out []any
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("not JSON: %v", err)
		}
		out = append(out, tok)
	}
}

// structured re-encodes structuredContent as the client received it.
func structured(t testing.TB, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	m, ok := res.StructuredContent.(map[string]any)
	if !ok {
		t.Fatalf("structuredContent is %T, want an object", res.StructuredContent)
	}
	return m
}

// rsCall is one request the double received, decoded.
type rsCall struct {
	Path  string
	Query [][2]string // in wire order
}

func (h *harness) requests(t testing.TB) []rsCall {
	t.Helper()
	return h.requestsOf(t, false)
}

// toolRequests are the requests without the reads of the declared roles
// (the grant's compact schema), which search, fetch and query_records make
// beside their own once per credential; TestRolesReadOnce counts those.
func (h *harness) toolRequests(t testing.TB) []rsCall {
	t.Helper()
	return h.requestsOf(t, true)
}

// isRolesRead reports whether a request is a read of the declared roles.
func isRolesRead(path, rawQuery string) bool {
	return path == "/v1/schema" && (rawQuery == "view=compact" || rawQuery == "")
}

func (h *harness) requestsOf(t testing.TB, skipRoles bool) []rsCall {
	t.Helper()
	var out []rsCall
	for _, r := range h.rs.Requests() {
		if skipRoles && isRolesRead(r.Path, r.RawQuery) {
			continue
		}
		c := rsCall{Path: r.Path}
		if r.RawQuery != "" {
			for _, kv := range strings.Split(r.RawQuery, "&") {
				k, v, _ := strings.Cut(kv, "=")
				dk, err1 := url.QueryUnescape(k)
				dv, err2 := url.QueryUnescape(v)
				if err1 != nil || err2 != nil {
					t.Fatalf("undecodable query %q", r.RawQuery)
				}
				c.Query = append(c.Query, [2]string{dk, dv})
			}
		}
		out = append(out, c)
	}
	return out
}

func (c rsCall) String() string {
	var parts []string
	for _, kv := range c.Query {
		parts = append(parts, kv[0]+"="+kv[1])
	}
	if len(parts) == 0 {
		return c.Path
	}
	return c.Path + "?" + strings.Join(parts, "&")
}
