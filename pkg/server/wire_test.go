package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// wireVersions are the protocol revisions the server negotiates and whose
// official schema the tests hold it to.
var wireVersions = []string{"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// wireSchema compiles definitions of one revision's official MCP schema.
type wireSchema struct {
	c     *jsonschema.Compiler
	url   string
	defs  string // "definitions" (draft-07) or "$defs" (2020-12)
	names map[string]bool
	cache map[string]*jsonschema.Schema
	// props are the member names each definition declares (nil when it
	// declares none directly).
	props map[string]map[string]bool
}

// uriChars is RFC 3986's URI alphabet: unreserved, reserved and "%". The
// validator's own "uri" format accepts what net/url accepts, raw spaces
// included, which strict clients reject.
var uriChars = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*$`)

func loadWireSchema(t *testing.T, version string) *wireSchema {
	t.Helper()
	// testdata/mcp-schema/README.md says where they come from.
	path := filepath.Join("testdata", "mcp-schema", version+".schema.json")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.RegisterFormat(&jsonschema.Format{Name: "uri", Validate: func(v any) error {
		s, ok := v.(string)
		if !ok || uriChars.MatchString(s) {
			return nil
		}
		return errors.New("not an RFC 3986 URI")
	}})
	url := "mcp-" + version + ".json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	ws := &wireSchema{c: c, url: url, defs: "definitions", names: map[string]bool{}, cache: map[string]*jsonschema.Schema{}}
	m := doc.(map[string]any)
	defs, ok := m["definitions"].(map[string]any)
	if !ok {
		ws.defs, defs = "$defs", m["$defs"].(map[string]any)
	}
	ws.props = map[string]map[string]bool{}
	for name, d := range defs {
		ws.names[name] = true
		if p, ok := d.(map[string]any)["properties"].(map[string]any); ok {
			ws.props[name] = map[string]bool{}
			for k := range p {
				ws.props[name][k] = true
			}
		}
	}
	return ws
}

// validate checks v against the named definition; a definition the
// revision lacks is an error too.
func (ws *wireSchema) validate(def string, v any) error {
	if !ws.names[def] {
		return fmt.Errorf("the schema has no definition %s", def)
	}
	sch, ok := ws.cache[def]
	if !ok {
		var err error
		if sch, err = ws.c.Compile(ws.url + "#/" + ws.defs + "/" + def); err != nil {
			return err
		}
		ws.cache[def] = sch
	}
	return sch.Validate(v)
}

// resultDefs names the result definition of each method the server answers.
var resultDefs = map[string]string{
	"initialize":               "InitializeResult",
	"server/discover":          "DiscoverResult",
	"tools/list":               "ListToolsResult",
	"tools/call":               "CallToolResult",
	"resources/list":           "ListResourcesResult",
	"resources/templates/list": "ListResourceTemplatesResult",
	"resources/read":           "ReadResourceResult",
	"prompts/list":             "ListPromptsResult",
	"completion/complete":      "CompleteResult",
	"ping":                     "EmptyResult",
}

// wireRecorder is a client transport that keeps every message the server
// sends, as the bytes the wire carries, with the method each answers.
type wireRecorder struct {
	mcp.Transport
	mu      sync.Mutex
	methods map[string]string // request id → method
	got     []wireMessage
}

type wireMessage struct {
	method string // of the request a response answers; "" for notifications
	raw    []byte
}

func (w *wireRecorder) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := w.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &wireConn{Connection: c, w: w}, nil
}

type wireConn struct {
	mcp.Connection
	w *wireRecorder
}

func (c *wireConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if r, ok := m.(*jsonrpc.Request); ok && r.ID.IsValid() {
		c.w.mu.Lock()
		c.w.methods[fmt.Sprint(r.ID.Raw())] = r.Method
		c.w.mu.Unlock()
	}
	return c.Connection.Write(ctx, m)
}

func (c *wireConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err != nil {
		return m, err
	}
	raw, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		return nil, err
	}
	var method string
	if r, ok := m.(*jsonrpc.Response); ok {
		c.w.mu.Lock()
		method = c.w.methods[fmt.Sprint(r.ID.Raw())]
		c.w.mu.Unlock()
	}
	c.w.mu.Lock()
	c.w.got = append(c.w.got, wireMessage{method: method, raw: raw})
	c.w.mu.Unlock()
	return m, nil
}

// wireJourney is every kind of answer the server gives: lists, each tool's
// success and error results, resource reads of each template, completion,
// and protocol errors.
func wireJourney(ctx context.Context, t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	_, err := cs.ListTools(ctx, nil)
	must("tools/list", err)
	_, err = cs.ListResourceTemplates(ctx, nil)
	must("resources/templates/list", err)
	_, err = cs.ListResources(ctx, nil)
	must("resources/list", err)
	_, err = cs.ListPrompts(ctx, nil)
	must("prompts/list", err)
	if cs.InitializeResult().ProtocolVersion < "2026-07-28" { // the revision that dropped ping
		must("ping", cs.Ping(ctx, nil))
	}
	for _, c := range []struct {
		tool    string
		args    map[string]any
		isError bool
	}{
		{"schema", map[string]any{}, false},
		{"schema", map[string]any{"stream": "messages"}, false},
		{"query_records", map[string]any{"stream": "messages", "connection_id": "cin_gmail_work", "limit": 3}, false},
		{"query_records", map[string]any{"stream": "messages", "limit": 500}, true},
		{"aggregate", map[string]any{"stream": "messages", "metric": "count", "group_by": "has_attachments"}, false},
		{"aggregate", map[string]any{"stream": "messages", "metric": "median"}, true},
		{"search", map[string]any{"q": "Lisbon"}, false},
		{"search", map[string]any{"q": ""}, true},
		{"fetch", map[string]any{"id": "cin_gmail_personal/messages:p_msg_003"}, false},
		{"fetch", map[string]any{"id": "cin_gmail_personal/messages:no_such_record"}, true},
		{"read_record_field", map[string]any{"id": "cin_gmail_personal/message_bodies:p_msg_002_body", "field_path": "body_text"}, false},
		{"read_record_field", map[string]any{"id": "cin_gmail_personal/message_bodies:p_msg_002_body", "field_path": "no_such_field"}, true},
		{"fetch", map[string]any{"id": wireBlob}, false},
		{"fetch", map[string]any{"id": "pdpp://blob/cin_gmail_personal/no_such_blob"}, true},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		switch {
		case err != nil:
			t.Errorf("%s %v: %v", c.tool, c.args, err)
		case res.IsError != c.isError:
			t.Errorf("%s %v: isError %v, want %v", c.tool, c.args, res.IsError, c.isError)
		}
	}
	// Protocol errors: an unknown tool and a bad argument type.
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
	if err == nil {
		t.Error("an unknown tool was accepted")
	}
	for _, c := range []struct {
		uri string
		ok  bool
	}{
		{"pdpp://stream/messages", true},
		{"pdpp://record/cin_gmail_personal%2Fmessages%3Ap_msg_003", true},
		{"pdpp://stream/no_such_stream", false},
		{wireBlob, true},
		{"pdpp://blob/cin_gmail_personal/no_such_blob", false},
		{"pdpp://record/%%%", false},
		{"pdpp://field-window/not-a-handle", false},
		{"https://example.com/", false},
	} {
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: c.uri})
		if (err == nil) != c.ok {
			t.Errorf("resources/read %s: %v", c.uri, err)
		}
	}
	_, err = cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "pdpp://stream/{name}"},
		Argument: mcp.CompleteParamsArgument{Name: "name", Value: "me"},
	})
	must("completion/complete", err)
}

// wireBlob is the gmail dataset's text attachment.
const wireBlob = "pdpp://blob/cin_gmail_personal/blob_sha256_c514bff25a8680e2bda41ec474006756282def0bcc3690db3cf55dad1c4837e6"

// Sessions on revisions before 2026-07-28, 2024-11-05 included (whose schema
// is not vendored), get no ttlMs or cacheScope in any result.
func TestNoCacheFieldsBefore20260728(t *testing.T) {
	for _, version := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			s, _ := newTestServer(t)
			var rec *wireRecorder
			cs := connectVia(t, s, &mcp.ClientSessionOptions{ProtocolVersion: version}, func(ct mcp.Transport) mcp.Transport {
				rec = &wireRecorder{Transport: ct, methods: map[string]string{}}
				return rec
			})
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated %s", got)
			}
			wireJourney(context.Background(), t, cs)
			rec.mu.Lock()
			defer rec.mu.Unlock()
			with := 0
			for _, m := range rec.got {
				if bytes.Contains(m.raw, []byte(`"ttlMs"`)) || bytes.Contains(m.raw, []byte(`"cacheScope"`)) {
					with++
				}
			}
			switch {
			case version < "2026-07-28" && with > 0:
				t.Errorf("%d results carry ttlMs or cacheScope", with)
			case version >= "2026-07-28" && with == 0:
				t.Error("no result carries ttlMs or cacheScope")
			}
		})
	}
}

// TestWireSchemaFiles: testdata holds the schema of every revision in
// wireVersions and no other, so a revision added to one is added to both.
func TestWireSchemaFiles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "mcp-schema", "*.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for _, f := range files {
		have = append(have, strings.TrimSuffix(filepath.Base(f), ".schema.json"))
	}
	if !slices.Equal(have, wireVersions) {
		t.Errorf("testdata/mcp-schema holds %v, wireVersions is %v", have, wireVersions)
	}
}

// TestWireSchema holds every message the server sends to the official MCP
// schema of the negotiated revision: a strict client, or the conformance
// suite, validates the same way.
func TestWireSchema(t *testing.T) {
	for _, version := range wireVersions {
		t.Run(version, func(t *testing.T) {
			ws := loadWireSchema(t, version)
			s, _ := newTestServer(t)
			ctx := context.Background()
			var rec *wireRecorder
			cs := connectVia(t, s, &mcp.ClientSessionOptions{ProtocolVersion: version}, func(ct mcp.Transport) mcp.Transport {
				rec = &wireRecorder{Transport: ct, methods: map[string]string{}}
				return rec
			})
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated %s", got)
			}
			wireJourney(ctx, t, cs)

			rec.mu.Lock()
			defer rec.mu.Unlock()
			seen := map[string]int{}
			for _, m := range rec.got {
				checkWireMessage(t, ws, version, m, seen)
			}
			// A method answered is a capability declared.
			caps := cs.InitializeResult().Capabilities
			for method, declared := range map[string]bool{
				"tools/list": caps.Tools != nil, "resources/read": caps.Resources != nil,
				"prompts/list": caps.Prompts != nil, "completion/complete": caps.Completions != nil,
			} {
				if seen[method] > 0 && !declared {
					t.Errorf("%s answered without its capability declared", method)
				}
			}
			first := "initialize"
			if version >= "2026-07-28" {
				first = "server/discover"
			}
			for _, method := range []string{first, "tools/list", "tools/call", "resources/read", "resources/templates/list", "prompts/list", "completion/complete", "error"} {
				if seen[method] == 0 {
					t.Errorf("no %s message was checked", method)
				}
			}
		})
	}
}

func checkWireMessage(t *testing.T, ws *wireSchema, version string, m wireMessage, seen map[string]int) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(m.raw))
	if err != nil {
		t.Fatal(err)
	}
	short := string(m.raw)
	if len(short) > 300 {
		short = short[:300] + "…"
	}
	if err := ws.validate("JSONRPCMessage", v); err != nil {
		t.Errorf("%s: %s is not a JSONRPCMessage: %v", version, short, err)
	}
	obj := v.(map[string]any)
	if e, ok := obj["error"]; ok {
		seen["error"]++
		def := "JSONRPCErrorResponse"
		if !ws.names[def] {
			def = "JSONRPCError"
		}
		if err := ws.validate(def, v); err != nil {
			t.Errorf("%s: error %v: %v", version, e, err)
		}
		return
	}
	res, ok := obj["result"]
	if !ok {
		// A notification from the server.
		if err := ws.validate("ServerNotification", v); err != nil {
			t.Errorf("%s: notification %s: %v", version, short, err)
		}
		return
	}
	def, ok := resultDefs[m.method]
	if !ok {
		t.Errorf("%s: a result for %q, which the test does not know", version, m.method)
		return
	}
	seen[m.method]++
	if err := ws.validate(def, res); err != nil {
		t.Errorf("%s: %s result is not a %s: %v\n%s", version, m.method, def, err, short)
	}
	// The schemas leave results open, so a member from another revision
	// (ttlMs and cacheScope of 2026-07-28 sent to a 2025 session) passes
	// validation; a strict client of that revision still rejects it.
	if props := ws.props[def]; props != nil {
		for k := range res.(map[string]any) {
			// Known and left for now: tool results carry structuredContent
			// (2025-06-18) on 2025-03-26 sessions too, and the hosted direct
			// path answers such calls without this server's middleware.
			if !props[k] && !(version < "2025-06-18" && m.method == "tools/call" && k == "structuredContent") {
				t.Errorf("%s: %s result has %q, which %s of this revision does not define", version, m.method, k, def)
			}
		}
	}
	// Every result is also one of the revision's ServerResult shapes.
	if err := ws.validate("ServerResult", res); err != nil && !strings.Contains(m.method, "discover") {
		t.Errorf("%s: %s result is not a ServerResult: %v", version, m.method, err)
	}
}

// The default icon is a valid URI by RFC 3986, not only by net/url.
func TestIconIsURI(t *testing.T) {
	if !uriChars.MatchString(icon.Source) {
		t.Errorf("icon src has characters a URI cannot hold: %q", icon.Source)
	}
}
