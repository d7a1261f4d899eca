package probe

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParseCall(t *testing.T) {
	for _, tt := range []struct {
		line string
		want Call
		skip bool   // blank or comment
		err  string // substring of the error
	}{
		{line: "", skip: true},
		{line: "   \t ", skip: true},
		{line: "# schema", skip: true},
		{line: "  # indented comment", skip: true},
		{line: "schema", want: Call{Kind: KindTool, Tool: "schema", Text: "schema"}},
		{line: "  schema  ", want: Call{Kind: KindTool, Tool: "schema", Text: "schema"}},
		{line: `query_records {"stream":"mail_messages","limit":2}`,
			want: Call{Kind: KindTool, Tool: "query_records", Args: `{"stream":"mail_messages","limit":2}`, Text: `query_records {"stream":"mail_messages","limit":2}`}},
		{line: "query_records\t{\"stream\": \"a\"}",
			want: Call{Kind: KindTool, Tool: "query_records", Args: `{"stream": "a"}`, Text: "query_records\t{\"stream\": \"a\"}"}},
		{line: `fetch {"id":"$first_fetch_id"}`, want: Call{Kind: KindTool, Tool: "fetch", Args: `{"id":"$first_fetch_id"}`, Text: `fetch {"id":"$first_fetch_id"}`}},
		{line: `search {"q":"$$5 off"}`, want: Call{Kind: KindTool, Tool: "search", Args: `{"q":"$$5 off"}`, Text: `search {"q":"$$5 off"}`}},
		{line: `search {"$weird_key":1}`, want: Call{Kind: KindTool, Tool: "search", Args: `{"$weird_key":1}`, Text: `search {"$weird_key":1}`}},
		{line: "read_record_field $next_read_args", want: Call{Kind: KindTool, Tool: "read_record_field", Args: "$next_read_args", Text: "read_record_field $next_read_args"}},
		{line: `!query_records {"stream":"x"}`, want: Call{Kind: KindTool, Tool: "query_records", Args: `{"stream":"x"}`, ExpectError: true, Text: `!query_records {"stream":"x"}`}},
		{line: `! query_records`, want: Call{Kind: KindTool, Tool: "query_records", ExpectError: true, Text: `! query_records`}},
		{line: "tools/list", want: Call{Kind: KindListTools, Text: "tools/list"}},
		{line: "resources/read pdpp://stream/mail_labels", want: Call{Kind: KindReadResource, URI: "pdpp://stream/mail_labels", Text: "resources/read pdpp://stream/mail_labels"}},
		{line: "resources/read pdpp://record/${first_fetch_id}", want: Call{Kind: KindReadResource, URI: "pdpp://record/${first_fetch_id}", Text: "resources/read pdpp://record/${first_fetch_id}"}},

		{line: "!", err: "missing tool name"},
		{line: "tools/list {}", err: "tools/list takes no arguments"},
		{line: "!tools/list", err: "! applies to tool calls only"},
		{line: "resources/read", err: "needs a URI"},
		{line: "resources/read a b", err: "one URI without spaces"},
		{line: "!resources/read pdpp://x", err: "! applies to tool calls only"},
		{line: "resources/read pdpp://record/$nope", err: "unknown variable $nope"},
		{line: "prompts/list", err: `unknown method "prompts/list"`},
		{line: `"schema" {}`, err: `tool name "\"schema\"" has '"'`},
		{line: strings.Repeat("a", 129), err: "at most 128"},
		{line: "schema stream=x", err: "want a JSON object"},
		{line: "schema [1]", err: "want a JSON object"},
		{line: `schema {"stream":}`, err: "invalid JSON"},
		{line: `schema {"stream":"x"`, err: "invalid JSON"},
		{line: `schema {"stream":"x"} # why`, err: "unexpected text after the JSON object"},
		{line: `schema {} {}`, err: "unexpected text after the JSON object"},
		{line: `fetch {"id":"$first_fetchid"}`, err: "unknown variable $first_fetchid; known: $first_fetch_id"},
		{line: `fetch {"id":"$"}`, err: `"$" is not a variable reference`},
		{line: `fetch {"id":"$first fetch"}`, err: "is not a variable reference"},
		{line: "fetch $nope", err: "unknown variable $nope"},
		{line: "fetch $next read", err: "is not a variable reference"},
		{line: "schema {\"a\":\"\xff\"}", err: "not valid UTF-8"},
	} {
		t.Run(tt.line, func(t *testing.T) {
			c, ok, err := ParseCall("t:1", tt.line)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseCall(%q) error = %v, want one containing %q", tt.line, err, tt.err)
				}
				if !strings.HasPrefix(err.Error(), "t:1: ") {
					t.Errorf("error %q does not start with the source", err)
				}
				var se *ScriptError
				if !errors.As(err, &se) {
					t.Errorf("error is %T, want *ScriptError", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseCall(%q): %v", tt.line, err)
			}
			if ok == tt.skip {
				t.Fatalf("ParseCall(%q) ok = %v, want %v", tt.line, ok, !tt.skip)
			}
			if tt.skip {
				return
			}
			tt.want.Source = "t:1"
			if diff := cmp.Diff(tt.want, c); diff != "" {
				t.Errorf("ParseCall(%q) (-want +got):\n%s", tt.line, diff)
			}
		})
	}
}

