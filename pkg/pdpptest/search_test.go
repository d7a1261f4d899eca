package pdpptest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// searchClock is a settable clock for snapshot expiry.
type searchClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *searchClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *searchClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// hitKeys lists "connection/stream/key" for each hit of a search answer.
func hitKeys(a answer) []string {
	var out []string
	for _, h := range a.j("data").Array() {
		out = append(out, h.Get("connection_id").String()+"/"+h.Get("stream").String()+"/"+h.Get("record_key").String())
	}
	return out
}

// quokkas writes n personal messages whose subject matches "quokka".
func quokkas(srv *Server, n int) {
	for i := range n {
		id := fmt.Sprintf("q_msg_%03d", i)
		srv.Upsert("cin_gmail_personal", "messages", dataset.Record{Key: id, EmittedAt: "2026-03-01T00:00:00.000Z",
			Data: json.RawMessage(fmt.Sprintf(`{"id":%q,"subject":"Quokka sighting %d","received_at":"2026-01-20T00:00:00.000Z"}`, id, i))})
	}
}

func TestLexicalSearchErrors(t *testing.T) {
	srv := New(t, Options{Dataset: gmailWith(t, map[string]string{"narrow": narrowGrant})})
	client, owner, narrow := srv.Token(TokenClient), srv.Token(TokenOwner), srv.IssueClientToken("narrow")
	for _, tc := range []struct {
		name, token, target string
		status              int
		code, param         string
	}{
		{"client filter", client, "/v1/search?q=x&filter[subject]=x", 400, "invalid_request", "filter"},
		{"client expand", client, "/v1/search?q=x&expand[]=thread", 400, "invalid_request", "expand"},
		{"client expand_limit", client, "/v1/search?q=x&expand_limit[thread]=2", 400, "invalid_request", "expand_limit"},
		{"client ban before the allowlist", client, "/v1/search?view=compact&filter[a]=b", 400, "invalid_request", "filter"},
		{"fields", client, "/v1/search?q=x&fields=id", 400, "invalid_request", "fields"},
		{"view", owner, "/v1/search?q=x&view=compact", 400, "invalid_request", "view"},
		{"connector_id", owner, "/v1/search?q=x&connector_id=gmail", 400, "invalid_request", "connector_id"},
		{"q missing", client, "/v1/search", 400, "invalid_request", "q"},
		{"q empty", client, "/v1/search?q=", 400, "invalid_request", "q"},
		{"q repeated", client, "/v1/search?q=a&q=b", 400, "invalid_request", "q"},
		{"owner filter without streams", owner, "/v1/search?q=x&filter[subject]=x", 400, "invalid_request", "streams"},
		{"owner filter with two streams", owner, "/v1/search?q=x&streams=messages&streams=threads&filter[subject]=x", 400, "invalid_request", "streams"},
		{"owner filter on an unknown field", owner, "/v1/search?q=x&streams[]=messages&filter[nope]=1", 400, "unknown_field", "filter"},
		{"owner range filter not declared", owner, "/v1/search?q=x&streams[]=messages&filter[subject][gte]=a", 400, "invalid_request", "filter"},
		{"alias conflict", client, "/v1/search?q=x&connection_id=cin_gmail_work&connector_instance_id=cin_gmail_personal", 400, "invalid_argument", "connector_instance_id"},
		{"client stream outside the grant", narrow, "/v1/search?q=x&streams[]=message_bodies", 403, "grant_stream_not_allowed", "streams"},
		{"client unknown stream", client, "/v1/search?q=x&streams=threads&streams=nope", 403, "grant_stream_not_allowed", "streams"},
		{"client connection outside the grant", client, "/v1/search?q=x&connection_id=cin_nope", 401, "context.instance_mismatch", ""},
		{"owner unknown connection", owner, "/v1/search?q=x&connection_id=cin_nope", 404, "connection_not_found", "connection_id"},
		{"cursor not base64", client, "/v1/search?q=x&cursor=%21%21%21", 400, "invalid_cursor", "cursor"},
		{"cursor not ours", client, "/v1/search?q=x&cursor=" + base64.RawURLEncoding.EncodeToString([]byte(`{"kind":"page"}`)), 400, "invalid_cursor", "cursor"},
		{"cursor negative offset", client, "/v1/search?q=x&cursor=" + encodeSearchCursor("", "snap_0", -1), 400, "invalid_cursor", "cursor"},
		{"cursor for an unknown snapshot", client, "/v1/search?q=x&cursor=" + encodeSearchCursor("", "snap_0000000000000000", 2), 400, "invalid_cursor", "cursor"},
		{"semantic cursor", client, "/v1/search?q=x&cursor=" + encodeSearchCursor(semanticCursorPrefix, "snap_0000000000000000", 2), 400, "invalid_cursor", "cursor"},
		{"no bearer", "", "/v1/search?q=x", 401, "authentication_error", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, get(t, srv, tc.token, tc.target), tc.status, tc.code, tc.param)
		})
	}
}

