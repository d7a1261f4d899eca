package tools_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/resultid"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

// Each mode reaches its route with the arguments in a stable order: q,
// streams, limit, cursor, connection_id, then filter entries.
func TestSearchForwarding(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind pdpptest.TokenKind
		args map[string]any
		want string
	}{
		{"lexical by default", "", map[string]any{"q": "Lisbon"}, "/v1/search?q=Lisbon"},
		{"lexical", "", map[string]any{"q": "Lisbon", "mode": "lexical", "limit": 2}, "/v1/search?q=Lisbon&limit=2"},
		{"semantic", "", map[string]any{"q": "flight booking", "mode": "semantic", "streams": []string{"messages", "message_bodies"}},
			"/v1/search/semantic?q=flight booking&streams=messages&streams=message_bodies"},
		{"hybrid", "", map[string]any{"q": "Lisbon", "mode": "hybrid", "connection_id": "cin_gmail_work"}, "/v1/search/hybrid?q=Lisbon&connection_id=cin_gmail_work"},
		{"cursor", "", map[string]any{"q": "Lisbon", "limit": 100, "cursor": "c1"}, "/v1/search?q=Lisbon&limit=100&cursor=c1"},
		{"owner filter", pdpptest.TokenOwner, map[string]any{"q": "Lisbon", "streams": []string{"messages"}, "connection_id": "cin_gmail_work",
			"filter": map[string]any{"received_at": map[string]any{"gte": "2026-01-01T00:00:00Z"}}},
			"/v1/search?q=Lisbon&streams=messages&connection_id=cin_gmail_work&filter[received_at][gte]=2026-01-01T00:00:00Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{kind: tc.kind})
			res := h.call(t, "search", tc.args)
			reqs := h.toolRequests(t)
			if len(reqs) != 1 || reqs[0].String() != tc.want {
				t.Errorf("RS requests %v, want [%s]", reqs, tc.want)
			}
			if tc.name != "cursor" && res.IsError {
				t.Errorf("error: %s", text(res))
			}
		})
	}
}

