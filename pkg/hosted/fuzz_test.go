package hosted

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// FuzzIntrospectionAnswer: whatever the endpoint answers, a principal comes
// out only for valid JSON with "active": true and a kind; anything else is
// a 401/403 refusal or, for a broken answer, undecided (never cached).
func FuzzIntrospectionAnswer(f *testing.F) {
	for _, s := range []string{
		`{"active":true,"pdpp_token_kind":"client","grant_id":"g","exp":1900000000}`,
		`{"active":false,"inactive_reason":"grant_revoked"}`,
		`{"active":"true","pdpp_token_kind":"owner"}`,
		`{"active":true,"exp":"soon"}`,
		`[]`, `null`, `{"active":true,"pdpp_token_kind":""}`,
		`{"active":true,"pdpp_token_kind":"client","aud":"a","aud":"b"}`,
		`{"active":true,"pdpp_token_kind":"client","a\u0075d":"a","aud":"b"}`,
		`{"active":false,"active":true,"pdpp_token_kind":"client"}`,
	} {
		f.Add(s)
	}
	in := &Introspector{Now: func() time.Time { return time.Unix(1_800_000_000, 0) }}
	f.Fuzz(func(t *testing.T, body string) {
		p, err := in.principal([]byte(body))
		repeats := topLevelRepeats(body)
		if err == nil {
			if p == nil || p.Kind == "" || !json.Valid([]byte(body)) || !strings.Contains(body, "true") || repeats {
				t.Fatalf("accepted %q as %+v", body, p)
			}
			return
		}
		ae, ok := err.(*AuthError)
		if !ok && (!json.Valid([]byte(body)) || repeats) {
			return // undecided: answered 503, never served
		}
		if !ok || (ae.Status != http.StatusUnauthorized && ae.Status != http.StatusForbidden) {
			t.Fatalf("refusal %v for %q", err, body)
		}
	})
}

// topLevelRepeats reports whether body is a JSON object holding a key
// twice, as encoding/json reads keys (escapes decoded).
func topLevelRepeats(body string) bool {
	dec := json.NewDecoder(strings.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		k, _ := tok.(string)
		if seen[k] {
			return true
		}
		seen[k] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
}

// FuzzHostRules: the host check never panics, and an accepted host-derived
// origin is always scheme://host with nothing after the host.
func FuzzHostRules(f *testing.F) {
	for _, s := range []string{"127.0.0.1:8080", "evil.example", "[::1]:80", "a.trusted.example", "x/y@z", "10.0.0.1", ""} {
		f.Add(s, "")
		f.Add(s, "a.trusted.example")
	}
	h := &Handler{o: Options{TrustedHosts: []string{"*.trusted.example"}}}
	f.Fuzz(func(t *testing.T, host, fwd string) {
		r := &http.Request{Host: host, Header: http.Header{"X-Forwarded-Host": {fwd}}, RemoteAddr: "127.0.0.1:1"}
		base, _, herr := h.resolveOrigin(r)
		if herr != nil {
			return
		}
		rest, ok := strings.CutPrefix(base, "http://")
		if !ok || rest == "" || strings.ContainsAny(rest, "/?#@ \"<>\\") {
			t.Fatalf("host %q gave origin %q", host, base)
		}
	})
}

// FuzzParseDirect: a body the direct path takes is one JSON object that
// encoding/json reads as the same request (id, method, tool name or URI,
// arguments), with nothing else in it; anything parseDirect cannot vouch
// for is refused, never misread.
func FuzzParseDirect(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"aggregate","arguments":{"stream":"m"}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"schema"}}`,
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"schema"}}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"schema"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"schema","_meta":{}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"schema"}}]`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"n\u0061me":"schema"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"schema"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"pdpp://stream/m"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"pdpp://stream/m\u0065"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"name":"pdpp://stream/m"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"a","arguments":{}}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		c, ok := parseDirect([]byte(body))
		if !ok {
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(body), &m); err != nil || len(m) != 4 {
			t.Fatalf("took %q (%v, %d keys)", body, err, len(m))
		}
		var params map[string]json.RawMessage
		var p struct {
			Name      string          `json:"name"`
			URI       string          `json:"uri"`
			Arguments json.RawMessage `json:"arguments"`
		}
		var id any
		var method string
		if json.Unmarshal(m["params"], &p) != nil || json.Unmarshal(m["params"], &params) != nil ||
			json.Unmarshal(m["id"], &id) != nil || json.Unmarshal(m["method"], &method) != nil ||
			string(m["jsonrpc"]) != `"2.0"` || method != c.method || string(m["method"]) != `"`+method+`"` {
			t.Fatalf("took %q", body)
		}
		allowed := map[string][]string{"tools/call": {"name", "arguments", "_meta"}, "tools/list": {"_meta"}, "resources/read": {"uri", "_meta"}}[method]
		if allowed == nil {
			t.Fatalf("took method %q", method)
		}
		for k := range params {
			if !slices.Contains(allowed, k) {
				t.Fatalf("took %q with params key %q", body, k)
			}
		}
		name := map[string]string{"tools/call": p.Name, "resources/read": p.URI}[method]
		if name != c.name || string(p.Arguments) != string(c.args) || string(m["id"]) != c.rawID {
			t.Fatalf("took %q as name %q args %q id %s", body, c.name, c.args, c.rawID)
		}
		if method != "tools/list" && name == "" && !strings.Contains(body, `""`) {
			t.Fatalf("took %q without its name", body)
		}
		if fmt.Sprint(c.id.Raw()) != strings.Trim(c.rawID, `"`) {
			t.Fatalf("id %s read as %v", c.rawID, c.id.Raw())
		}
		if len(p.Arguments) > 0 && p.Arguments[0] != '{' {
			t.Fatalf("took arguments %s", p.Arguments)
		}
	})
}
