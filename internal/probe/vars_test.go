package probe

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The texts below are shaped like the tools' own (see testdata/tour for the
// real thing); each row says what a handle reads from one.
func TestHandles(t *testing.T) {
	const (
		id      = "cin_a/mail_bodies:177a_body"
		argsTxt = `{"id":"cin_a/mail_bodies:177a_body","field_path":"body_text","offset_chars":20272,"limit_chars":4096}`
	)
	for _, tt := range []struct {
		name, handle, text string
		want               string // JSON; "" means not found
	}{
		{"search id with a full stop", "first_fetch_id",
			"search: 1 hit(s). total_matches=1 (exact). first_fetch_id=" + id + ".\n1. id=x", `"` + id + `"`},
		{"search id before more text", "first_fetch_id", "first_fetch_id=" + id + " source_mix={…}", `"` + id + `"`},
		{"quoted id", "first_fetch_id", `first_fetch_id="a b/c:d"`, `"a b/c:d"`},
		{"no hits", "first_fetch_id", "search: 0 hit(s).", ""},
		{"null", "first_fetch_id", "first_fetch_id=null", ""},
		{"quoted cursor", "next_cursor", `records: 3 record(s). has_more=true. next_cursor="eyJ9=". Showing up to 3:`, `"eyJ9="`},
		{"escaped quote in cursor", "next_cursor", `next_cursor="a\"b"`, `"a\"b"`},
		{"numeric window cursor", "next_cursor", "record=x field=body chars=0..8 complete=false next_cursor=108 previous_cursor=92", `"108"`},
		{"first of two wins", "next_cursor", "next_cursor=\"page\"\n1. complete=false next_cursor=\"hit\"", `"page"`},
		{"longer name does not match", "next_cursor", `has_next_cursor="x"`, ""},
		{"previous is not next", "next_cursor", "previous_cursor=92", ""},
		{"empty quoted value", "next_cursor", `next_cursor="" next_cursor="b"`, `"b"`},
		{"unterminated quote", "next_cursor", `next_cursor="abc`, ""},
		{"changes token", "next_changes_since", `0 record(s). next_changes_since="eyJr==".`, `"eyJr=="`},
		{"window continuation", "next_read_args",
			"record=x complete=false\nnext read_record_field args=" + argsTxt + "\nprevious read_record_field args={\"id\":\"p\"}", argsTxt},
		{"fetch continuation", "next_read_args",
			`{"id":"x","metadata":{"text_truncated":true,"next":{"tool":"read_record_field","args":` + argsTxt + `},"more_fields":{"tool":"fetch","args":{"id":"x"}}}}`, argsTxt},
		{"previous only", "next_read_args", `previous read_record_field args={"id":"p"}`, ""},
		{"not an object", "next_read_args", `next read_record_field args=[1]`, ""},
		{"search evidence read", "first_read_args",
			`   evidence field_path=body_text read_record_field args={"id":"x","field_path":"body_text","q":"marigold"}`,
			`{"id":"x","field_path":"body_text","q":"marigold"}`},
		{"window: first is next", "first_read_args",
			"next read_record_field args={\"id\":\"n\"}\nprevious read_record_field args={\"id\":\"p\"}", `{"id":"n"}`},
		{"spaces inside the object are dropped", "first_read_args", `read_record_field args={ "id" : "x" }`, `{"id":"x"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, ok := lookupHandle(tt.handle)
			if !ok {
				t.Fatalf("no handle %s", tt.handle)
			}
			got, found := h.find(tt.text)
			if tt.want == "" {
				if found {
					t.Fatalf("%s found %s in %q, want nothing", tt.handle, got, tt.text)
				}
				return
			}
			if !found || string(got) != tt.want {
				t.Fatalf("%s = %s, %v; want %s", tt.handle, got, found, tt.want)
			}
		})
	}
}

func TestVarsLifecycle(t *testing.T) {
	v := NewVars()
	call := func(args string) Call { return Call{Kind: KindTool, Tool: "query_records", Args: args, Source: "s:9"} }

	// Nothing seen yet.
	_, _, err := v.Expand(1, call(`{"cursor":"$next_cursor"}`))
	var ve *VarError
	if !errors.As(err, &ve) || ve.Name != "next_cursor" {
		t.Fatalf("Expand before any result = %v, want a *VarError for next_cursor", err)
	}
	for _, want := range []string{"call 1 (query_records, s:9)", "$next_cursor is not available", "no earlier result's content[] text shows next_cursor="} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}

	v.Observe(1, "query_records", `3 record(s). has_more=true. next_cursor="c1".`)
	args, uses, err := v.Expand(2, call(`{"stream":"a", "cursor":"$next_cursor"}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(args) != `{"stream":"a","cursor":"c1"}` {
		t.Errorf("args = %s", args)
	}
	if diff := cmp.Diff([]Use{{Name: "next_cursor", Value: []byte(`"c1"`), From: 1, FromName: "query_records"}}, uses); diff != "" {
		t.Errorf("uses (-want +got):\n%s", diff)
	}

	// Another tool's result without the handle leaves it alone.
	v.Observe(2, "aggregate", "count(x) = 3")
	if _, _, err := v.Expand(3, call(`{"cursor":"$next_cursor"}`)); err != nil {
		t.Errorf("after an aggregate result: %v", err)
	}
	// The last page (same tool, no cursor) ends the journey.
	v.Observe(3, "query_records", "1 record(s).")
	_, _, err = v.Expand(4, call(`{"cursor":"$next_cursor"}`))
	if err == nil || !strings.Contains(err.Error(), "the latest query_records result (call 3) shows no next_cursor=") {
		t.Errorf("after the last page: %v", err)
	}
	// A new result brings it back.
	v.Observe(4, "search", `search: 2 hit(s). next_cursor="s2".`)
	if args, _, err := v.Expand(5, call(`{"cursor":"$next_cursor"}`)); err != nil || string(args) != `{"cursor":"s2"}` {
		t.Errorf("after a search result: %s, %v", args, err)
	}
}

func TestExpand(t *testing.T) {
	v := NewVars()
	v.Observe(1, "search", "first_fetch_id=cin_a/s:r1 next_cursor=\"c\\\"1\"\nevidence read_record_field args={\"id\":\"cin_a/s:r1\",\"q\":\"x\"}")
	for _, tt := range []struct {
		name, args, want, err string
	}{
		{name: "no arguments", args: "", want: "{}"},
		{name: "value", args: `{"id":"$first_fetch_id"}`, want: `{"id":"cin_a/s:r1"}`},
		{name: "escaped value", args: `{"cursor":"$next_cursor"}`, want: `{"cursor":"c\"1"}`},
		{name: "inside an array", args: `{"ids":["$first_fetch_id", "x"]}`, want: `{"ids":["cin_a/s:r1","x"]}`},
		{name: "object value", args: `{"read":"$first_read_args"}`, want: `{"read":{"id":"cin_a/s:r1","q":"x"}}`},
		{name: "whole arguments", args: "$first_read_args", want: `{"id":"cin_a/s:r1","q":"x"}`},
		{name: "literal dollar", args: `{"q":"$$first_fetch_id costs $5"}`, want: `{"q":"$first_fetch_id costs $5"}`},
		{name: "a key is never replaced", args: `{"$first_fetch_id":"$first_fetch_id"}`, want: `{"$first_fetch_id":"cin_a/s:r1"}`},
		{name: "part of a string is not a reference", args: `{"q":"id $first_fetch_id"}`, want: `{"q":"id $first_fetch_id"}`},
		{name: "key order kept", args: `{"z":1,"a":"$first_fetch_id","m":2}`, want: `{"z":1,"a":"cin_a/s:r1","m":2}`},
		{name: "string as whole arguments", args: "$first_fetch_id", err: "holds a string, not an argument object"},
		{name: "missing", args: `{"since":"$next_changes_since"}`, err: "$next_changes_since is not available"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := v.Expand(2, Call{Kind: KindTool, Tool: "fetch", Args: tt.args, Source: "t:2"})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Expand(%s) = %s, %v; want error containing %q", tt.args, got, err, tt.err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("Expand(%s) = %s, %v; want %s", tt.args, got, err, tt.want)
			}
		})
	}
}