// Every refusal happens before the RS is asked anything.
func TestSearchRejections(t *testing.T) {
	for _, tc := range []struct {
		name string
		args map[string]any
		code string
		want string
	}{
		{"missing q", map[string]any{"limit": 5}, "invalid_arguments", "search requires q"},
		{"empty q", map[string]any{"q": ""}, "invalid_arguments", "q must be a non-empty string"},
		{"blank q", map[string]any{"q": "   "}, "invalid_arguments", "q is blank"},
		{"limit over 100", map[string]any{"q": "x", "limit": 101}, "invalid_arguments", "limit must be an integer from 1 to 100; got 101"},
		{"limit zero", map[string]any{"q": "x", "limit": 0}, "invalid_arguments", "limit must be an integer from 1 to 100"},
		{"unknown mode", map[string]any{"q": "x", "mode": "fuzzy"}, "invalid_arguments", "mode must be one of lexical, semantic, hybrid"},
		{"hybrid cursor", map[string]any{"q": "x", "mode": "hybrid", "cursor": "c1"}, "invalid_arguments", "hybrid search returns a single page"},
		{"stream traversal", map[string]any{"q": "x", "streams": []string{"../schema"}}, "invalid_arguments", "streams"},
		{"empty streams", map[string]any{"q": "x", "streams": []string{}}, "invalid_arguments", "streams must be"},
		{"connection traversal", map[string]any{"q": "x", "connection_id": ".."}, "invalid_arguments param=connection_id", "path traversal"},
		{"connection slash", map[string]any{"q": "x", "connection_id": "cin/x"}, "invalid_arguments param=connection_id", `contains '/'`},
		{"string filter", map[string]any{"q": "x", "filter": "filter[a]=b"}, "invalid_filter", "filter must be an object"},
		{"empty filter", map[string]any{"q": "x", "streams": []string{"messages"}, "filter": map[string]any{}}, "invalid_filter", "at least one field"},
		{"filter without one stream", map[string]any{"q": "x", "filter": map[string]any{"a": "b"}}, "invalid_filter", "exactly one entry in streams"},
		{"alias argument", map[string]any{"q": "x", "connector_instance_id": "cin_gmail_work"}, "invalid_arguments", `does not accept "connector_instance_id"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{})
			res := h.call(t, "search", tc.args)
			if !res.IsError || !strings.HasPrefix(text(res), "error code="+tc.code) || !strings.Contains(text(res), tc.want) {
				t.Errorf("want %s with %q, got:\n%s", tc.code, tc.want, text(res))
			}
			if n := len(h.rs.Requests()); n != 0 {
				t.Errorf("%d RS requests", n)
			}
		})
	}
}

var (
	firstFetchID = regexp.MustCompile(`first_fetch_id=(\S+)`)
	listedID     = regexp.MustCompile(`(?m)^\d+\. id=(\S+)`)
)

func TestSearchResult(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	res := h.call(t, "search", map[string]any{"q": "Lisbon", "limit": 5})
	if res.IsError {
		t.Fatal(text(res))
	}
	sc := gjson.Get(h.wire.last(), "result.structuredContent")
	results := sc.Get("results").Array()
	if len(results) != 5 {
		t.Fatalf("%d results", len(results))
	}
	txt := text(res)

	// The ids in text are byte-identical to results[i].id, first_fetch_id
	// included, and each embeds the hit's connection.
	m := firstFetchID.FindStringSubmatch(txt)
	if m == nil || m[1] != results[0].Get("id").Str {
		t.Errorf("first_fetch_id %v, results[0].id %q", m, results[0].Get("id").Str)
	}
	listed := listedID.FindAllStringSubmatch(txt, -1)
	if len(listed) < 3 {
		t.Fatalf("only %d hits listed:\n%s", len(listed), txt)
	}
	for i, l := range listed {
		if l[1] != results[i].Get("id").Str {
			t.Errorf("listed id %q, results[%d].id %q", l[1], i, results[i].Get("id").Str)
		}
	}
	for i, r := range results {
		id, err := resultid.Parse(r.Get("id").Str)
		switch {
		case err != nil:
			t.Errorf("result %d id: %v", i, err)
		case !id.HasConnection() || id.ConnectionID() != r.Get("connection_id").Str:
			t.Errorf("result %d id %q does not embed connection_id %q", i, r.Get("id").Str, r.Get("connection_id").Str)
		case id.Stream() != r.Get("stream").Str || id.RecordID() != r.Get("record_key").Str:
			t.Errorf("result %d id %q disagrees with stream %q record_key %q", i, id, r.Get("stream").Str, r.Get("record_key").Str)
		}
		for _, k := range []string{"title", "url", "connector_key", "display_name", "snippet"} {
			if r.Get(k).Str == "" {
				t.Errorf("result %d has no %s: %s", i, k, r.Raw)
			}
		}
		// Absolute, on the provider, naming the connection the RS leaves out.
		u, err := url.Parse(r.Get("url").Str)
		if err != nil || !strings.HasPrefix(r.Get("url").Str, h.rs.URL()+"/v1/streams/") || u.Query().Get("connection_id") != id.ConnectionID() {
			t.Errorf("result %d url %q", i, r.Get("url").Str)
		}
		if r.Get("connector_key").Str != "gmail" {
			t.Errorf("connector_key %q is not the short key", r.Get("connector_key").Str)
		}
		// A readable identity distinct from the snippet.
		if title := r.Get("title").Str; title == r.Get("snippet").Str || !strings.Contains(title, " / ") {
			t.Errorf("title %q", title)
		}
		if s := r.Get("snippet").Str; strings.Count(s, "<mark>") != strings.Count(s, "</mark>") {
			t.Errorf("unbalanced snippet %q", s)
		}
	}

	// data is the envelope without a second copy of the hits.
	data := sc.Get("data")
	if data.Get("data").Exists() || data.Get("result_count").Int() != 5 || data.Get("results_ref").Str != "structuredContent.results" ||
		data.Get("next_cursor").Str == "" || !data.Get("meta.recall").Exists() {
		t.Errorf("data %s", data.Raw)
	}
	for _, w := range []string{
		"search: 5 hit(s) has_more=true next_cursor=" + jsonQuote(data.Get("next_cursor").Str) + " ",
		"total_matches=10 count_accuracy=exact ",
		"source_mix={connection_id:cin_gmail_personal,connector_key:gmail,count:3}|{connection_id:cin_gmail_work,connector_key:gmail,count:2}\n",
		`connector_key=gmail stream=messages title="Personal Gmail / messages / 2026-01-17T11:14:00.000Z" snippet="<mark>Lisbon</mark> Air"`,
		`evidence field_path=from_name read_record_field args={"id":"cin_gmail_personal/messages:p_msg_003","field_path":"from_name","q":"Lisbon","before_chars":200,"after_chars":200}`,
		"fetch(id) with an id exactly as shown",
	} {
		if !strings.Contains(txt, w) {
			t.Errorf("text lacks %q:\n%s", w, txt)
		}
	}
	if strings.Contains(txt, "Recall:") {
		t.Errorf("recall warning without a bounded candidate window:\n%s", txt)
	}

	// The ladder names only record fields (anchor bug 9.1.2).
	ladder := sc.Get("content_ladder")
	if ladder.Get("kind").Str != "search_results" || len(ladder.Get("records").Array()) != 5 {
		t.Errorf("ladder %s", ladder.Raw)
	}
	ladder.Get("records.#.field_windows.#.field_path").ForEach(func(_, fields gjson.Result) bool {
		fields.ForEach(func(_, f gjson.Result) bool {
			if slices.Contains([]string{"title", "url", "record_key", "display_name", "record_url", "connector_id"}, f.Str) {
				t.Errorf("ladder names the hit attribute %q", f.Str)
			}
			return true
		})
		return true
	})

	// The next page, from the cursor in the text.
	h.rs.ResetRequests()
	page2 := h.call(t, "search", map[string]any{"q": "Lisbon", "limit": 5, "cursor": data.Get("next_cursor").Str})
	// The header counts the hits listed, and says the total when it lists
	// fewer.
	shown := len(regexp.MustCompile(`(?m)^\d+\. id=`).FindAllString(text(page2), -1))
	head := fmt.Sprintf("search: %d of 5 hit(s) listed ", shown)
	if shown == 5 {
		head = "search: 5 hit(s) "
	}
	if page2.IsError || !strings.HasPrefix(text(page2), head) || strings.Contains(text(page2), "has_more=true") {
		t.Errorf("page 2:\n%s", text(page2))
	}
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// limit counts merged hits, whatever the RS sends.
func TestSearchLimitIsHitsReturned(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.rs.Fault(pdpptest.Fault{Path: "/v1/search", Status: 200, Header: map[string][]string{"Content-Type": {"application/json"}},
		Body: []byte(`{"object":"list","has_more":false,"data":[` +
			`{"object":"search_result","stream":"messages","record_key":"a","connection_id":"cin_gmail_work"},` +
			`{"object":"search_result","stream":"messages","record_key":"b","connection_id":"cin_gmail_work"},` +
			`{"object":"search_result","stream":"messages","record_key":"c","connection_id":"cin_gmail_work"}]}`)})
	res := h.call(t, "search", map[string]any{"q": "x", "limit": 2})
	if n := len(structured(t, res)["results"].([]any)); n != 2 {
		t.Errorf("%d results for limit 2", n)
	}
	if !strings.Contains(text(res), "has_more=true ") || !strings.Contains(text(res), "1 hits beyond limit=2") {
		t.Errorf("the cut is not reported:\n%s", text(res))
	}
}

// The recall warning comes from meta.recall alone.
func TestSearchRecallWarning(t *testing.T) {
	h := newHarness(t, harnessOptions{demo: true})
	res := h.call(t, "search", map[string]any{"q": "launch", "limit": 3})
	if !strings.Contains(text(res), "Recall: ranked over a bounded candidate window, not all matches (ranked_candidate_count=") ||
		!strings.Contains(text(res), "candidate_window_limit=200") {
		t.Errorf("no recall warning:\n%s", text(res))
	}
	// has_more alone never implies it.
	res = h.call(t, "search", map[string]any{"q": "launch", "limit": 3, "mode": "semantic"})
	if strings.Contains(text(res), "Recall:") {
		t.Errorf("semantic search without meta.recall warns:\n%s", text(res))
	}
}

func TestSearchRSErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"client filter ban", map[string]any{"q": "x", "streams": []string{"messages"}, "filter": map[string]any{"a": "b"}}, "error code=invalid_request http_status=400"},
		{"ungranted stream", map[string]any{"q": "x", "streams": []string{"nope"}}, "http_status="},
		{"bad cursor", map[string]any{"q": "Lisbon", "cursor": "junk"}, "error code=invalid_cursor http_status=400"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{})
			res := h.call(t, "search", tc.args)
			if !res.IsError || !strings.Contains(text(res), tc.want) {
				t.Errorf("want %q:\n%s", tc.want, text(res))
			}
			if n := len(h.toolRequests(t)); n != 1 {
				t.Errorf("%d RS requests, want 1", n)
			}
		})
	}
}

// The text a model reads, pinned (the snapshot cursor differs per run).
func TestSearchTextGolden(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	res := h.call(t, "search", map[string]any{"q": "Lisbon", "limit": 5})
	cursor := gjson.Get(h.wire.last(), "result.structuredContent.data.next_cursor").Str
	if res.IsError || cursor == "" {
		t.Fatal(text(res))
	}
	tools.Golden(t, "golden/search-lisbon.txt", []byte(strings.ReplaceAll(text(res), cursor, "<cursor>")+"\n"))
}

// Hybrid search has no cursor: when it finds more than it shows, its text
// gives a way on that works (a larger limit, or a paged mode), never paging
// by cursor.
func TestHybridMoreHitsWayOn(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	res := h.call(t, "search", map[string]any{"q": "the", "mode": "hybrid", "limit": 2})
	txt := text(res)
	if res.IsError || !strings.Contains(txt, "has_more=true") {
		t.Fatalf("want a hybrid page with more hits:\n%s", txt)
	}
	if !strings.Contains(txt, "search again with a larger limit (up to 100), or search with mode lexical and with mode semantic, both with limit=100") {
		t.Errorf("no way to the other hits:\n%s", txt)
	}
	if strings.Contains(txt, "page by cursor") || strings.Contains(txt, "next_cursor=") {
		t.Errorf("hybrid text points at a cursor of its own:\n%s", txt)
	}
	// The advice works: a larger limit returns more hits.
	more := h.call(t, "search", map[string]any{"q": "the", "mode": "hybrid", "limit": 10})
	if more.IsError || len(structured(t, more)["results"].([]any)) <= 2 {
		t.Errorf("a larger limit did not reach more hits:\n%s", text(more))
	}
}