func TestParseScript(t *testing.T) {
	script := `# A file header, separated by a blank line, belongs to no call.

# Granted streams.
schema

# Two comment lines
# describe this call.
query_records {"stream":"a"}
fetch {"id":"$first_fetch_id"}
`
	calls, err := ParseScript("s.probe", strings.NewReader(script))
	if err != nil {
		t.Fatal(err)
	}
	want := []Call{
		{Source: "s.probe:4", Text: "schema", Kind: KindTool, Tool: "schema", Comment: []string{"Granted streams."}},
		{Source: "s.probe:8", Text: `query_records {"stream":"a"}`, Kind: KindTool, Tool: "query_records", Args: `{"stream":"a"}`,
			Comment: []string{"Two comment lines", "describe this call."}},
		{Source: "s.probe:9", Text: `fetch {"id":"$first_fetch_id"}`, Kind: KindTool, Tool: "fetch", Args: `{"id":"$first_fetch_id"}`},
	}
	if diff := cmp.Diff(want, calls, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("ParseScript (-want +got):\n%s", diff)
	}
}

// Every bad line is reported, each with its line number, so a script is
// fixed in one pass.
func TestParseScriptReportsEveryError(t *testing.T) {
	script := "schema\nschema {\nfetch $nope\n\nprompts/list\n"
	_, err := ParseScript("bad.probe", strings.NewReader(script))
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	var sources []string
	for _, l := range lines {
		src, _, _ := strings.Cut(l, ": ")
		sources = append(sources, src)
	}
	if diff := cmp.Diff([]string{"bad.probe:2", "bad.probe:3", "bad.probe:5"}, sources); diff != "" {
		t.Errorf("error sources (-want +got):\n%s\nerror:\n%s", diff, err)
	}
}

func TestParseScriptLongLine(t *testing.T) {
	_, err := ParseScript("big.probe", strings.NewReader(`schema {"q":"`+strings.Repeat("x", maxLine)+`"}`))
	if err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("error = %v, want a line-too-long error", err)
	}
}

func TestTourParses(t *testing.T) {
	calls, err := Tour()
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]bool{}
	for _, c := range calls {
		tools[c.Tool] = true
		if len(c.Comment) == 0 && !strings.Contains(c.Args, "$next_changes_since") {
			t.Errorf("%s: tour call %q has no comment saying what it shows", c.Source, c.Text)
		}
	}
	for _, name := range []string{"schema", "query_records", "aggregate", "search", "fetch", "read_record_field"} {
		if !tools[name] {
			t.Errorf("the tour does not call %s", name)
		}
	}
	last := calls[len(calls)-1]
	if !strings.HasPrefix(last.Args, "$") && !strings.Contains(last.Args, `"$`) {
		t.Errorf("the tour ends with %q, which does not continue from an earlier result", last.Text)
	}
}

// FuzzParseCall checks that the parser never panics and that what it accepts
// is consistent: arguments are a JSON object or one variable, and parsing the
// call's own text gives the same call.
func FuzzParseCall(f *testing.F) {
	for _, s := range []string{
		"schema", `query_records {"stream":"a","limit":2}`, "read_record_field $next_read_args",
		`!fetch {"id":"$first_fetch_id"}`, "tools/list", "resources/read pdpp://record/$first_fetch_id",
		`search {"q":"$$x","a":["$next_cursor"]}`, "# c", `x {"\"$":"\\u0024next_cursor"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		c, ok, err := ParseCall("f", line)
		if err != nil || !ok {
			return
		}
		again, ok2, err2 := ParseCall("f", c.Text)
		if err2 != nil || !ok2 || !cmp.Equal(c, again) {
			t.Fatalf("reparsing %q: %+v, %v, %v; first parse %+v", c.Text, again, ok2, err2, c)
		}
		switch c.Kind {
		case KindTool:
			if c.Args != "" && !strings.HasPrefix(c.Args, "$") {
				var obj map[string]json.RawMessage
				if err := json.Unmarshal([]byte(c.Args), &obj); err != nil {
					t.Fatalf("accepted arguments %q are not a JSON object: %v", c.Args, err)
				}
			}
			if err := checkToolName(c.Tool); err != nil || c.Tool == "" {
				t.Fatalf("accepted tool name %q: %v", c.Tool, err)
			}
		case KindReadResource:
			if c.URI == "" || strings.ContainsAny(c.URI, " \t") {
				t.Fatalf("accepted URI %q", c.URI)
			}
		}
	})
}