// TestLexicalSearchMatchesReference checks what the parity test leaves
// aside: the scores. The double ranks with FTS5's bm25 over the same corpus,
// so the values equal the captured ones.
func TestLexicalSearchMatchesReference(t *testing.T) {
	srv := New(t, Options{})
	for _, name := range []string{"search-lexical", "search-lexical-connection", "search-lexical-streams", "search-hybrid"} {
		t.Run(name, func(t *testing.T) {
			body, target := readSearchCapture(t, name)
			a := get(t, srv, srv.Token(TokenClient), target)
			wantOK(t, a)
			want := gjson.ParseBytes(body).Get("data").Array()
			got := a.j("data").Array()
			if len(got) != len(want) {
				t.Fatalf("%d hits, capture %d", len(got), len(want))
			}
			for i := range want {
				for _, path := range []string{"score.value", "scores.lexical.value", "scores.semantic.value"} {
					w, g := want[i].Get(path), got[i].Get(path)
					if w.Exists() != g.Exists() || w.Exists() && math.Abs(w.Float()-g.Float()) > 1e-12*math.Abs(w.Float()) {
						t.Errorf("hit %d (%s) %s = %s, capture %s", i, got[i].Get("record_key"), path, g.Raw, w.Raw)
					}
				}
			}
		})
	}
}

