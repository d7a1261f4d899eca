package tools

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

func TestParseFilter(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want rs.Query
	}{
		{"exact string", `{"user_id":"U123"}`, rs.Query{{Key: "filter[user_id]", Value: "U123"}}},
		{"exact bool and number", `{"has_attachments":true,"size_bytes":2028,"ratio":1.50}`, rs.Query{
			{Key: "filter[has_attachments]", Value: "true"},
			{Key: "filter[size_bytes]", Value: "2028"},
			{Key: "filter[ratio]", Value: "1.5"},
		}},
		{"large integer keeps every digit", `{"n":9007199254740993}`, rs.Query{{Key: "filter[n]", Value: "9007199254740993"}}},
		{"exponent normalised", `{"n":1e3}`, rs.Query{{Key: "filter[n]", Value: "1000"}}},
		{"empty string is a value", `{"subject":""}`, rs.Query{{Key: "filter[subject]", Value: ""}}},
		{"range keeps written order", `{"received_at":{"lt":"2026-02-01","gte":"2026-01-01"}}`, rs.Query{
			{Key: "filter[received_at][lt]", Value: "2026-02-01"},
			{Key: "filter[received_at][gte]", Value: "2026-01-01"},
		}},
		{"fields keep written order", `{"z":"1","a":{"gt":5}}`, rs.Query{
			{Key: "filter[z]", Value: "1"},
			{Key: "filter[a][gt]", Value: "5"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseFilter([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, rs.Query(got)); diff != "" {
				t.Errorf("params (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseFilterRejects(t *testing.T) {
	for _, tc := range []struct {
		name, in, msg string
	}{
		{"bracket string", `"filter[user_id]=U123"`, "must be an object"},
		{"comparison string", `"amount>100"`, "must be an object"},
		{"bare term", `"user_id=U123"`, "must be an object"},
		{"json in a string", `"{\"user_id\":\"U123\"}"`, "got a string"},
		{"empty string", `""`, "must be an object"},
		{"blank string", `"   "`, "must be an object"},
		{"array", `["a"]`, "got an array"},
		{"number", `5`, "got a number"},
		{"empty object", `{}`, "at least one field"},
		{"pre-encoded key", `{"filter[user_id]":"U123"}`, "not pre-encoded bracket syntax"},
		{"bracket inside key", `{"user_id]":"U123"}`, "not pre-encoded bracket syntax"},
		{"empty key", `{"":"x"}`, "non-empty"},
		{"null value", `{"a":null}`, "got null"},
		{"array value", `{"a":[1,2]}`, "got an array"},
		{"unknown operator", `{"amount":{"between":5}}`, `operator "between"`},
		{"empty range", `{"amount":{}}`, "at least one of gte"},
		{"object range value", `{"amount":{"gte":{"x":1}}}`, "got an object"},
		{"null range value", `{"amount":{"gte":null}}`, "got null"},
		{"invalid json", `{"a":`, "not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseFilter([]byte(tc.in))
			var te *toolError
			if !errors.As(err, &te) {
				t.Fatalf("err = %v, want *toolError", err)
			}
			if te.Code != CodeInvalidFilter || te.Param != "filter" {
				t.Errorf("code %q param %q, want invalid_filter/filter", te.Code, te.Param)
			}
			if !strings.Contains(te.Message, tc.msg) {
				t.Errorf("message %q does not mention %q", te.Message, tc.msg)
			}
			if !strings.Contains(te.Next, `{"received_at": {"gte"`) {
				t.Errorf("next %q shows no typed example", te.Next)
			}
		})
	}
}

func TestParseExpandLimit(t *testing.T) {
	got, err := parseExpandLimit([]byte(`{"messages":3,"attachments":10}`))
	if err != nil {
		t.Fatal(err)
	}
	want := rs.Query{{Key: "expand_limit[messages]", Value: "3"}, {Key: "expand_limit[attachments]", Value: "10"}}
	if diff := cmp.Diff(want, rs.Query(got)); diff != "" {
		t.Errorf("params (-want +got):\n%s", diff)
	}
	for _, in := range []string{`{}`, `{"expand_limit[messages]":3}`, `{"":3}`, `{"m":0}`, `{"m":-1}`, `{"m":1.5}`, `{"m":"3"}`, `"messages=3"`, `[3]`, `{"m":null}`} {
		_, err := parseExpandLimit([]byte(in))
		var te *toolError
		if !errors.As(err, &te) || te.Code != CodeInvalidExpand {
			t.Errorf("parseExpandLimit(%s) = %v, want an invalid_expand error", in, err)
		}
	}
}

// The advertised filter schema and the parser must agree, so that a client
// validating against the schema is not surprised. Range bounds are typed
// (string or number) so strict clients see no untyped property.
func TestFilterSchemaAgreesWithParser(t *testing.T) {
	prop := queryRecordsTool.args.get().props["filter"]
	for _, tc := range filterCorpus {
		var v any
		if err := json.Unmarshal([]byte(tc.in), &v); err != nil {
			t.Fatalf("corpus entry %s: %v", tc.in, err)
		}
		_, perr := parseFilter([]byte(tc.in))
		if got := perr == nil; got != tc.ok {
			t.Errorf("parseFilter(%s) accepted=%v, want %v (%v)", tc.in, got, tc.ok, perr)
		}
		want := tc.ok || tc.schemaOnly
		if got := prop.Validate(v) == nil; got != want {
			t.Errorf("schema accepts %s = %v, want %v", tc.in, got, want)
		}
	}
}

var filterCorpus = []struct {
	in string
	ok bool
	// schemaOnly marks inputs the schema cannot tell apart from valid ones.
	schemaOnly bool
}{
	{in: `{"a":"x"}`, ok: true}, {in: `{"a":1}`, ok: true}, {in: `{"a":true}`, ok: true},
	{in: `{"a":{"gte":1}}`, ok: true}, {in: `{"a":{"gte":"2026-01-01","lt":"2026-02-01"}}`, ok: true},
	{in: `{}`}, {in: `"a=1"`}, {in: `[]`}, {in: `{"a[b]":1}`}, {in: `{"":1}`}, {in: `{"a":null}`},
	{in: `{"a":[1]}`}, {in: `{"a":{}}`}, {in: `{"a":{"between":1}}`},
	{in: `{"a":{"gte":[1]}}`}, {in: `{"a":{"gte":{"x":1}}}`},
	{in: `{"a":{"gte":null}}`}, {in: `{"a":{"gte":true}}`},
}

func FuzzParseFilter(f *testing.F) {
	for _, tc := range filterCorpus {
		f.Add(tc.in)
	}
	prop := queryRecordsTool.args.get().props["filter"]
	f.Fuzz(func(t *testing.T, in string) {
		params, err := parseFilter([]byte(in))
		if err != nil {
			var te *toolError
			if !errors.As(err, &te) || te.Code != CodeInvalidFilter {
				t.Fatalf("error %v is not an invalid_filter toolError", err)
			}
			return
		}
		if len(params) == 0 {
			t.Fatal("accepted filter produced no parameters")
		}
		for _, p := range params {
			rest, ok := strings.CutPrefix(p.Key, "filter[")
			if !ok || !strings.HasSuffix(rest, "]") {
				t.Fatalf("parameter key %q is not filter[...]", p.Key)
			}
			field, op, ranged := strings.Cut(strings.TrimSuffix(rest, "]"), "][")
			if strings.TrimSpace(field) == "" || strings.ContainsAny(field, "[]") {
				t.Fatalf("field %q of %q is empty or bracketed", field, p.Key)
			}
			if ranged && !isRangeOp(op) {
				t.Fatalf("operator %q of %q is not a range operator", op, p.Key)
			}
		}
		var v any
		if err := json.Unmarshal([]byte(in), &v); err != nil {
			t.Fatalf("accepted invalid JSON %q", in)
		}
		if err := prop.Validate(v); err != nil {
			t.Fatalf("accepted %s, which the advertised schema rejects: %v", in, err)
		}
	})
}

func FuzzParseExpandLimit(f *testing.F) {
	for _, in := range []string{`{"a":1}`, `{"a":3,"b":50}`, `{}`, `{"a":0}`, `{"a[":1}`, `"x"`} {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		params, err := parseExpandLimit([]byte(in))
		if err != nil {
			var te *toolError
			if !errors.As(err, &te) || te.Code != CodeInvalidExpand {
				t.Fatalf("error %v is not an invalid_expand toolError", err)
			}
			return
		}
		for _, p := range params {
			rel := relation(p)
			if strings.TrimSpace(rel) == "" || strings.ContainsAny(rel, "[]") || p.Key != "expand_limit["+rel+"]" {
				t.Fatalf("bad parameter %+v", p)
			}
			if p.Value == "" || p.Value[0] == '-' || p.Value == "0" {
				t.Fatalf("limit %q is not positive", p.Value)
			}
		}
	})
}
