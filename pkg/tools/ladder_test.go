package tools_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/resultid"
)

// reads collects every ready-to-send call a result offers: its content
// ladder's field, JSON and hit reads, and fetch's continuations.
func reads(sc gjson.Result) []gjson.Result {
	var out []gjson.Result
	ladders := []gjson.Result{sc.Get("content_ladder"), sc.Get("metadata.content_ladder")}
	for _, l := range ladders {
		entries := l.Get("records").Array()
		if l.Get("kind").Str == "record" {
			entries = []gjson.Result{l}
		}
		for _, e := range entries {
			for _, k := range []string{"field_windows", "json_fields"} {
				e.Get(k).ForEach(func(_, f gjson.Result) bool {
					out = append(out, f.Get("read"))
					return true
				})
			}
		}
	}
	for _, k := range []string{"metadata.next", "metadata.more_fields", "next", "previous"} {
		if r := sc.Get(k); r.Exists() {
			out = append(out, r)
		}
	}
	return out
}

// journeys are the call sequences, on the gmail and demo datasets, whose
// results the following tests take apart.
var journeys = []struct {
	name  string
	demo  bool
	calls []map[string]any
}{
	{"gmail", false, []map[string]any{
		{"tool": "query_records", "stream": "messages", "limit": 5},
		{"tool": "query_records", "stream": "message_bodies", "limit": 5},
		{"tool": "query_records", "stream": "attachments", "connection_id": "cin_gmail_personal"},
		{"tool": "query_records", "stream": "threads", "limit": 3},
		{"tool": "query_records", "stream": "labels", "connection_id": "cin_gmail_work", "limit": 3},
		{"tool": "search", "q": "Lisbon"},
		{"tool": "search", "q": "flight itinerary", "mode": "semantic"},
		{"tool": "search", "q": "invoice", "mode": "hybrid"},
		{"tool": "fetch", "id": "cin_gmail_personal/attachments:p_msg_002_att_1"},
	}},
	{"demo", true, []map[string]any{
		{"tool": "query_records", "stream": "mail_messages", "limit": 3},
		{"tool": "query_records", "stream": "mail_bodies", "limit": 3},
		{"tool": "query_records", "stream": "mail_attachments", "limit": 3},
		{"tool": "query_records", "stream": "chat_messages", "limit": 3},
		{"tool": "query_records", "stream": "transactions", "limit": 3},
		{"tool": "query_records", "stream": "calendar_events", "limit": 3},
		{"tool": "search", "q": "launch", "limit": 10},
		{"tool": "search", "q": "marigold contingency"},
		{"tool": "fetch", "id": "cin_3a769b3e43e3792e0a811ceb/mail_bodies:177aa15315e811e9_body"},
	}},
}

// Every read a result offers is accepted by the tool it names, against the
// RS: followed one by one, none is refused. Reads of fetch answers reached
// this way are followed too.
func TestLaddersAreFollowable(t *testing.T) {
	for _, tc := range journeys {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{demo: tc.demo})
			followed, fetched := 0, map[string]bool{}
			var follow func(sc gjson.Result, depth int)
			follow = func(sc gjson.Result, depth int) {
				for _, r := range reads(sc) {
					tool := r.Get("tool").Str
					var args map[string]any
					if err := json.Unmarshal([]byte(r.Get("args").Raw), &args); err != nil || tool == "" {
						t.Fatalf("malformed read %s", r.Raw)
					}
					if tool == "fetch" && fetched[r.Get("args").Raw] {
						continue
					}
					res := h.call(t, tool, args)
					followed++
					if res.IsError {
						t.Errorf("%s %s refused:\n%s", tool, r.Get("args").Raw, text(res))
						continue
					}
					// A fetch offers reads of its own; follow them once.
					if tool == "fetch" && depth < 2 {
						fetched[r.Get("args").Raw] = true
						follow(gjson.Get(h.wire.last(), "result.structuredContent"), depth+1)
					}
				}
			}
			for _, c := range tc.calls {
				args := map[string]any{}
				for k, v := range c {
					if k != "tool" {
						args[k] = v
					}
				}
				res := h.call(t, c["tool"].(string), args)
				if res.IsError {
					t.Fatalf("%v: %s", c, text(res))
				}
				sc := gjson.Get(h.wire.last(), "result.structuredContent")
				if len(reads(sc)) == 0 && !sc.Get("content_ladder.records.#(shown_whole>0)").Exists() && sc.Get("metadata.content_ladder.shown_whole").Int() == 0 {
					t.Errorf("%v offers no reads and its text does not show the records whole", c)
				}
				follow(sc, 0)
			}
			t.Logf("followed %d reads", followed)
		})
	}
}