func TestExpandURI(t *testing.T) {
	v := NewVars()
	v.Observe(1, "search", "first_fetch_id=\"cin_a/mail messages:r$1\" next read_record_field args={\"id\":\"x\"}")
	for _, tt := range []struct{ uri, want, err string }{
		{uri: "pdpp://record/$first_fetch_id", want: "pdpp://record/cin_a%2Fmail%20messages:r$1"},
		{uri: "pdpp://record/${first_fetch_id}x", want: "pdpp://record/cin_a%2Fmail%20messages:r$1x"},
		{uri: "pdpp://stream/a$$b", want: "pdpp://stream/a$b"},
		{uri: "pdpp://record/$next_read_args", err: "holds an argument object"},
		{uri: "pdpp://record/$next_cursor", err: "$next_cursor is not available"},
	} {
		got, _, err := v.ExpandURI(2, Call{Kind: KindReadResource, URI: tt.uri, Source: "t:2"})
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ExpandURI(%s) = %q, %v; want error containing %q", tt.uri, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ExpandURI(%s) = %q, %v; want %q", tt.uri, got, err, tt.want)
		}
	}
}

func TestBlobHandles(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
		find             func(string) (json.RawMessage, bool)
	}{
		{"in a record's JSON text", `{"text":"{\"blob_ref\":{\"fetch\":\"pdpp://blob/cin_a/blob_1\"}}"}`, `"pdpp://blob/cin_a/blob_1"`, blobHandle},
		{"plain", `see pdpp://blob/cin_a/b%2F1 for the bytes`, `"pdpp://blob/cin_a/b%2F1"`, blobHandle},
		{"continuation", `{"metadata":{"next":{"tool":"fetch","args":{"id":"pdpp://blob/c/b?offset_chars=16384"}}}}`, `"pdpp://blob/c/b?offset_chars=16384"`, nextFetchID},
		{"none", `{"metadata":{"shown":"the whole text"}}`, "", nextFetchID},
	} {
		got, ok := tc.find(tc.text)
		if string(got) != tc.want || ok != (tc.want != "") {
			t.Errorf("%s: %s %v, want %s", tc.name, got, ok, tc.want)
		}
	}
}