// readSearchCapture returns a capture's body and its request target.
func readSearchCapture(t *testing.T, name string) ([]byte, string) {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(fixturesDir, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := readCapture(filepath.Join(fixturesDir, name+".req"))
	if err != nil {
		t.Fatal(err)
	}
	return body, c.target.RequestURI()
}

func TestLexicalSearchAnswer(t *testing.T) {
	srv := New(t, Options{})
	client := srv.Token(TokenClient)
	a := get(t, srv, client, "/v1/search?q=Lisbon")
	wantOK(t, a)
	// Connections alternate while both have hits; each hit names its own.
	var conns []string
	for _, h := range a.j("data").Array() {
		conns = append(conns, strings.TrimPrefix(h.Get("connection_id").String(), "cin_gmail_"))
		if h.Get("display_name").String() == "" || h.Get("connector_instance_id").String() != h.Get("connection_id").String() {
			t.Errorf("identity of %s", h.Raw)
		}
	}
	if got := strings.Join(conns, " "); got != "personal work personal work personal work personal personal personal personal" {
		t.Errorf("connections = %s", got)
	}
	for path, want := range map[string]string{
		"object": "list", "url": "/v1/search", "has_more": "false", "links.self": "/v1/search?q=Lisbon", "links.next": "null",
		"meta.count": "10", "meta.count_accuracy": "exact", "meta.recall.complete": "true", "meta.recall.ranking_scope": "all_matches",
		"meta.recall.sources_searched_count": "2", "meta.recall.ranked_candidate_count": "10", "meta.warnings": "[]",
	} {
		if got := a.j(path).Raw; got != want && a.j(path).String() != want {
			t.Errorf("%s = %s, want %s", path, got, want)
		}
	}
	if a.j("next_cursor").Exists() {
		t.Error("next_cursor on the last page")
	}
	// Every hit's read descriptors lead to readable data.
	for _, h := range a.j("data").Array() {
		conn := h.Get("connection_id").String()
		wantOK(t, get(t, srv, client, h.Get("record_url").String()+"?connection_id="+conn))
		read := h.Get("evidence_excerpts.0.read")
		if read.Get("connection_id").String() != conn || read.Get("field").String() != h.Get("snippet.field").String() ||
			h.Get("evidence_excerpts.0.preview_text").String() != h.Get("snippet.text").String() ||
			!slices.Contains(stringsOf(h.Get("matched_fields")), read.Get("field").String()) {
			t.Errorf("evidence of %s", h.Raw)
		}
		w := get(t, srv, client, read.Get("route").String()+"?"+url.Values{"connection_id": {conn}, "field": {read.Get("field").String()}}.Encode())
		wantOK(t, w)
		plain := strings.NewReplacer("<mark>", "", "</mark>", "").Replace(h.Get("snippet.text").String())
		if !strings.Contains(w.j("window.text").String(), strings.Trim(plain, "…")) {
			t.Errorf("snippet %q is not from the field %q", plain, w.j("window.text"))
		}
	}
	// A narrowed search sees one connection.
	a = get(t, srv, client, "/v1/search?q=Lisbon&connection_id=cin_gmail_work")
	wantOK(t, a)
	if got := strings.Join(hitKeys(a), " "); got != "cin_gmail_work/messages/w_msg_004 cin_gmail_work/threads/w_thr_004 cin_gmail_work/message_bodies/w_msg_004_body" ||
		a.j("meta.recall.sources_searched_count").Int() != 1 {
		t.Errorf("work hits = %s, sources %d", got, a.j("meta.recall.sources_searched_count").Int())
	}
	// Nothing matches: an empty, complete answer.
	a = get(t, srv, client, "/v1/search?q=zanzibar")
	wantOK(t, a)
	if a.j("data.#").Int() != 0 || a.j("meta.count").Int() != 0 || !a.j("meta.recall.complete").Bool() {
		t.Errorf("no-match answer = %s", a.body)
	}
}

func stringsOf(r gjson.Result) []string {
	var out []string
	for _, x := range r.Array() {
		out = append(out, x.String())
	}
	return out
}

// TestLexicalSearchGrant: only granted streams and fields are searched, and
// records outside the grant's window never match.
func TestLexicalSearchGrant(t *testing.T) {
	srv := New(t, Options{Dataset: gmailWith(t, map[string]string{"narrow": narrowGrant})})
	client, owner, narrow := srv.Token(TokenClient), srv.Token(TokenOwner), srv.IssueClientToken("narrow")
	for _, tc := range []struct {
		name, token, query, want string
	}{
		// snippet is withheld from narrow: p_msg_003 matches there only.
		{"withheld field never matches", narrow, "q=Greenleaf", "cin_gmail_personal/messages/p_msg_004"},
		{"the full grant finds it", client, "q=Greenleaf", "cin_gmail_personal/messages/p_msg_004 cin_gmail_personal/messages/p_msg_003 cin_gmail_personal/message_bodies/p_msg_003_body"},
		// p_msg_007 and p_msg_008 fall after the window; bodies are withheld.
		{"time window and withheld streams", narrow, "q=Lisbon", "cin_gmail_personal/messages/p_msg_003 cin_gmail_work/threads/w_thr_004 cin_gmail_personal/threads/p_thr_006 cin_gmail_personal/messages/p_msg_002 cin_gmail_personal/threads/p_thr_002"},
		{"streams narrow the search", client, "q=Lisbon&streams[]=threads", "cin_gmail_personal/threads/p_thr_006 cin_gmail_work/threads/w_thr_004 cin_gmail_personal/threads/p_thr_002"},
		{"owner: streams is a soft filter", owner, "q=Lisbon&streams=nope", ""},
		{"owner range filter", owner, "q=Lisbon&streams[]=messages&filter[received_at][gte]=2026-02-01T00:00:00Z", "cin_gmail_personal/messages/p_msg_008 cin_gmail_personal/messages/p_msg_007"},
		{"owner exact filter", owner, "q=Lisbon&streams[]=messages&filter[from_name]=Lisbon%20Air", "cin_gmail_personal/messages/p_msg_003 cin_gmail_personal/messages/p_msg_008"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := get(t, srv, tc.token, "/v1/search?"+tc.query)
			wantOK(t, a)
			if got := strings.Join(hitKeys(a), " "); got != tc.want {
				t.Errorf("hits\n\t got %s\n\twant %s", got, tc.want)
			}
			if tc.token == narrow && strings.Contains(string(a.body), `"snippet","`) {
				t.Errorf("withheld field in matched_fields: %s", a.body)
			}
		})
	}
	a := get(t, srv, owner, "/v1/search?q=Lisbon%20hotel")
	wantOK(t, a)
	if got := a.j("data.0.record_url").String(); got != "/v1/streams/messages/records/p_msg_007?connector_id=gmail" {
		t.Errorf("owner record_url = %s", got)
	}
	if got := a.j("meta.recall.sources_searched_count").Int(); got != 2 {
		t.Errorf("owner sources = %d", got)
	}
	a = get(t, srv, owner, "/v1/search?q=Lisbon&streams=nope")
	if a.j("meta.recall.sources_searched_count").Int() != 0 || a.j("meta.count").Int() != 0 {
		t.Errorf("soft filter answer = %s", a.body)
	}
}

