package tools

import (
	"encoding/json"
	"errors"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeArguments(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    string
		code  string // "" = accepted
		param string
		msg   string
	}{
		{name: "minimal", in: `{"stream":"messages"}`},
		{name: "every argument", in: `{"stream":"messages","limit":100,"cursor":"c","order":"asc","sort":"-received_at","count":"exact",
			"filter":{"a":1},"fields":["id"],"view":"v","expand":["x"],"expand_limit":{"x":2},"changes_since":"beginning","connection_id":"cin_1"}`},
		{name: "nulls count as omitted", in: `{"stream":"messages","limit":null,"filter":null,"fields":null}`},
		{name: "integral float limit", in: `{"stream":"messages","limit":10.0}`},
		{name: "no arguments", in: ``, code: CodeInvalidArguments, param: "stream", msg: "requires stream"},
		{name: "null stream", in: `{"stream":null}`, code: CodeInvalidArguments, param: "stream", msg: "requires stream"},
		{name: "not an object", in: `[1]`, code: CodeInvalidArguments, msg: "must be a JSON object"},
		{name: "unknown argument", in: `{"stream":"m","bogus_param":1}`, code: CodeInvalidArguments, param: "bogus_param", msg: `does not accept "bogus_param"; accepted arguments: stream, limit`},
		{name: "connector_instance_id is not an alias", in: `{"stream":"m","connector_instance_id":"cin_1"}`, code: CodeInvalidArguments, param: "connector_instance_id"},
		{name: "bracket filter as argument", in: `{"stream":"m","filter[user_id]":"U1"}`, code: CodeInvalidFilter, param: "filter[user_id]"},
		{name: "bracket expand_limit as argument", in: `{"stream":"m","expand_limit[x]":1}`, code: CodeInvalidExpand, param: "expand_limit[x]"},
		{name: "limit too big", in: `{"stream":"m","limit":500}`, code: CodeInvalidArguments, param: "limit", msg: "limit must be an integer from 1 to 100; got 500"},
		{name: "limit zero", in: `{"stream":"m","limit":0}`, code: CodeInvalidArguments, param: "limit"},
		{name: "limit fraction", in: `{"stream":"m","limit":2.5}`, code: CodeInvalidArguments, param: "limit"},
		{name: "limit string", in: `{"stream":"m","limit":"10"}`, code: CodeInvalidArguments, param: "limit"},
		{name: "count enum", in: `{"stream":"m","count":"all"}`, code: CodeInvalidArguments, param: "count", msg: "one of none, estimated, exact"},
		{name: "empty stream", in: `{"stream":""}`, code: CodeInvalidArguments, param: "stream", msg: "non-empty string"},
		{name: "empty fields", in: `{"stream":"m","fields":[]}`, code: CodeInvalidArguments, param: "fields"},
		{name: "fields as string", in: `{"stream":"m","fields":"id,subject"}`, code: CodeInvalidArguments, param: "fields"},
		{name: "string filter", in: `{"stream":"m","filter":"user_id=U1"}`, code: CodeInvalidFilter, param: "filter"},
		{name: "empty filter", in: `{"stream":"m","filter":{}}`, code: CodeInvalidFilter, param: "filter"},
		{name: "empty expand_limit", in: `{"stream":"m","expand_limit":{}}`, code: CodeInvalidExpand, param: "expand_limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a queryArgs
			err := queryRecordsTool.args.decode(json.RawMessage(tc.in), &a)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				return
			}
			var te *toolError
			if !errors.As(err, &te) {
				t.Fatalf("err = %v, want a *toolError", err)
			}
			if te.Code != tc.code || te.Param != tc.param {
				t.Errorf("code %q param %q, want %q %q", te.Code, te.Param, tc.code, tc.param)
			}
			if !strings.Contains(te.Message, tc.msg) {
				t.Errorf("message %q does not contain %q", te.Message, tc.msg)
			}
			if te.Next == "" {
				t.Error("no next step")
			}
		})
	}
}

