package tools_test

import (
	"strings"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

// Every name-like argument follows one rule on every tool: a control
// character (NUL, line feed) is refused as invalid_arguments naming that
// argument, an oversized value as argument_too_large, and neither reaches
// the RS.
func TestNameArgumentsCheckedAlikeOnEveryTool(t *testing.T) {
	id := "cin_gmail_work/labels:INBOX"
	base := map[string]map[string]any{
		"schema":            {"stream": "messages"},
		"query_records":     {"stream": "messages"},
		"aggregate":         {"stream": "messages", "metric": "count"},
		"search":            {"q": "x"},
		"fetch":             {"id": id},
		"read_record_field": {"id": id, "field_path": "body_text"},
	}
	// names lists, per tool, its name-like arguments; list arguments are
	// tested through one bad item.
	names := map[string][]string{
		"schema":            {"stream", "connection_id"},
		"query_records":     {"stream", "connection_id", "sort", "view", "fields", "expand"},
		"aggregate":         {"stream", "connection_id", "field", "group_by", "group_by_time", "time_zone"},
		"search":            {"streams", "connection_id"},
		"fetch":             {"connection_id", "fields", "expand"},
		"read_record_field": {"connection_id", "field_path"},
	}
	lists := map[string]bool{"fields": true, "expand": true, "streams": true}
	big := strings.Repeat("n", tools.MaxNameBytes+1)
	h := newHarness(t, harnessOptions{})
	for _, tool := range toolNames(t) {
		for _, param := range names[tool] {
			for _, bad := range []struct{ val, code, want string }{
				{"a\x00b", "invalid_arguments", "control character"},
				{"a\nb", "invalid_arguments", "control character"},
				{" a", "invalid_arguments", "spaces around it"},
				{big, tools.CodeArgumentTooLarge, "at most 256"},
			} {
				args := map[string]any{}
				for k, v := range base[tool] {
					args[k] = v
				}
				var v any = bad.val
				if lists[param] {
					v = []string{"ok", bad.val}
				}
				args[param] = v
				h.rs.ResetRequests()
				res := h.call(t, tool, args)
				head := "error code=" + bad.code + " param=" + param + "\n"
				if !res.IsError || !strings.HasPrefix(text(res), head) || !strings.Contains(text(res), bad.want) {
					t.Errorf("%s %s=%q: want %q with %q, got:\n%s", tool, param, bad.val, head, bad.want, text(res))
				}
				if n := len(h.rs.Requests()); n != 0 {
					t.Errorf("%s %s=%q: %d RS requests", tool, param, bad.val, n)
				}
			}
		}
	}
}

// The documented size limits, one per kind of argument.
func TestArgumentSizeLimits(t *testing.T) {
	many := make([]string, tools.MaxListItems+1)
	for i := range many {
		many[i] = "f"
	}
	filter := map[string]any{}
	for i := range tools.MaxListItems + 1 {
		filter["f"+strings.Repeat("x", i)] = "v"
	}
	for _, tc := range []struct {
		tool  string
		args  map[string]any
		param string
	}{
		{"search", map[string]any{"q": strings.Repeat("q", tools.MaxQueryBytes+1)}, "q"},
		{"read_record_field", map[string]any{"id": "cin/s:r", "field_path": "b", "q": strings.Repeat("q", tools.MaxQueryBytes+1)}, "q"},
		{"query_records", map[string]any{"stream": "messages", "cursor": strings.Repeat("c", tools.MaxHandleBytes+1)}, "cursor"},
		{"query_records", map[string]any{"stream": "messages", "changes_since": strings.Repeat("c", tools.MaxHandleBytes+1)}, "changes_since"},
		{"fetch", map[string]any{"id": "s:" + strings.Repeat("r", tools.MaxHandleBytes)}, "id"},
		{"query_records", map[string]any{"stream": "messages", "fields": many}, "fields"},
		{"search", map[string]any{"q": "x", "streams": many}, "streams"},
		{"query_records", map[string]any{"stream": "messages", "filter": map[string]any{"subject": strings.Repeat("v", tools.MaxFilterValueBytes+1)}}, "filter"},
		{"query_records", map[string]any{"stream": "messages", "filter": map[string]any{"received_at": map[string]any{"gte": strings.Repeat("v", tools.MaxFilterValueBytes+1)}}}, "filter"},
		{"aggregate", map[string]any{"stream": "messages", "metric": "count", "filter": filter}, "filter"},
	} {
		h := newHarness(t, harnessOptions{})
		res := h.call(t, tc.tool, tc.args)
		head := "error code=" + tools.CodeArgumentTooLarge + " param=" + tc.param + "\n"
		if !res.IsError || !strings.HasPrefix(text(res), head) {
			t.Errorf("%s %s: want %q, got:\n%s", tc.tool, tc.param, head, text(res))
		}
		if n := len(h.rs.Requests()); n != 0 {
			t.Errorf("%s %s: %d RS requests", tc.tool, tc.param, n)
		}
	}
}

// A bad connection_id is reported as connection_id on every tool, whichever
// other arguments come with it.
func TestBadConnectionIDIsNamed(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"read_record_field", map[string]any{"connection_id": "a/b", "stream": "message_bodies", "record_id": "x", "field_path": "body_text"}},
		{"read_record_field", map[string]any{"id": "message_bodies:x", "connection_id": "..", "field_path": "body_text"}},
		{"fetch", map[string]any{"id": "labels:INBOX", "connection_id": "a\x00"}},
		{"query_records", map[string]any{"stream": "messages", "connection_id": "a\\b"}},
	} {
		res := h.call(t, tc.tool, tc.args)
		if !res.IsError || !strings.Contains(strings.SplitN(text(res), "\n", 2)[0], " param=connection_id") {
			t.Errorf("%s %v: want param=connection_id, got:\n%s", tc.tool, tc.args, text(res))
		}
	}
}