// TestLexicalSearchPaging: pages come from the snapshot taken at page one, so
// writes between pages neither add, repeat nor skip hits, and the pages put
// together are the single-page answer.
func TestLexicalSearchPaging(t *testing.T) {
	srv := New(t, Options{})
	client := srv.Token(TokenClient)
	all := get(t, srv, client, "/v1/search?q=Lisbon&limit=100")
	wantOK(t, all)
	var paged []string
	target, pages := "/v1/search?q=Lisbon&limit=3", 0
	for target != "" {
		a := get(t, srv, client, target)
		wantOK(t, a)
		if pages == 0 {
			// Changes after page one are not seen by this result list.
			srv.Upsert("cin_gmail_work", "messages", dataset.Record{Key: "w_msg_lisbon", EmittedAt: "2026-03-01T00:00:00.000Z",
				Data: json.RawMessage(`{"id":"w_msg_lisbon","subject":"Lisbon Lisbon Lisbon"}`)})
			srv.Delete("cin_gmail_personal", "messages", "p_msg_008")
		}
		if a.j("meta.count").Int() != 10 {
			t.Errorf("page %d count = %d", pages, a.j("meta.count").Int())
		}
		paged = append(paged, hitKeys(a)...)
		more, next := a.j("has_more").Bool(), a.j("links.next")
		if more != (a.j("next_cursor").String() != "") || more != (next.Type == gjson.String) {
			t.Fatalf("page %d: has_more %v, next_cursor %q, links.next %s", pages, more, a.j("next_cursor"), next.Raw)
		}
		if more && !strings.Contains(next.String(), "cursor="+url.QueryEscape(a.j("next_cursor").String())) {
			t.Errorf("links.next %s does not carry next_cursor", next)
		}
		target = next.String()
		if pages++; pages > 10 {
			t.Fatal("paging does not end")
		}
	}
	if pages != 4 || !slices.Equal(paged, hitKeys(all)) {
		t.Errorf("%d pages: %v\nsingle page: %v", pages, paged, hitKeys(all))
	}
	// A fresh search sees the writes.
	a := get(t, srv, client, "/v1/search?q=Lisbon&limit=100")
	if keys := hitKeys(a); !slices.Contains(keys, "cin_gmail_work/messages/w_msg_lisbon") || slices.Contains(keys, "cin_gmail_personal/messages/p_msg_008") {
		t.Errorf("fresh search = %v", keys)
	}
}

