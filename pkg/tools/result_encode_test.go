package tools

import (
	"encoding/json"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
)

// TestReadResultEncodeMatchesMarshal: the read tools' structuredContent,
// written by hand from the RS's bytes, is what json.Marshal writes, and
// bytes that are not JSON are left for the server's encoding check.
func TestReadResultEncodeMatchesMarshal(t *testing.T) {
	for name, tc := range map[string]struct {
		r  readResult
		ok bool
	}{
		"minimal":    {readResult{ProviderURL: "http://rs"}, true},
		"nil data":   {readResult{Legend: json.RawMessage(`{}`)}, true},
		"everything": {readResult{Data: json.RawMessage(" {\"data\" : [ {\"s\":\"<b>&\u2028\"} ]}\n"), ContentLadder: jsonw.Encoded(`[1,2]`), Legend: json.RawMessage(`{"a":"b"}`), Omitted: "x <y>", ProviderURL: "http://rs/?a=1&b=2", RequestID: "req_1"}, true},
		"escapes":    {readResult{Data: json.RawMessage(`{"k":"\u00e9\/\"\\"}`), ProviderURL: "p"}, true},
		"not json":   {readResult{Data: json.RawMessage(`{"a":}`), ProviderURL: "p"}, false},
		"bad legend": {readResult{Data: json.RawMessage(`{}`), Legend: json.RawMessage(`[1,`), ProviderURL: "p"}, false},
		"empty data": {readResult{Data: json.RawMessage{}, ProviderURL: "p"}, false},
	} {
		got, ok := tc.r.encode()
		want, err := json.Marshal(&tc.r)
		if ok != tc.ok || ok != (err == nil) {
			t.Errorf("%s: encoded %v, want %v (json.Marshal: %v)", name, ok, tc.ok, err)
			continue
		}
		if ok && string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}
