package tools_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

// What the model reads stays bounded whatever identifiers and handles a
// hostile RS sends: an answer whose record key, cursor or rows could not be
// passed back or are not records is rs_invalid_response, never shown whole
// and never cut.
func TestHostileRSAnswersStayBoundedInText(t *testing.T) {
	huge := strings.Repeat("k", 1<<20)
	for _, tt := range []struct {
		name, tool string
		args       map[string]any
		body       string
	}{
		{"1 MiB record_key", "search", map[string]any{"q": "x"},
			`{"object":"list","has_more":false,"data":[{"object":"search_result","stream":"messages","record_key":"` + huge + `","connection_id":"cin_a"}]}`},
		{"200 KB next_cursor", "search", map[string]any{"q": "x"},
			`{"object":"list","has_more":true,"next_cursor":"` + huge[:200<<10] + `","data":[{"object":"search_result","stream":"messages","record_key":"r1"}]}`},
		{"1 MiB record id", "query_records", map[string]any{"stream": "messages"},
			`{"object":"list","has_more":false,"data":[{"object":"record","id":"` + huge + `","stream":"messages","data":{}}]}`},
		{"records that are not objects", "query_records", map[string]any{"stream": "messages"},
			`{"object":"list","data":[1,"two",null]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hostileRS := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tt.body))
			}))
			t.Cleanup(hostileRS.Close)
			h := newHarness(t, harnessOptions{rs: func(*pdpptest.Server) tools.RS {
				c, err := rs.New(rs.Options{BaseURL: hostileRS.URL, Token: func() string { return "tok" }})
				if err != nil {
					t.Fatal(err)
				}
				return c
			}})
			res := h.call(t, tt.tool, tt.args)
			got := text(res)
			if !res.IsError || !strings.Contains(got, "rs_invalid_response") {
				t.Errorf("%s answered (error %v) %d bytes: %.300s", tt.tool, res.IsError, len(got), got)
			}
			if len(got) > 4096 {
				t.Errorf("text is %d bytes: the RS's value reached the model", len(got))
			}
		})
	}
}

// Everything the RS client lets through can be passed back as an argument.
func TestArgumentLimitsAcceptWhatAnswersHandOut(t *testing.T) {
	if tools.MaxHandleBytes < rs.MaxHandleBytes || tools.MaxNameBytes < rs.MaxNameBytes {
		t.Errorf("arguments take handles of %d and names of %d bytes, answers may hand out %d and %d",
			tools.MaxHandleBytes, tools.MaxNameBytes, rs.MaxHandleBytes, rs.MaxNameBytes)
	}
}
