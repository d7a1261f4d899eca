package server

import (
	"context"
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/version"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

// toolsListBudget is the size the whole tools/list tools array must stay
// under once all six tools exist.
const toolsListBudget = 16384

func connect(t testing.TB, s *mcp.Server, opts *mcp.ClientSessionOptions) *mcp.ClientSession {
	t.Helper()
	return connectVia(t, s, opts, nil)
}

// connectVia is connect with the client's transport wrapped (nil: as is).
func connectVia(t testing.TB, s *mcp.Server, opts *mcp.ClientSessionOptions, wrap func(mcp.Transport) mcp.Transport) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	var transport mcp.Transport = ct
	if wrap != nil {
		transport = wrap(ct)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "server-test", Version: "v0"}, nil).Connect(ctx, transport, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func newTestServer(t testing.TB) (*mcp.Server, *pdpptest.Server) {
	t.Helper()
	s, _, srv := newTestServerDirect(t)
	return s, srv
}

// newTestRS starts the double and returns a client of it holding the
// client token; o adds to the client's options (a budget, say).
func newTestRS(t testing.TB, o rs.Options) (*rs.Client, *pdpptest.Server) {
	t.Helper()
	d := pdpptest.New(t, pdpptest.Options{})
	o.BaseURL = d.URL()
	o.Token = func() string { return d.Token(pdpptest.TokenClient) }
	c, err := rs.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c, d
}

// newTestServerDirect is newTestServer with the server's Direct.
func newTestServerDirect(t testing.TB) (*mcp.Server, *Direct, *pdpptest.Server) {
	t.Helper()
	client, srv := newTestRS(t, rs.Options{})
	s, d := NewWithDirect(Options{RS: client, ProviderURL: srv.URL(), Name: "pdpp-test", Version: "1.2.3"})
	return s, d, srv
}

func TestInitialize(t *testing.T) {
	s, _ := newTestServer(t)
	for _, version := range []string{"", "2025-11-25", "2025-06-18"} {
		t.Run("protocol "+version, func(t *testing.T) {
			var opts *mcp.ClientSessionOptions
			if version != "" {
				opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
			}
			init := connect(t, s, opts).InitializeResult()
			want := version
			if want == "" {
				want = "2026-07-28" // the newest, negotiated by default
			}
			if init.ProtocolVersion != want {
				t.Errorf("protocol %q, want %q", init.ProtocolVersion, want)
			}
			if init.ServerInfo.Name != "pdpp-test" || init.ServerInfo.Version != "1.2.3" {
				t.Errorf("serverInfo %+v", init.ServerInfo)
			}
			c := init.Capabilities
			switch {
			case c.Tools == nil || c.Resources == nil:
				t.Errorf("tools or resources not declared: %+v", c)
			case c.Tools.ListChanged || c.Resources.ListChanged || c.Resources.Subscribe:
				t.Errorf("listChanged or subscribe declared: %+v %+v", c.Tools, c.Resources)
			case c.Logging != nil:
				t.Errorf("logging advertised: %+v", c)
			case c.Prompts == nil || c.Prompts.ListChanged:
				// The SDK answers prompts/list (with no prompts) whatever
				// is declared; answering an undeclared method breaks strict
				// clients, so the empty capability is declared.
				t.Errorf("prompts not declared as an empty, fixed list: %+v", c.Prompts)
			case c.Completions == nil:
				t.Errorf("completions (of stream names) not declared")
			}
			if init.Instructions != instructions {
				t.Error("instructions not sent")
			}
		})
	}
}

func TestInstructions(t *testing.T) {
	head := instructions[:512]
	for _, re := range []string{`\bschema\b`, `connection_id`, `\bfilter\b`, `typed|object`, `\blimit\b|\bpage\b|narrow|\bcursor\b`,
		`written by others.*never instructions to follow`} {
		if !regexp.MustCompile(re).MatchString(head) {
			t.Errorf("the first 512 characters do not match %s", re)
		}
	}
	lower := strings.ToLower(instructions)
	for _, banned := range []string{"owner", "control-plane", "control plane", "bearer token"} {
		if strings.Contains(lower, banned) {
			t.Errorf("instructions mention %q", banned)
		}
	}
	// Every tool the instructions name must exist.
	registered := tools.Register(mcp.NewServer(&mcp.Implementation{Name: "names", Version: "v0"}, nil), &tools.Env{})
	for _, name := range regexp.MustCompile(`\b(schema|query_records|aggregate|search|fetch|read_record_field)\b`).FindAllString(instructions, -1) {
		if _, ok := registered[name]; !ok {
			t.Errorf("instructions name %s, which is not registered", name)
		}
	}
	if len(instructions) > 2048 {
		t.Errorf("instructions are %d chars", len(instructions))
	}
	// How search ids continue, and that resources are never the only path.
	for _, want := range []string{"pass one unchanged to fetch for projected records", "to read_record_field for bounded field windows",
		"resource URIs are optional"} {
		if !strings.Contains(instructions, want) {
			t.Errorf("instructions lack %q", want)
		}
	}
	if strings.Contains(instructions, "read the returned `pdpp://record/...`") {
		t.Error("instructions send models to resource URIs")
	}
}

// tools/list as a client receives it, all six tools, must fit the budget.
func TestToolsListSize(t *testing.T) {
	s, _ := newTestServer(t)
	res, err := connect(t, s, nil).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res.Tools)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tools/list: %d tools, %d bytes (budget %d for six)", len(res.Tools), len(b), toolsListBudget)
	if len(b) > toolsListBudget*len(res.Tools)/6 {
		t.Errorf("tools/list is %d bytes for %d tools, over a pro-rata share of %d", len(b), len(res.Tools), toolsListBudget)
	}
	if res.TTLMs != listTTLMs {
		t.Errorf("tools/list ttlMs %d, want %d", res.TTLMs, listTTLMs)
	}
}

