package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/testlog"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// Debug logs carry shapes, sizes and codes, never what a person searched
// for or what their records hold. A journey over all six tools and the
// resource templates, successes and failures, runs with the server's logger
// (SDK and tools) at debug level; no search text, filter value or field
// value may reach it. (The RS client's own record is pkg/rs's to test.)
func TestDebugLogsHoldNoPersonalData(t *testing.T) {
	const (
		searchText  = "Lisbon"           // a term the dataset holds
		secretValue = "zq-private-value" // a filter value the RS refuses
		windowQ     = "Lisbon"
	)
	var buf testlog.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv := pdpptest.New(t, pdpptest.Options{})
	client, err := rs.New(rs.Options{BaseURL: srv.URL(), Token: func() string { return srv.Token(pdpptest.TokenClient) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.CloseIdleConnections)
	cs := connect(t, New(Options{RS: client, ProviderURL: srv.URL(), Logger: logger}), nil)
	ctx := context.Background()

	var values []string // field values the results showed
	collect := func(raw any) {
		b, _ := json.Marshal(raw)
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				for _, x := range v {
					walk(x)
				}
			case []any:
				for _, x := range v {
					walk(x)
				}
			case string:
				if len(v) >= 12 && strings.Contains(v, " ") { // prose: subjects, bodies, snippets
					values = append(values, v)
				}
			}
		}
		var v any
		_ = json.Unmarshal(b, &v)
		walk(v)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"schema", map[string]any{}},
		{"schema", map[string]any{"stream": "messages"}},
		{"query_records", map[string]any{"stream": "messages", "connection_id": "cin_gmail_work", "limit": 3}},
		{"query_records", map[string]any{"stream": "messages", "connection_id": "cin_gmail_work", "filter": map[string]any{"subject": secretValue}}},
		{"query_records", map[string]any{"stream": "messages", "connection_id": "cin_gmail_work", "filter": map[string]any{"no_such_field": secretValue}}},
		{"aggregate", map[string]any{"stream": "messages", "metric": "count", "group_by": "has_attachments"}},
		{"search", map[string]any{"q": searchText}},
		{"search", map[string]any{"q": searchText, "streams": []string{"no_such_stream"}}},
		{"fetch", map[string]any{"id": "cin_gmail_personal/messages:p_msg_003"}},
		{"fetch", map[string]any{"id": "cin_gmail_personal/messages:" + secretValue}},
		{"read_record_field", map[string]any{"id": "cin_gmail_personal/message_bodies:p_msg_002_body", "field_path": "body_text", "q": windowQ}},
		{"read_record_field", map[string]any{"id": "cin_gmail_personal/message_bodies:p_msg_002_body", "field_path": "body_text", "q": secretValue}},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		collect(res.StructuredContent)
	}
	handle := base64.RawURLEncoding.EncodeToString([]byte(`{"v":1,"kind":"field-window","connection_id":"cin_gmail_personal","stream":"message_bodies","record_id":"p_msg_002_body","field_path":"body_text","q":"` + secretValue + `"}`))
	for _, uri := range []string{
		"pdpp://stream/messages",
		"pdpp://record/cin_gmail_personal%2Fmessages%3Ap_msg_003",
		"pdpp://record/cin_gmail_personal%2Fmessages%3A" + secretValue,
		"pdpp://field-window/" + handle,
	} {
		if res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
			for _, c := range res.Contents {
				collect(c.Text)
			}
		}
	}

	logs := buf.String()
	if !strings.Contains(logs, "tool call failed") && !strings.Contains(logs, "resource read failed") {
		t.Fatalf("the journey logged no failures at debug level; the test would pass vacuously:\n%s", logs)
	}
	for _, banned := range []string{searchText, secretValue, handle} {
		if strings.Contains(logs, banned) {
			t.Errorf("debug logs hold %q:\n%s", banned, logs)
		}
	}
	if len(values) < 5 {
		t.Fatalf("only %d field values collected", len(values))
	}
	for _, v := range values {
		if strings.Contains(logs, v) {
			t.Errorf("debug logs hold the field value %q", v)
		}
	}
}