func TestDecodeFillsArguments(t *testing.T) {
	var a queryArgs
	in := `{"stream":"messages","limit":10,"fields":["id","subject"],"filter":{"is_seen":false},"expand":["attachments"],"expand_limit":{"attachments":3},"connection_id":"cin_1"}`
	if err := queryRecordsTool.args.decode(json.RawMessage(in), &a); err != nil {
		t.Fatal(err)
	}
	got := a.query().Encode()
	want := "limit=10&fields=id&fields=subject&expand=attachments&connection_id=cin_1" +
		"&filter%5Bis_seen%5D=false&expand_limit%5Battachments%5D=3"
	if got != want {
		t.Errorf("query\n got %s\nwant %s", got, want)
	}
}

// Validating argument by argument must accept and reject exactly what
// validating the whole advertised input schema does.
func TestArgSpecMatchesInputSchema(t *testing.T) {
	corpus := map[string][]string{
		"schema": {`{}`, `{"stream":"s"}`, `{"detail":"full","stream":"s","connection_id":"c"}`, `{"detail":"raw"}`,
			`{"stream":""}`, `{"x":1}`, `{"connection_id":""}`, `{"stream":5}`},
		"query_records": {`{"stream":"s"}`, `{}`, `{"stream":"s","limit":100}`, `{"stream":"s","limit":101}`,
			`{"stream":"s","order":"up"}`, `{"stream":"s","fields":["a",""]}`, `{"stream":"s","expand":[]}`,
			`{"stream":"s","changes_since":""}`, `{"stream":"s","cursor":7}`, `{"stream":"s","view":"v","sort":"a"}`,
			`{"stream":"s","filter":{"a":{"gte":1}}}`, `{"stream":"s","filter":"a"}`, `{"stream":"s","expand_limit":{"a":0}}`},
		"aggregate": {`{"stream":"s","metric":"count"}`, `{"stream":"s"}`, `{"stream":"s","metric":"avg"}`,
			`{"stream":"s","metric":"count","granularity":"decade"}`, `{"stream":"s","metric":"count","limit":0}`,
			`{"stream":"s","metric":"sum","field":"f","group_by":"g","group_by_time":"t","granularity":"day","time_zone":"UTC","limit":5,"filter":{"x":1},"connection_id":"c"}`,
			`{"stream":"s","metric":"count","time_zone":""}`},
	}
	specs := map[string]*argSpec{"schema": schemaTool.args.get(), "query_records": queryRecordsTool.args.get(), "aggregate": aggregateTool.args.get()}
	dsts := map[string]func() any{
		"schema":        func() any { return new(schemaArgs) },
		"query_records": func() any { return new(queryArgs) },
		"aggregate":     func() any { return new(aggregateArgs) },
	}
	for tool, inputs := range corpus {
		whole, err := specs[tool].schema.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range inputs {
			var v any
			if err := json.Unmarshal([]byte(in), &v); err != nil {
				t.Fatal(err)
			}
			wantOK := whole.Validate(v) == nil
			gotErr := specs[tool].decode(json.RawMessage(in), dsts[tool]())
			if (gotErr == nil) != wantOK {
				t.Errorf("%s %s: decode error %v, whole-schema accepts=%v", tool, in, gotErr, wantOK)
			}
		}
	}
}

