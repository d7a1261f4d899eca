package probe

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNormalizer(t *testing.T) {
	n := NewNormalizer()
	n.Redact("tok_SECRET", "")
	for _, tt := range []struct{ in, want string }{
		{`error code=not_found http_status=404 request_id=req_0d7cbe40b9667b7b`, `error code=not_found http_status=404 request_id=<request-id>`},
		{`{"provider_url":"x","request_id":"req_abc"}`, `{"provider_url":"x","request_id":"<request-id>"}`},
		{`{"request_id":null}`, `{"request_id":null}`},
		{`Request-Id: 9f8e-77`, `Request-Id: <request-id>`},
		{`"{\"request_id\":\"req_1\"}"`, `"{\"request_id\":\"<request-id>\"}"`},
		{`has_more=true. next_cursor="eyJh==". Showing`, `has_more=true. next_cursor="<cursor-1>". Showing`},
		{`{"cursor":"eyJh=="}`, `{"cursor":"<cursor-1>"}`},                 // same value, same number
		{`next_changes_since="eyJr"`, `next_changes_since="<cursor-2>"`},   // a new value
		{`{"changes_since":"beginning"}`, `{"changes_since":"beginning"}`}, // content, not state
		{`complete=false next_cursor=108 previous_cursor=92`, `complete=false next_cursor=108 previous_cursor=92`},
		{`{"cursor":"108"}`, `{"cursor":"108"}`},
		{`next_cursor=tok_x.`, `next_cursor=<cursor-3>.`},
		{`"links":{"next":"/v1/streams/a/records?limit=3&cursor=eyJh==&x=1"}`, `"links":{"next":"/v1/streams/a/records?limit=3&cursor=<cursor-1>&x=1"}`},
		{`{"next_cursor":null}`, `{"next_cursor":null}`},
		{`"url":"http://127.0.0.1:41235/v1/streams/a"`, `"url":"http://127.0.0.1:<port>/v1/streams/a"`},
		{`http://localhost:8080 and http://[::1]:9 and https://pdpp.example.com:443`, `http://localhost:<port> and http://[::1]:<port> and https://pdpp.example.com:443`},
		{`recursor="abc" cursored=1`, `recursor="abc" cursored=1`},
		{`echo: Bearer tok_SECRET`, `echo: Bearer [redacted]`},
	} {
		if got := n.String(tt.in); got != tt.want {
			t.Errorf("String(%s)\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
}

func testResult(n int, text string) *Result {
	return &Result{
		N:      n,
		Call:   Call{Kind: KindTool, Tool: "query_records", Args: `{"cursor":"$next_cursor"}`, Text: `query_records {"cursor":"$next_cursor"}`},
		Args:   []byte(`{"cursor":"eyJh"}`),
		Uses:   []Use{{Name: "next_cursor", Value: []byte(`"eyJh"`), From: n - 1, FromName: "query_records"}},
		Blocks: []Block{{Label: "content[0] text", Text: text}, {Label: "content[1] image", Note: "image/png, 3 bytes"}},
		Size:   Size{Bytes: len(text), Chars: len(text), Tokens: 7},
	}
}

func TestTranscript(t *testing.T) {
	got := string(Transcript(testResult(2, "records: 2. next_cursor=\"eyJi\" request_id=req_1\nrecord[0] x"), NewNormalizer()))
	want := `# pdpp-mcp-probe golden transcript (volatile values normalised; see docs/probe.md)
call 2: query_records {"cursor":"$next_cursor"}
sent: {"cursor":"<cursor-1>"}
uses: $next_cursor from call 1 (query_records)
result: ok
size: 59 bytes, 59 chars received; 23 tokens (o200k_base) as shown
--- content[0] text (59 bytes) ---
records: 2. next_cursor="<cursor-2>" request_id=<request-id>
record[0] x
--- content[1] image: image/png, 3 bytes ---
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Transcript (-want +got):\n%s", diff)
	}

	failed := &Result{N: 4, Call: Call{Kind: KindTool, Tool: "nope", Text: "nope"}, Err: errors.New("tools/call nope:\n unknown tool")}
	if got := string(Transcript(failed, NewNormalizer())); !strings.HasSuffix(got, "call 4: nope\nresult: failed: tools/call nope: unknown tool\n") {
		t.Errorf("failed call transcript:\n%s", got)
	}
}

func TestRecordCheck(t *testing.T) {
	dir := t.TempDir()
	// A transcript left from an earlier, longer run, and a file that is not
	// a transcript.
	os.WriteFile(filepath.Join(dir, "009-old.txt"), []byte("stale"), 0o644)
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("kept"), 0o644)

	run := []*Result{testResult(1, "first"), testResult(2, "second page")}
	rec, err := NewRecorder(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range run {
		if err := rec.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := rec.Finish()
	if err != nil || !cmp.Equal(removed, []string{"009-old.txt"}) {
		t.Fatalf("Finish removed %v, %v; want the stale transcript", removed, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
		t.Fatalf("Finish removed a file that is not a transcript: %v", err)
	}

	check := func(results ...*Result) []Mismatch {
		t.Helper()
		chk, err := NewChecker(dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []Mismatch
		for _, r := range results {
			m, err := chk.Check(r)
			if err != nil {
				t.Fatal(err)
			}
			if m != nil {
				out = append(out, *m)
			}
		}
		return append(out, chk.Finish()...)
	}

	if ms := check(run...); len(ms) != 0 {
		t.Fatalf("the recorded run does not check clean: %+v", ms)
	}
	// Other cursor values, used the same way, are not a change.
	var same []*Result
	for _, r := range []*Result{testResult(1, "first"), testResult(2, "second page")} {
		r.Args = []byte(`{"cursor":"other"}`)
		r.Uses[0].Value = []byte(`"other"`)
		same = append(same, r)
	}
	if ms := check(same...); len(ms) != 0 {
		t.Fatalf("volatile values made a mismatch: %+v", ms)
	}

	changed := testResult(2, "second page, reworded")
	ms := check(testResult(1, "first"), changed)
	if len(ms) != 1 || ms[0].N != 2 || ms[0].File != "002-query_records.txt" {
		t.Fatalf("mismatches = %+v, want call 2", ms)
	}
	if want := "the size (11 bytes, 11 chars received; 2 tokens (o200k_base) as shown → 21 bytes, 21 chars received; 6 tokens (o200k_base) as shown), the model-visible text changed"; ms[0].Reason != want {
		t.Errorf("reason = %q, want %q", ms[0].Reason, want)
	}
	for _, want := range []string{"first difference: line 8, character 12\n  golden:   second page\n  this run: second page, reworded\n",
		"-second page\n", "+second page, reworded\n", "golden: 002-query_records.txt"} {
		if !strings.Contains(ms[0].Diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, ms[0].Diff)
		}
	}

	errored := testResult(1, "first")
	errored.IsError = true
	if ms := check(errored, testResult(2, "second page")); len(ms) != 1 || !strings.Contains(ms[0].Reason, "the outcome changed") {
		t.Errorf("an isError flip: %+v", ms)
	}

	ms = check(testResult(1, "first"))
	if len(ms) != 1 || !strings.Contains(ms[0].Reason, "have call 2 (002-query_records.txt) but this run made 1 calls") {
		t.Errorf("a shorter run: %+v", ms)
	}
	ms = check(testResult(1, "first"), testResult(2, "second page"), testResult(3, "third"))
	if len(ms) != 1 || !strings.Contains(ms[0].Reason, "no golden transcript of call 3") || !strings.Contains(ms[0].Diff, "+call 3:") {
		t.Errorf("a longer run: %+v", ms)
	}

	if _, err := NewChecker(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "create it with --record") {
		t.Errorf("NewChecker on a missing directory: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "001-again.txt"), []byte("x"), 0o644)
	if _, err := NewChecker(dir); err == nil || !strings.Contains(err.Error(), "two transcripts of call 1") {
		t.Errorf("NewChecker with two files for one call: %v", err)
	}
}
