package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

// direct reads path?q from the double with the harness's token, bypassing
// the tools, to compare the tools' structuredContent with the RS answer.
func (h *harness) direct(t testing.TB, path string, q rs.Query) string {
	t.Helper()
	c, err := rs.New(rs.Options{BaseURL: h.rs.URL(), Token: func() string { return h.token }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	resp, err := c.Get(context.Background(), path, q)
	if err != nil {
		t.Fatalf("direct GET %s: %v", path, err)
	}
	return string(resp.Body)
}

func TestSchemaRequests(t *testing.T) {
	for _, tc := range []struct {
		name string
		args map[string]any
		want []string
	}{
		{"global compact", map[string]any{}, []string{"/v1/schema?view=compact"}},
		{"global compact, one connection", map[string]any{"connection_id": "cin_gmail_work"},
			[]string{"/v1/schema?view=compact&connection_id=cin_gmail_work"}},
		{"stream", map[string]any{"stream": "messages"}, []string{"/v1/schema?view=compact&stream=messages"}},
		{"stream and connection", map[string]any{"stream": "messages", "connection_id": "cin_gmail_work", "detail": "compact"},
			[]string{"/v1/schema?view=compact&stream=messages&connection_id=cin_gmail_work"}},
		{"full", map[string]any{"stream": "messages", "connection_id": "cin_gmail_work", "detail": "full"},
			[]string{"/v1/schema?detail=full&stream=messages&connection_id=cin_gmail_work"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{})
			if res := h.call(t, "schema", tc.args); res.IsError {
				t.Fatalf("error: %s", text(res))
			}
			var got []string
			for _, r := range h.requests(t) {
				got = append(got, r.String())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("RS requests %v, want %v", got, tc.want)
			}
		})
	}
}

// Global discovery is an index: every granted stream and connection, no
// per-field flags, and a pointer to where they are.
func TestSchemaGlobalIndex(t *testing.T) {
	h := newHarness(t, harnessOptions{kind: pdpptest.TokenOwner})
	res := h.call(t, "schema", nil)
	txt := text(res)
	for _, s := range []string{"labels", "threads", "messages", "message_bodies", "attachments"} {
		if !strings.Contains(txt, `stream name="`+s+`"`) {
			t.Errorf("text does not name stream %s", s)
		}
	}
	for _, w := range []string{"PDPP schema: connectors=1 streams=5\n", "{connection_id:cin_gmail_personal,display_name:\"Personal Gmail\"}",
		"call schema(stream, connection_id?) for per-field capability flags"} {
		if !strings.Contains(txt, w) {
			t.Errorf("text lacks %q", w)
		}
	}
	data := gjson.Parse(h.rawData(t))
	if data.Get("connectors.0.streams.#.field_capabilities").Raw != "[]" {
		t.Error("the global index carries per-field flags")
	}
	if data.Get("detail").String() != "compact" || data.Get("connectors.0.granted_connections.#").Int() != 2 {
		t.Errorf("index data: %s", data.Raw)
	}
	if om := structured(t, res)["omitted"]; om == nil || !strings.Contains(om.(string), "schema with stream") {
		t.Errorf("omitted = %v", om)
	}
}

// With stream, structuredContent.data is the RS compact answer unchanged:
// same keys in the same order, same values.
func TestSchemaStreamIsVerbatim(t *testing.T) {
	for _, kind := range []pdpptest.TokenKind{pdpptest.TokenClient, pdpptest.TokenOwner} {
		t.Run(string(kind), func(t *testing.T) {
			h := newHarness(t, harnessOptions{kind: kind})
			res := h.call(t, "schema", map[string]any{"stream": "messages", "connection_id": "cin_gmail_work"})
			want := h.direct(t, "/v1/schema", rs.Query{{Key: "view", Value: "compact"}, {Key: "stream", Value: "messages"}, {Key: "connection_id", Value: "cin_gmail_work"}})
			if !sameJSON(t, h.rawData(t), want) {
				t.Errorf("structuredContent.data differs from the RS answer\n got %s\nwant %s", h.rawData(t), want)
			}
			if structured(t, res)["field_capability_legend"] == nil {
				t.Error("no field_capability_legend")
			}
			txt := text(res)
			for _, w := range []string{"field_capability_legend t=declared_type eq=exact_filter", `schema_scope connection_id="cin_gmail_work"`,
				"connections={connection_id:cin_gmail_work,display_name:\"Work Gmail\"}", " fields=", "[declared]"} {
				if kind == pdpptest.TokenOwner && w == "[declared]" {
					w = "received_at[t=string,role=event-time,eq,r=gte|gt|lte|lt,a=group_by_time|max|min]"
				}
				if !strings.Contains(txt, w) {
					t.Errorf("text lacks %q", w)
				}
			}
			if kind == pdpptest.TokenOwner {
				for _, w := range []string{" cursor_field=received_at", " expand=message_bodies(has_one)|attachments(has_many,max_limit=50)",
					" aggregations=group_by=is_draft|", "sum=size_bytes"} {
					if !strings.Contains(txt, w) {
						t.Errorf("owner text lacks %q", w)
					}
				}
			}
		})
	}
}

func TestSchemaFullWithoutStreamIsRefusedLocally(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	res := h.call(t, "schema", map[string]any{"detail": "full"})
	if !res.IsError {
		t.Fatal("accepted")
	}
	for _, w := range []string{"error code=invalid_arguments param=detail", `schema(stream, connection_id, detail: "full")`} {
		if !strings.Contains(text(res), w) {
			t.Errorf("text lacks %q:\n%s", w, text(res))
		}
	}
	if n := len(h.rs.Requests()); n != 0 {
		t.Errorf("%d RS requests", n)
	}
}

// A stream shared by two connections needs connection_id for full detail;
// the RS's typed disambiguation error reaches the model with the candidates.
func TestSchemaFullAmbiguous(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	res := h.call(t, "schema", map[string]any{"stream": "messages", "detail": "full"})
	if !res.IsError {
		t.Fatal("accepted")
	}
	txt := text(res)
	for _, w := range []string{"error code=ambiguous_schema_detail http_status=409 request_id=req_", "retry_with=connection_id",
		"available_connections: {connection_id:cin_gmail_personal", `next: call again with connection_id set to one of "cin_gmail_personal", "cin_gmail_work"`} {
		if !strings.Contains(txt, w) {
			t.Errorf("text lacks %q:\n%s", w, txt)
		}
	}
}

func TestSchemaFull(t *testing.T) {
	h := newHarness(t, harnessOptions{kind: pdpptest.TokenOwner})
	res := h.call(t, "schema", map[string]any{"stream": "messages", "detail": "full", "connection_id": "cin_gmail_work"})
	if res.IsError {
		t.Fatal(text(res))
	}
	data := gjson.Parse(h.rawData(t))
	if data.Get("data").Exists() || data.Get("streams").Exists() {
		t.Error("full schema nested under data or duplicated under streams")
	}
	if !data.Get("connectors.0.streams.0.schema").Exists() || data.Get("connectors.0.streams.0.field_capabilities.id").Type == gjson.String {
		t.Errorf("full detail lost the raw schema: %s", data.Raw)
	}
	if !strings.Contains(text(res), " views=") {
		t.Errorf("text does not list views:\n%s", text(res))
	}
}

// An RS without view=compact refuses it; the tool reads the full schema
// with the same scope and compacts it to what the RS's compact view says.
func TestSchemaCompactFallback(t *testing.T) {
	h := newHarness(t, harnessOptions{kind: pdpptest.TokenOwner})
	q := rs.Query{{Key: "view", Value: "compact"}, {Key: "stream", Value: "messages"}, {Key: "connection_id", Value: "cin_gmail_work"}}
	want := gjson.Parse(h.direct(t, "/v1/schema", q))
	h.rs.ResetRequests()
	h.rs.Fault(pdpptest.Fault{Path: "/v1/schema", Status: 400, Times: 1,
		Body: []byte(`{"error":{"type":"invalid_request_error","code":"unsupported_query","message":"Unsupported query parameter: view"}}`)})
	res := h.call(t, "schema", map[string]any{"stream": "messages", "connection_id": "cin_gmail_work"})
	if res.IsError {
		t.Fatal(text(res))
	}
	var got []string
	for _, r := range h.requests(t) {
		got = append(got, r.String())
	}
	if want := []string{"/v1/schema?view=compact&stream=messages&connection_id=cin_gmail_work", "/v1/schema?stream=messages&connection_id=cin_gmail_work"}; !slices.Equal(got, want) {
		t.Errorf("requests %v, want %v", got, want)
	}
	proj := gjson.Parse(h.rawData(t))
	for _, path := range []string{"detail", "bearer", "connectors.0.connector_key", "connectors.0.granted_connections",
		"connectors.0.streams.0.name", "connectors.0.streams.0.primary_key", "connectors.0.streams.0.cursor_field",
		"connectors.0.streams.0.field_capabilities", "connectors.0.streams.0.expand_capabilities"} {
		if !equalJSON(proj.Get(path).Raw, want.Get(path).Raw) {
			t.Errorf("%s: projection %s, RS compact view %s", path, proj.Get(path).Raw, want.Get(path).Raw)
		}
	}
}

func equalJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

func TestSchemaRejectsBeforeTheRS(t *testing.T) {
	for _, args := range []map[string]any{
		{"stream": "../secrets"},
		{"stream": "a/b"},
		{"stream": ""},
		{"detail": "raw"},
		{"connector_instance_id": "cin_gmail_work"},
		{"stream": 5},
	} {
		h := newHarness(t, harnessOptions{})
		res := h.call(t, "schema", args)
		if !res.IsError || !strings.HasPrefix(text(res), "error code=invalid_arguments") {
			t.Errorf("%v: %s", args, text(res))
		}
		if n := len(h.rs.Requests()); n != 0 {
			t.Errorf("%v: %d RS requests", args, n)
		}
	}
}

// schema(stream) outside the grant is an error like the other tools give,
// naming the granted streams (or, for a connection outside the grant, the
// stream's connections); its structuredContent.error says the same.
func TestSchemaStreamNotGranted(t *testing.T) {
	for _, tc := range []struct {
		args map[string]any
		want []string
	}{
		{map[string]any{"stream": "no_such_stream"}, []string{"error code=stream_not_granted param=stream\n",
			`stream "no_such_stream" is not in this grant; granted streams: labels, threads, messages, message_bodies, attachments`}},
		{map[string]any{"stream": "no_such_stream", "detail": "full"}, []string{"error code=stream_not_granted param=stream\n"}},
		{map[string]any{"stream": "messages", "connection_id": "cin_nope"}, []string{"error code=connection_not_granted param=connection_id\n",
			"{connection_id:cin_gmail_personal,display_name:\"Personal Gmail\"}|{connection_id:cin_gmail_work,display_name:\"Work Gmail\"}"}},
	} {
		h := newHarness(t, harnessOptions{})
		res := h.call(t, "schema", tc.args)
		if !res.IsError {
			t.Fatalf("%v accepted:\n%s", tc.args, text(res))
		}
		for _, w := range tc.want {
			if !strings.Contains(text(res), w) {
				t.Errorf("%v: text lacks %q:\n%s", tc.args, w, text(res))
			}
		}
		if code := structured(t, res)["error"].(map[string]any)["code"]; !strings.HasSuffix(code.(string), "_not_granted") {
			t.Errorf("structuredContent.error.code = %v", code)
		}
	}
}

// A schema call that repeats the cached answer gives the same answer as the
// first (its text and data are reused from the cache), and an answer that
// changed is rendered afresh.
func TestSchemaRepeatedAnswer(t *testing.T) {
	h := newHarness(t, harnessOptions{kind: pdpptest.TokenOwner})
	for _, args := range []map[string]any{nil, {"stream": "messages"}} {
		first, second := h.call(t, "schema", args), h.call(t, "schema", args)
		if text(first) != text(second) || !slices.Equal(rawData(t, first), rawData(t, second)) {
			t.Errorf("schema %v: a repeated answer rendered differently:\n%s\n---\n%s", args, text(first), text(second))
		}
	}
	body := h.direct(t, "/v1/schema", rs.Query{{Key: "view", Value: "compact"}})
	renamed := strings.ReplaceAll(body, `"message_bodies"`, `"message_texts"`)
	if renamed == body {
		t.Fatal("the compact schema names no message_bodies stream")
	}
	h.rs.Fault(pdpptest.Fault{Path: "/v1/schema", Body: []byte(renamed), Times: 1})
	if txt := text(h.call(t, "schema", nil)); !strings.Contains(txt, `stream name="message_texts"`) || strings.Contains(txt, `"message_bodies"`) {
		t.Errorf("a changed answer was not rendered afresh:\n%s", txt)
	}
}

func rawData(t *testing.T, res *mcp.CallToolResult) []byte {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(gjson.GetBytes(b, "data").Raw)
}

// schema(stream) of many large answers keeps the cache within its byte
// bound, and an answer larger than the whole bound is still answered whole.
func TestSchemaCacheByteBound(t *testing.T) {
	const bound = 1 << 20
	cache := tools.NewBoundedCapabilityCache(tools.DefaultCapabilityEntries, bound)
	h := newHarness(t, harnessOptions{cache: cache})
	answer := func(n int) string {
		return `{"object":"schema","detail":"compact","connectors":[{"streams":[{"name":"messages","field_capabilities":{"subject":"t=text,role=primary-title"},"note":"` +
			strings.Repeat("x", n) + `"}]}]}`
	}
	big := answer(128 << 10)
	remove := h.rs.Fault(pdpptest.Fault{Path: "/v1/schema", Body: []byte(big)})
	for i := range 20 {
		res := h.call(t, "schema", map[string]any{"stream": fmt.Sprintf("s%02d", i)})
		if res.IsError || noteLen(t, res) != 128<<10 {
			t.Fatalf("stream %d: the answer was not passed on:\n%s", i, text(res))
		}
		if b := cache.HeldBytes(); b > bound {
			t.Fatalf("after %d streams the cache holds %d bytes, over its %d", i+1, b, bound)
		}
	}
	remove()
	huge := answer(bound + 1)
	h.rs.Fault(pdpptest.Fault{Path: "/v1/schema", Body: []byte(huge)})
	held := cache.HeldBytes()
	res := h.call(t, "schema", map[string]any{"stream": "huge"})
	if n := noteLen(t, res); res.IsError || n != bound+1 {
		t.Fatalf("an answer over the bound was not passed on whole (%d of %d bytes):\n%s", n, bound+1, text(res))
	}
	if cache.HeldBytes() != held {
		t.Errorf("an answer over the whole bound changed what the cache holds from %d to %d bytes", held, cache.HeldBytes())
	}
}

func noteLen(t *testing.T, res *mcp.CallToolResult) int {
	t.Helper()
	return len(gjson.GetBytes(rawData(t, res), "connectors.0.streams.0.note").Str)
}
