package tools

import (
	"encoding/json"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/evidence"
)

// TestSearchStructuredEncodeMatchesMarshal: search's structuredContent,
// written by hand, is what json.Marshal writes, and a part that cannot be
// encoded is left for the server's encoding check.
func TestSearchStructuredEncodeMatchesMarshal(t *testing.T) {
	tricky := "<b>&amp;</b> \u2028 \xff \x01 \"q\""
	full := searchResult{ID: "c/s:" + tricky, Title: tricky, URL: "http://rs/r?a=1&b=<2>", ConnectionID: "c", ConnectorKey: "k",
		Stream: "s", RecordKey: "r", DisplayName: tricky, Snippet: "…" + tricky}
	for name, tc := range map[string]struct {
		s  searchStructured
		ok bool
	}{
		"empty":      {searchStructured{}, true},
		"no results": {searchStructured{Data: json.RawMessage(`{"result_count":0}`), Results: []searchResult{}, ProviderURL: "p"}, true},
		"full":       {searchStructured{Data: json.RawMessage(" {\"url\" : \"/v1/search?q=<x>&y\" }"), Results: []searchResult{full, {ID: "only"}}, ContentLadder: evidence.Ladder{Kind: "k<", Notes: []string{"&"}}, ProviderURL: "http://p/<>", RequestID: "req_1"}, true},
		"bad data":   {searchStructured{Data: json.RawMessage(`{"a"`), ProviderURL: "p"}, false},
		"empty data": {searchStructured{Data: json.RawMessage{}, ProviderURL: "p"}, false},
	} {
		got, ok := tc.s.encode()
		want, err := json.Marshal(&tc.s)
		if ok != tc.ok || ok != (err == nil) {
			t.Errorf("%s: encoded %v, want %v (json.Marshal: %v)", name, ok, tc.ok, err)
			continue
		}
		if ok && string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}