func TestNameRule(t *testing.T) {
	for _, ok := range []string{"messages", "message_bodies", "a.b", "x:y", "a..b", "Work Gmail", strings.Repeat("n", MaxNameBytes)} {
		if err := checkName("stream", ok, true); err != nil {
			t.Errorf("checkName(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "a/b", `a\b`, "../etc", "a\x00b", "a\nb", "a\tb", "\x7f", " a", "a ", "\xff"} {
		if err := checkName("stream", bad, true); err == nil {
			t.Errorf("checkName(%q) accepted", bad)
		}
	}
	// Field names may contain '/' (the RS has no rule against it); control
	// characters are refused all the same.
	if err := checkName("fields", "a/b", false); err != nil {
		t.Errorf("field name a/b: %v", err)
	}
	var te *toolError
	if err := checkName("stream", strings.Repeat("n", MaxNameBytes+1), true); !errors.As(err, &te) || te.Code != CodeArgumentTooLarge {
		t.Errorf("oversized name: %v", err)
	}
}

// Whatever a client sends as arguments, decoding either succeeds or fails
// with a typed error; it never panics and never returns an untyped error.
func FuzzDecodeArguments(f *testing.F) {
	for _, in := range []string{`{"stream":"m"}`, `{"stream":"m","limit":5,"filter":{"a":{"gte":1}}}`, `null`, `[]`, `{"stream":null}`,
		`{"stream":"m","expand_limit":{"x":1},"expand":["x"]}`, `{"stream":"m","fields":["a"],"bogus":1}`, `{"stream":"m","limit":1e400}`} {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var a queryArgs
		err := queryRecordsTool.args.decode(json.RawMessage(in), &a)
		if err == nil {
			if a.Stream == "" {
				t.Fatalf("accepted %s without a stream", in)
			}
			if a.Limit != nil && (*a.Limit < 1 || *a.Limit > 100) {
				t.Fatalf("accepted limit %v", *a.Limit)
			}
			return
		}
		var te *toolError
		if !errors.As(err, &te) || te.Code == "" || te.Message == "" || te.Next == "" {
			t.Fatalf("decode(%s) = %v, want a complete *toolError", in, err)
		}
	})
}

// BenchmarkDecodeArguments is the argument check of one ordinary call.
func BenchmarkDecodeArguments(b *testing.B) {
	in := json.RawMessage(`{"stream":"messages","limit":10,"fields":["id","subject"],"filter":{"is_seen":false},"order":"desc"}`)
	for b.Loop() {
		var a queryArgs
		if err := queryRecordsTool.args.decode(in, &a); err != nil {
			b.Fatal(err)
		}
	}
}

// decodeValue's direct paths must give what json.Unmarshal gives, for any
// value an arguments object can hold.
func FuzzDecodeValue(f *testing.F) {
	for _, s := range []string{`"messages"`, `""`, `"a\"b"`, `"\u00e9"`, `"é"`, "\"\xff\"", `"a\tb"`, `25`, `-0`, `1.5e3`, `1e400`, `-1e-400`,
		`true`, `false`, `null`, `[]`, `["a",1]`, `{"a":1}`, ` "x" `, `0.1`, `123456789012345678901234567890`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		if !json.Valid(v) {
			return // values come out of a decoded object
		}
		var want any
		wantErr := json.Unmarshal(v, &want)
		got, err := decodeValue(v)
		if (err != nil) != (wantErr != nil) || (err == nil && !reflect.DeepEqual(got, want)) {
			t.Fatalf("decodeValue(%q) = %#v, %v; json.Unmarshal gives %#v, %v", v, got, err, want, wantErr)
		}
	})
}

// shownJSON must write what encoding/json's Encoder writes without HTML
// escaping, for any string; jsonString is it of the visible rendering.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "<mark>a</mark> & b", "\x00\b\f\n\r\t\"\\", "\u2028\u2029", "\xff<\xfe>", "é😀&", `\u003c<`, "<>&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got, want := shownJSON(s), strings.TrimSuffix(b.String(), "\n"); got != want {
			t.Fatalf("shownJSON(%q) = %s, want %s", s, got, want)
		}
		if got, want := jsonString(s), shownJSON(visible.String(s)); got != want {
			t.Fatalf("jsonString(%q) = %s, want %s", s, got, want)
		}
	})
}

// objectMembers must read what json.Unmarshal into a map of raw messages
// reads, whenever it reads anything.
func FuzzObjectMembers(f *testing.F) {
	for _, s := range []string{`{}`, `{"stream":"messages","limit":25}`, `{"a":1,"a":null}`, `{"a":[1,{"b":"}"}],"c":true,"d":-1.5e3}`,
		`{"e\u0073c":1}`, `{"é":1}`, "{\"\xff\":1}", `[1]`, `"s"`, `{"a":1`, ` { "a" : "x\"y" , "b" : { } } `, `{"a":"\\","b":false}`, `{"q":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := objectMembers(raw)
		if !ok {
			return
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("read %q, which json.Unmarshal refuses: %v", raw, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d members, want %d", raw, len(got), len(want))
		}
		for k, v := range want {
			if string(got[k]) != string(v) {
				t.Fatalf("%q: member %q is %s, want %s", raw, k, got[k], v)
			}
		}
	})
}

// Plain arguments take objectMembers' direct path.
func TestObjectMembersReadsPlainArguments(t *testing.T) {
	for _, raw := range []string{`{}`, `{"stream":"messages","limit":25}`, `{"id":"cin_a/messages:p1","fields":["subject","to"],"expand_limit":{"attachments":3},"x":null}`} {
		if _, ok := objectMembers([]byte(raw)); !ok {
			t.Errorf("%s took the fallback", raw)
		}
	}
}