// TestLexicalSearchCursorAuthority: a cursor continues only the search it
// came from, for the caller it was issued to, while its snapshot lives.
func TestLexicalSearchCursorAuthority(t *testing.T) {
	clock := &searchClock{t: time.Date(2026, 4, 6, 12, 0, 0, 0, time.UTC)}
	srv := New(t, Options{Dataset: gmailWith(t, map[string]string{"narrow": narrowGrant}), Now: clock.now})
	client, owner, narrow := srv.Token(TokenClient), srv.Token(TokenOwner), srv.IssueClientToken("narrow")
	first := get(t, srv, client, "/v1/search?q=Lisbon&limit=2")
	wantOK(t, first)
	cur := url.QueryEscape(first.j("next_cursor").String())
	for _, tc := range []struct {
		name, token, target string
		ok                  bool
	}{
		{"same search", client, "/v1/search?q=Lisbon&limit=2&cursor=" + cur, true},
		{"another page size", client, "/v1/search?q=Lisbon&limit=5&cursor=" + cur, true},
		{"another query", client, "/v1/search?q=invoice&limit=2&cursor=" + cur, false},
		{"other streams", client, "/v1/search?q=Lisbon&streams=threads&limit=2&cursor=" + cur, false},
		{"another connection", client, "/v1/search?q=Lisbon&connection_id=cin_gmail_work&cursor=" + cur, false},
		{"another grant", narrow, "/v1/search?q=Lisbon&limit=2&cursor=" + cur, false},
		{"the owner", owner, "/v1/search?q=Lisbon&limit=2&cursor=" + cur, false},
		{"the semantic route", client, "/v1/search/semantic?q=Lisbon&limit=2&cursor=" + cur, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := get(t, srv, tc.token, tc.target)
			if tc.ok {
				wantOK(t, a)
				return
			}
			wantError(t, a, http.StatusBadRequest, "invalid_cursor", "cursor")
		})
	}
	// Past the end of the list: an empty last page.
	snap := snapshotOf(t, first.j("next_cursor").String())
	a := get(t, srv, client, "/v1/search?q=Lisbon&cursor="+encodeSearchCursor("", snap, 50))
	wantOK(t, a)
	if a.j("data.#").Int() != 0 || a.j("has_more").Bool() {
		t.Errorf("past the end = %s", a.body)
	}
	clock.advance(searchSnapshotTTL)
	a = get(t, srv, client, "/v1/search?q=Lisbon&limit=2&cursor="+cur)
	wantError(t, a, http.StatusBadRequest, "invalid_cursor", "cursor")
	if !strings.Contains(a.j("error.message").String(), "expired") {
		t.Errorf("message = %q", a.j("error.message"))
	}
}

// snapshotOf reads the snapshot id out of a lexical cursor.
func snapshotOf(t *testing.T, cursor string) string {
	t.Helper()
	snap, _, ok := decodeSearchCursor("", cursor)
	if !ok {
		t.Fatalf("cursor %q does not decode", cursor)
	}
	return snap
}

func TestLexicalSearchLimit(t *testing.T) {
	srv := New(t, Options{})
	owner := srv.Token(TokenOwner)
	quokkas(srv, 130)
	for _, tc := range []struct {
		limit string
		n     int
		clamp string
	}{
		{"", 25, ""}, {"0", 25, ""}, {"-3", 25, ""}, {"abc", 25, ""}, {"NaN", 25, ""}, {"Infinity", 25, ""},
		{"1", 1, ""}, {"2.9", 2, ""}, {"1e1", 10, ""}, {"100", 100, ""}, {"101", 100, "101"}, {"500", 100, "500"},
	} {
		t.Run("limit="+tc.limit, func(t *testing.T) {
			target := "/v1/search?q=quokka"
			if tc.limit != "" {
				target += "&limit=" + tc.limit
			}
			a := get(t, srv, owner, target)
			wantOK(t, a)
			if got := a.j("data.#").Int(); got != int64(tc.n) || !a.j("has_more").Bool() || a.j("meta.count").Int() != 130 {
				t.Errorf("%d hits, has_more %v, count %d", got, a.j("has_more").Bool(), a.j("meta.count").Int())
			}
			w := a.j("meta.warnings")
			if tc.clamp == "" {
				if w.Raw != "[]" {
					t.Errorf("warnings = %s", w.Raw)
				}
				return
			}
			if w.Get("#").Int() != 1 || w.Get("0.code").String() != "limit_clamped" || w.Get("0.param").String() != "limit" ||
				w.Get("0.detail.requested_limit").String() != tc.clamp || w.Get("0.detail.max_limit").Int() != 100 ||
				!strings.Contains(w.Get("0.message").String(), "next_cursor") {
				t.Errorf("warnings = %s", w.Raw)
			}
		})
	}
	// The alias warning comes first.
	a := get(t, srv, owner, "/v1/search?q=quokka&limit=500&connector_instance_id=cin_gmail_personal")
	wantOK(t, a)
	if got := a.j("meta.warnings.#.code").Raw; got != `["deprecated_alias_used","limit_clamped"]` {
		t.Errorf("warnings = %s", got)
	}
}

