package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

// answeredElsewhere reads through a real RS client but reports every answer
// as coming from another provider, as a fan-out client does when a member
// other than the configured one answers.
type answeredElsewhere struct {
	c    *rs.Client
	base string
}

func (a answeredElsewhere) Get(ctx context.Context, path string, q rs.Query) (*rs.Response, error) {
	resp, err := a.c.Get(ctx, path, q)
	var re *rs.Error
	if errors.As(err, &re) {
		re.BaseURL = a.base
	}
	if resp != nil {
		resp.BaseURL = a.base
	}
	return resp, err
}

// URLs and provider_url in results, and the provider named in advice, come
// from the provider that answered, not from the configured one.
func TestResultsNameTheProviderThatAnswered(t *testing.T) {
	const other = "https://second-provider.example"
	h := newHarness(t, harnessOptions{rs: func(s *pdpptest.Server) tools.RS {
		c, err := rs.New(rs.Options{BaseURL: s.URL(), Token: func() string { return s.Token(pdpptest.TokenClient) }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.CloseIdleConnections)
		return answeredElsewhere{c: c, base: other}
	}})
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"schema", map[string]any{}},
		{"query_records", map[string]any{"stream": "messages", "limit": 2}},
		{"aggregate", map[string]any{"stream": "messages", "metric": "count"}},
		{"search", map[string]any{"q": "invoice", "limit": 2}},
		{"fetch", map[string]any{"id": "cin_gmail_personal/messages:p_msg_003"}},
		{"read_record_field", map[string]any{"id": "cin_gmail_personal/messages:p_msg_003", "field_path": "subject"}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			res := h.call(t, tc.tool, tc.args)
			if res.IsError {
				t.Fatalf("error result: %s", text(res))
			}
			raw, _ := json.Marshal(res.StructuredContent)
			if strings.Contains(string(raw), h.rs.URL()) {
				t.Errorf("structuredContent names the configured provider %s: %s", h.rs.URL(), raw)
			}
			if p := gjson.GetBytes(raw, "provider_url"); p.Exists() && p.Str != other {
				t.Errorf("provider_url = %q, want %q", p.Str, other)
			}
		})
	}
	res := h.call(t, "query_records", map[string]any{"stream": "no_such_stream"})
	if !res.IsError || strings.Contains(text(res), h.rs.URL()) {
		t.Errorf("error advice names the configured provider:\n%s", text(res))
	}
}