// handleKeys are the text keys whose value is a record id.
var handleKeys = []string{"id=", "first_fetch_id="}

// handlesIn takes every record handle out of text the way a naive client
// would: split on whitespace, then take the value of id=/first_fetch_id=, or
// a token that starts with pdpp://record/.
func handlesIn(text string) []string {
	var out []string
	for _, tok := range strings.Fields(text) {
		if strings.HasPrefix(tok, resultid.RecordScheme) {
			out = append(out, tok)
			continue
		}
		for _, k := range handleKeys {
			if v, ok := strings.CutPrefix(tok, k); ok && v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

// Every handle printed in the text of the journeys (and of the reads their
// results offer) survives a whitespace tokenizer: fetch accepts it as taken.
func TestHandlesInTextAreFollowable(t *testing.T) {
	for _, tc := range journeys {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{demo: tc.demo})
			var texts []string
			for _, c := range tc.calls {
				args := map[string]any{}
				for k, v := range c {
					if k != "tool" {
						args[k] = v
					}
				}
				res := h.call(t, c["tool"].(string), args)
				texts = append(texts, text(res))
				for _, r := range reads(gjson.Get(h.wire.last(), "result.structuredContent")) {
					var ra map[string]any
					if err := json.Unmarshal([]byte(r.Get("args").Raw), &ra); err != nil {
						t.Fatal(err)
					}
					texts = append(texts, text(h.call(t, r.Get("tool").Str, ra)))
				}
			}
			seen := map[string]bool{}
			for _, txt := range texts {
				for _, id := range handlesIn(txt) {
					if seen[id] {
						continue
					}
					seen[id] = true
					if res := h.call(t, "fetch", map[string]any{"id": id}); res.IsError {
						t.Errorf("handle %q taken from text is refused:\n%s\nin:\n%s", id, text(res), txt)
					}
				}
			}
			if len(seen) < 10 {
				t.Errorf("only %d handles found in the journey texts", len(seen))
			}
			t.Logf("followed %d handles", len(seen))
		})
	}
}

// The tokenizer is what the test above relies on; it must take a handle
// with trailing punctuation as it is, so that such a handle fails there.
func TestHandlesInTakesTokensWhole(t *testing.T) {
	got := handlesIn("search: 1 hit(s) first_fetch_id=c/s:r1. x\n1. id=c/s:r2 pdpp://record/abc")
	want := []string{"c/s:r1.", "c/s:r2", "pdpp://record/abc"}
	if !slices.Equal(got, want) {
		t.Errorf("handlesIn = %q, want %q", got, want)
	}
}

// Record keys with whitespace, commas, quotes or brackets are printed as
// pdpp://record/ handles, which a tokenizer takes whole and fetch accepts.
func TestAwkwardIDsAreCopyable(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	for _, key := range []string{"two words", `say "hi"`, "a,b", "[x]", "ends."} {
		raw, _ := json.Marshal(map[string]any{"id": key, "name": "awkward " + key})
		h.rs.Upsert("cin_gmail_work", "labels", dataset.Record{Key: key, Data: raw})
	}
	res := h.call(t, "query_records", map[string]any{"stream": "labels", "connection_id": "cin_gmail_work", "limit": 100, "fields": []string{"name"}})
	if res.IsError {
		t.Fatal(text(res))
	}
	fetched := map[string]bool{}
	for _, id := range handlesIn(text(res)) {
		got := h.call(t, "fetch", map[string]any{"id": id})
		if got.IsError {
			t.Errorf("handle %q refused:\n%s", id, text(got))
			continue
		}
		fetched[gjson.Get(text(got), "metadata.record_id").Str] = true
	}
	for _, key := range []string{"two words", `say "hi"`, "a,b", "[x]", "ends."} {
		if !fetched[key] {
			t.Errorf("no handle in the text reaches record %q:\n%s", key, text(res))
		}
	}
}