// TestLexicalSearchRecall: a (connection, stream, field) query that fills the
// 200-row candidate window makes the answer say it is incomplete.
func TestLexicalSearchRecall(t *testing.T) {
	for _, tc := range []struct {
		n                     int
		accuracy, scope       string
		complete              bool
		count, truncatedCount int64
	}{
		{199, "exact", "all_matches", true, 199, 0},
		// The reference counts a full window as truncated, even if nothing
		// was left out.
		{200, "lower_bound", "candidate_window", false, 200, 1},
		{250, "lower_bound", "candidate_window", false, 200, 1},
	} {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			srv := New(t, Options{})
			quokkas(srv, tc.n)
			a := get(t, srv, srv.Token(TokenOwner), "/v1/search?q=quokka&limit=100")
			wantOK(t, a)
			r := a.j("meta.recall")
			if a.j("meta.count_accuracy").String() != tc.accuracy || r.Get("ranking_scope").String() != tc.scope ||
				r.Get("complete").Bool() != tc.complete || r.Get("truncated").Bool() == tc.complete ||
				a.j("meta.count").Int() != tc.count || r.Get("ranked_candidate_count").Int() != tc.count ||
				r.Get("truncated_source_count").Int() != tc.truncatedCount || r.Get("sources_searched_count").Int() != 2 {
				t.Errorf("meta = %s", a.j("meta").Raw)
			}
			if tc.complete == r.Get("candidate_window_limit").Exists() {
				t.Errorf("candidate_window_limit = %s", r.Get("candidate_window_limit").Raw)
			}
			if !tc.complete && r.Get("candidate_window_limit").Int() != lexicalCandidateWindow {
				t.Errorf("candidate_window_limit = %s", r.Get("candidate_window_limit").Raw)
			}
		})
	}
}

// TestLexicalCandidateWindowOption: Options.LexicalCandidateWindow lowers the
// cap, so a handful of matches is enough to reach an incomplete ranking.
func TestLexicalCandidateWindowOption(t *testing.T) {
	srv := New(t, Options{LexicalCandidateWindow: 3})
	quokkas(srv, 5)
	a := get(t, srv, srv.Token(TokenClient), "/v1/search?q=quokka")
	wantOK(t, a)
	r := a.j("meta.recall")
	if r.Get("complete").Bool() || r.Get("ranking_scope").String() != "candidate_window" ||
		r.Get("candidate_window_limit").Int() != 3 || a.j("data.#").Int() != 3 {
		t.Errorf("meta = %s, hits = %d", a.j("meta").Raw, a.j("data.#").Int())
	}
}

func TestTokenize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Offsite in Lisbon?", "offsite in lisbon"},
		{"LX-4821. Flight TP1347", "lx 4821 flight tp1347"},
		{"$12,480.00 due", "12 480 00 due"},
		{"Crème Brûlée à la Française", "creme brulee a la francaise"},
		{"Zoë ØRSTED straße ŁÓDŹ", "zoe ørsted straße łodz"},
		{"e\u0301cole", "ecole"},
		{"🎉party🎉 time", "party time"},
		{"日本語 テキスト", "日本語 テキスト"},
		{"", ""},
		{"--- ...", ""},
	} {
		var terms []string
		for _, tok := range tokenize(tc.in) {
			terms = append(terms, tok.term)
		}
		if got := strings.Join(terms, " "); got != tc.want {
			t.Errorf("tokenize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := parseLexicalQuery(`LX-4821 "lisbon" ... Café`); fmt.Sprint(got) != "[[lx 4821] [lisbon] [cafe]]" {
		t.Errorf("parseLexicalQuery = %v", got)
	}
}

// TestSnippet checks FTS5's window choice and marking on text longer than a
// snippet.
func TestSnippet(t *testing.T) {
	words := func(from, to int) string {
		var ws []string
		for i := from; i < to; i++ {
			ws = append(ws, fmt.Sprintf("w%d", i))
		}
		return strings.Join(ws, " ")
	}
	long := words(0, 60) + " Lisbon " + words(61, 120)
	for _, tc := range []struct {
		name, text, q, want string
	}{
		{"short text is whole", "Offsite in Lisbon?", "lisbon", "Offsite in <mark>Lisbon</mark>?"},
		{"each phrase marked", "Your Lisbon flight itinerary", "lisbon flight", "Your <mark>Lisbon</mark> <mark>flight</mark> itinerary"},
		{"a phrase is one mark", "Booking LX-4821 confirmed", "LX-4821", "Booking <mark>LX-4821</mark> confirmed"},
		{"middle of long text", long, "lisbon", "…" + words(37, 60) + " <mark>Lisbon</mark> " + words(61, 85) + "…"},
		{"start of long text", "Lisbon " + words(1, 100), "lisbon", "<mark>Lisbon</mark> " + words(1, 48) + "…"},
		{"end of long text", words(0, 100) + " Lisbon.", "lisbon", "…" + words(53, 100) + " <mark>Lisbon</mark>."},
		// A sentence start before the match wins over centring.
		{"sentence start", words(0, 30) + ". Lisbon in spring " + words(33, 100), "lisbon spring", "…<mark>Lisbon</mark> in <mark>spring</mark> " + words(33, 78) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx := &lexicalIndex{postings: map[string][]posting{}}
			row := &lexRow{text: tc.text, toks: tokenize(tc.text)}
			idx.rows = []*lexRow{row}
			for i, tok := range row.toks {
				idx.postings[tok.term] = append(idx.postings[tok.term], posting{0, int32(i)})
			}
			idx.totalTokens = len(row.toks)
			phrases := parseLexicalQuery(tc.q)
			ms := idx.match(phrases)
			if len(ms) != 1 {
				t.Fatalf("%d matches", len(ms))
			}
			if got := snippet(ms[0], len(phrases)); got != tc.want {
				t.Errorf("snippet\n\t got %q\n\twant %q", got, tc.want)
			}
		})
	}
}