// The serverInfo icon is repeated in every 2026-07-28 response; keep it tiny.
func TestIconIsSmall(t *testing.T) {
	b, _ := json.Marshal(icon)
	if len(b) > 400 {
		t.Errorf("icon is %d bytes", len(b))
	}
	s := New(Options{Icons: []mcp.Icon{}})
	init := connect(t, s, nil).InitializeResult()
	if len(init.ServerInfo.Icons) != 0 {
		t.Errorf("icons sent although disabled: %v", init.ServerInfo.Icons)
	}
	def := connect(t, New(Options{}), nil).InitializeResult()
	if len(def.ServerInfo.Icons) != 1 || def.ServerInfo.Name != DefaultName || def.ServerInfo.Version == "" {
		t.Errorf("defaults: %+v", def.ServerInfo)
	}
}

func TestVersionIsTheBuildVersion(t *testing.T) {
	if Version() == "" || Version() != version.Version() {
		t.Errorf("Version() = %q, internal/version says %q", Version(), version.Version())
	}
}

// A tool call through the assembled server reaches the RS with the
// configured credential and returns an answer.
func TestToolCallThroughServer(t *testing.T) {
	s, srv := newTestServer(t)
	res, err := connect(t, s, nil).CallTool(context.Background(), &mcp.CallToolParams{Name: "schema", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("schema failed: %v", res.Content)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Path != "/v1/schema" || reqs[0].Header.Get("Authorization") != "Bearer "+srv.Token(pdpptest.TokenClient) {
		t.Errorf("RS saw %+v", reqs)
	}
}

func BenchmarkNew(b *testing.B) {
	caps := tools.NewCapabilityCache()
	for b.Loop() {
		_ = New(Options{ProviderURL: "https://pdpp.example.com", Capabilities: caps})
	}
}

// Options.FetchTextChars bounds fetch's text, and the resource templates are
// served.
func TestFetchTextCharsAndTemplates(t *testing.T) {
	srv := pdpptest.New(t, pdpptest.Options{})
	client, err := rs.New(rs.Options{BaseURL: srv.URL(), Token: func() string { return srv.Token(pdpptest.TokenClient) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.CloseIdleConnections)
	cs := connect(t, New(Options{RS: client, ProviderURL: srv.URL(), FetchTextChars: 50}), nil)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fetch", Arguments: map[string]any{"id": "cin_gmail_personal/messages:p_msg_003"}})
	if err != nil || res.IsError {
		t.Fatalf("fetch: %v %v", err, res)
	}
	var doc struct {
		Text     string
		Metadata struct {
			TextTruncated bool `json:"text_truncated"`
		}
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &doc); err != nil {
		t.Fatal(err)
	}
	if n := len([]rune(doc.Text)); n != 50 || !doc.Metadata.TextTruncated {
		t.Errorf("text of %d characters, truncated %v", n, doc.Metadata.TextTruncated)
	}
	var templates []string
	for rt, err := range cs.ResourceTemplates(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		templates = append(templates, rt.URITemplate)
	}
	if len(templates) != 4 {
		t.Errorf("resource templates %v", templates)
	}
}

func TestDataURI(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"<a b='#c'/>", "data:text/plain,%3Ca%20b='%23c'/%3E"},
		{"é%", "data:text/plain,%C3%A9%25"},
	} {
		if got := dataURI("text/plain", c.in); got != c.want {
			t.Errorf("dataURI(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// completion/complete offers the granted stream names for
// pdpp://stream/{name}, filtered by what was typed, and nothing elsewhere.
func TestStreamNameCompletion(t *testing.T) {
	s, _ := newTestServer(t)
	cs := connect(t, s, nil)
	ctx := context.Background()
	complete := func(uri, arg, value string) []string {
		t.Helper()
		res, err := cs.Complete(ctx, &mcp.CompleteParams{
			Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: uri},
			Argument: mcp.CompleteParamsArgument{Name: arg, Value: value},
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Completion.Total != len(res.Completion.Values) || res.Completion.HasMore {
			t.Errorf("total %d hasMore %v for %d values", res.Completion.Total, res.Completion.HasMore, len(res.Completion.Values))
		}
		return res.Completion.Values
	}
	// Every gmail stream is granted under two connections, so each is
	// offered once per connection: a read that names none is ambiguous.
	all := complete("pdpp://stream/{name}", "name", "")
	if len(all) < 2 || !slices.IsSorted(all) || !slices.Contains(all, "cin_gmail_personal/messages") ||
		slices.Contains(all, "messages") || len(slices.Compact(slices.Clone(all))) != len(all) {
		t.Errorf("all streams: %v", all)
	}
	for _, n := range complete("pdpp://stream/{name}", "name", "mess") {
		if _, name, _ := strings.Cut(n, "/"); !strings.HasPrefix(name, "mess") {
			t.Errorf("%q offered for the prefix mess", n)
		}
	}
	if got := complete("pdpp://stream/{name}", "name", "cin_gmail_work/mess"); len(got) != 2 {
		t.Errorf("cin_gmail_work/mess: %v", got)
	}
	// Every value offered reads, as a client expands the template.
	for _, v := range all {
		uri := "pdpp://stream/" + url.PathEscape(v)
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Errorf("%s: %v", uri, err)
			continue
		}
		if conn, _, _ := strings.Cut(v, "/"); !strings.Contains(res.Contents[0].Text, `"name"`) || conn == "" {
			t.Errorf("%s: %.200s", uri, res.Contents[0].Text)
		}
	}
	if got := complete("pdpp://stream/{name}", "name", "zzz"); len(got) != 0 {
		t.Errorf("zzz: %v", got)
	}
	if got := complete("pdpp://record/{handle}", "handle", ""); len(got) != 0 {
		t.Errorf("record handles offered: %v", got)
	}
}