// FuzzTokenize: tokens are ordered, inside the text, non-empty and folded.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"Offsite in Lisbon?", "Crème Brûlée", "e\u0301cole 🎉", "日本語", "\xff\xfe bad utf8", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		end := 0
		for _, tok := range tokenize(s) {
			if tok.start < end || tok.end <= tok.start || tok.end > len(s) || tok.term == "" {
				t.Fatalf("%q: token %+v after %d", s, tok, end)
			}
			if tok.term != strings.ToLower(tok.term) && utf8.ValidString(tok.term) {
				t.Fatalf("%q: term %q not folded", s, tok.term)
			}
			end = tok.end
		}
	})
}

// FuzzSnippet: a snippet is the text with marks added and ends cut, and it
// marks at least one match.
func FuzzSnippet(f *testing.F) {
	f.Add("Booking confirmation LX-4821. Flight TP1347 departs 2026-03-14 from Boston to Lisbon.", "lisbon")
	f.Add(strings.Repeat("word ", 70)+"needle "+strings.Repeat("word ", 70), "needle")
	f.Add("a. b: c d e", "c d")
	f.Fuzz(func(t *testing.T, text, q string) {
		if strings.ContainsAny(text, "<…") || !utf8.ValidString(text) {
			return
		}
		row := &lexRow{text: text, toks: tokenize(text)}
		idx := &lexicalIndex{rows: []*lexRow{row}, postings: map[string][]posting{}, totalTokens: len(row.toks)}
		for i, tok := range row.toks {
			idx.postings[tok.term] = append(idx.postings[tok.term], posting{0, int32(i)})
		}
		phrases := parseLexicalQuery(q)
		ms := idx.match(phrases)
		if len(ms) == 0 {
			return
		}
		got := snippet(ms[0], len(phrases))
		if strings.Count(got, "<mark>") == 0 || strings.Count(got, "<mark>") != strings.Count(got, "</mark>") {
			t.Fatalf("%q for %q: marks in %q", text, q, got)
		}
		plain := strings.NewReplacer("<mark>", "", "</mark>", "").Replace(got)
		if !strings.Contains(text, strings.Trim(plain, "…")) {
			t.Fatalf("%q for %q: %q is not a piece of the text", text, q, got)
		}
	})
}

// FuzzSearchCursor: decoding never panics, and what decodes re-encodes to a
// cursor that decodes the same.
func FuzzSearchCursor(f *testing.F) {
	f.Add(encodeSearchCursor("", "snap_0123456789abcdef", 25))
	f.Add(encodeSearchCursor(semanticCursorPrefix, "snap_0123456789abcdef", 3))
	f.Add("eyJvZmYiOjIsInNuYXAiOiJzbmFwX2I0M2EwN2E5M2I4MjFiM2QifQ")
	f.Add("sem1.")
	f.Fuzz(func(t *testing.T, s string) {
		for _, prefix := range []string{"", semanticCursorPrefix} {
			snap, off, ok := decodeSearchCursor(prefix, s)
			if !ok {
				continue
			}
			if off < 0 {
				t.Fatalf("%q: negative offset", s)
			}
			snap2, off2, ok2 := decodeSearchCursor(prefix, encodeSearchCursor(prefix, snap, off))
			if !ok2 || snap2 != snap || off2 != off {
				t.Fatalf("%q: round trip %q %d -> %q %d %v", s, snap, off, snap2, off2, ok2)
			}
		}
	})
}

func TestEncodeURIComponent(t *testing.T) {
	for in, want := range map[string]string{
		"messages":          "messages",
		`["user_1","2026"]`: "%5B%22user_1%22%2C%222026%22%5D",
		"a b/c?d&e=f":       "a%20b%2Fc%3Fd%26e%3Df",
		"-_.!~*'()":         "-_.!~*'()",
		"é":                 "%C3%A9",
	} {
		if got := encodeURIComponent(in); got != want {
			t.Errorf("encodeURIComponent(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSearchDemoGrant runs every search mode over the demo dataset, whose
// client grant spans several connectors and withholds fields and a stream:
// every hit must lie inside the grant and lead to a readable record.
func TestSearchDemoGrant(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the demo dataset")
	}
	ds, err := dataset.Demo()
	if err != nil {
		t.Fatal(err)
	}
	srv := New(t, Options{Dataset: ds})
	client := srv.Token(TokenClient)
	grant := ds.Grants["client"]
	connectors := map[string]bool{}
	for _, target := range []string{"/v1/search?q=coffee&limit=100", "/v1/search/semantic?q=coffee&limit=100", "/v1/search/hybrid?q=coffee&limit=100"} {
		a := get(t, srv, client, target)
		wantOK(t, a)
		if a.j("data.#").Int() == 0 {
			t.Fatalf("%s: no hits", target)
		}
		for _, h := range a.j("data").Array() {
			gs := grant.Stream(h.Get("stream").String())
			if gs == nil || !slices.Contains(gs.InstanceIDs, h.Get("connection_id").String()) {
				t.Fatalf("%s: hit outside the grant: %s", target, h.Raw)
			}
			for _, f := range h.Get("matched_fields").Array() {
				if gs.Fields != nil && !slices.Contains(gs.Fields, f.String()) {
					t.Errorf("%s: withheld field %s matched: %s", target, f, h.Raw)
				}
			}
			connectors[h.Get("connector_id").String()] = true
		}
		h := a.j("data.0")
		wantOK(t, get(t, srv, client, h.Get("record_url").String()+"?connection_id="+h.Get("connection_id").String()))
	}
	if len(connectors) < 2 {
		t.Errorf("hits from %d connectors only", len(connectors))
	}
}

// BenchmarkSearchDemo measures warm searches over loopback on the demo
// dataset; the first search of a store version also builds the index.
func BenchmarkSearchDemo(b *testing.B) {
	ds, err := dataset.Demo()
	if err != nil {
		b.Fatal(err)
	}
	srv := New(b, Options{Dataset: ds})
	client := srv.Token(TokenClient)
	for _, target := range []string{"/v1/search?q=coffee", "/v1/search?q=the&limit=100", "/v1/search/semantic?q=coffee", "/v1/search/hybrid?q=coffee"} {
		b.Run(target, func(b *testing.B) {
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodGet, srv.URL()+target, nil)
				req.Header.Set("Authorization", "Bearer "+client)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
	}
}

// BenchmarkIndexBuild measures building both search indexes for the demo
// dataset, which happens once per store change.
func BenchmarkIndexBuild(b *testing.B) {
	ds, err := dataset.Demo()
	if err != nil {
		b.Fatal(err)
	}
	st, err := newStore(ds, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("lexical", func(b *testing.B) {
		for b.Loop() {
			buildLexicalIndex(st)
		}
	})
	b.Run("semantic", func(b *testing.B) {
		for b.Loop() {
			buildSemanticIndex(st)
		}
	})
}
