package pdpptest

import (
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

func TestSemanticSearchErrors(t *testing.T) {
	srv := New(t, Options{Dataset: gmailWith(t, map[string]string{"narrow": narrowGrant})})
	client, owner, narrow := srv.Token(TokenClient), srv.Token(TokenOwner), srv.IssueClientToken("narrow")
	tests := []struct {
		name, token, target string
		status              int
		code, param         string
	}{
		{"client filter", client, "/v1/search/semantic?q=x&filter[subject]=x", 400, "invalid_request", "filter"},
		{"unknown parameter", client, "/v1/search/semantic?q=x&colour=red", 400, "invalid_request", "colour"},
		{"q missing", client, "/v1/search/semantic?limit=3", 400, "invalid_request", "q"},
		{"owner filter without one stream", owner, "/v1/search/semantic?q=x&filter[subject]=x", 400, "invalid_request", "streams"},
		{"client stream outside the grant", narrow, "/v1/search/semantic?q=x&streams=attachments", 403, "grant_stream_not_allowed", "streams"},
		{"owner unknown connection", owner, "/v1/search/semantic?q=x&connection_id=cin_nope", 404, "connection_not_found", "connection_id"},
		{"lexical cursor", client, "/v1/search/semantic?q=x&cursor=" + encodeSearchCursor("", "snap_0000000000000000", 3), 400, "invalid_cursor", "cursor"},
		{"unknown snapshot", client, "/v1/search/semantic?q=x&cursor=" + encodeSearchCursor(semanticCursorPrefix, "snap_0000000000000000", 3), 400, "invalid_cursor", "cursor"},
		{"prefix only", client, "/v1/search/semantic?q=x&cursor=sem1.", 400, "invalid_cursor", "cursor"},
	}
	// The banned list: callers cannot steer embeddings, blending or projection.
	for banned := range retrievalBanned {
		tests = append(tests, struct {
			name, token, target string
			status              int
			code, param         string
		}{"banned " + banned, owner, "/v1/search/semantic?q=x&" + banned + "=1", 400, "invalid_request", banned})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, get(t, srv, tc.token, tc.target), tc.status, tc.code, tc.param)
		})
	}
	// A lexical cursor that is valid on /v1/search is not one here.
	lex := get(t, srv, client, "/v1/search?q=Lisbon&limit=2")
	wantOK(t, lex)
	wantError(t, get(t, srv, client, "/v1/search/semantic?q=Lisbon&limit=2&cursor="+url.QueryEscape(lex.j("next_cursor").String())),
		http.StatusBadRequest, "invalid_cursor", "cursor")
}

// TestSemanticSearchMatchesReference: the stub embedding and float32
// distances reproduce the reference's values exactly.
func TestSemanticSearchMatchesReference(t *testing.T) {
	srv := New(t, Options{})
	body, target := readSearchCapture(t, "search-semantic")
	a := get(t, srv, srv.Token(TokenClient), target)
	wantOK(t, a)
	want := gjson.ParseBytes(body).Get("data").Array()
	for i, h := range a.j("data").Array() {
		if h.Get("score.value").Float() != want[i].Get("score.value").Float() || h.Get("record_key").String() != want[i].Get("record_key").String() {
			t.Errorf("hit %d = %s %s, capture %s %s", i, h.Get("record_key"), h.Get("score.value").Raw,
				want[i].Get("record_key"), want[i].Get("score.value").Raw)
		}
	}
}

func TestSemanticSearch(t *testing.T) {
	srv := New(t, Options{})
	client := srv.Token(TokenClient)
	// The stub matches exact text: a subject, word for word, comes first.
	a := get(t, srv, client, "/v1/search/semantic?q=Receipt%20for%20your%20order%20%2355120&limit=2")
	wantOK(t, a)
	if got := strings.Join(hitKeys(a), " "); got != "cin_gmail_personal/messages/p_msg_003 cin_gmail_personal/threads/p_thr_003" {
		t.Errorf("hits = %s", got)
	}
	top := a.j("data.0")
	if d := top.Get("score.value").Float(); d > 1e-6 || top.Get("snippet.text").String() != "Receipt for your order #55120" ||
		top.Get("snippet.field").String() != "subject" || top.Get("retrieval_mode").String() != "semantic" ||
		top.Get("score.kind").String() != "semantic_distance" || top.Get("evidence_excerpts").Exists() {
		t.Errorf("top hit = %s", top.Raw)
	}
	if a.j("meta.count.kind").String() != "none" || a.j("meta.warnings").Raw != "[]" || a.j("meta.recall").Exists() {
		t.Errorf("meta = %s", a.j("meta").Raw)
	}
	// Paging: sem1. cursors, no record twice, distances never decrease.
	seen := map[string]bool{}
	last := -1.0
	target, pages := "/v1/search/semantic?q=trip%20to%20Portugal&limit=4", 0
	for target != "" {
		a := get(t, srv, client, target)
		wantOK(t, a)
		if c := a.j("next_cursor").String(); c != "" && !strings.HasPrefix(c, semanticCursorPrefix) {
			t.Fatalf("cursor %q", c)
		}
		for _, h := range a.j("data").Array() {
			k := h.Get("connection_id").String() + "/" + h.Get("stream").String() + "/" + h.Get("record_key").String()
			d := h.Get("score.value").Float()
			if seen[k] || d < last {
				t.Errorf("page %d: %s at %v after %v (seen %v)", pages, k, d, last, seen[k])
			}
			seen[k], last = true, d
		}
		target = a.j("links.next").String()
		if pages++; pages > 30 {
			t.Fatal("paging does not end")
		}
	}
	if len(seen) < 20 {
		t.Errorf("only %d records over %d pages", len(seen), pages)
	}
	// Snippets are the field's own text.
	a = get(t, srv, client, "/v1/search/semantic?q=x&limit=100")
	for _, h := range a.j("data").Array() {
		rec := get(t, srv, client, h.Get("record_url").String()+"?connection_id="+h.Get("connection_id").String())
		field := rec.j("data." + h.Get("snippet.field").String()).String()
		if !strings.HasPrefix(field, strings.TrimSuffix(h.Get("snippet.text").String(), "…")) {
			t.Errorf("snippet %q is not from %q", h.Get("snippet.text"), field)
		}
	}
}

// TestSemanticSearchGrant: only semantic fields inside the grant are
// embedded and matched, and records outside the grant's window never are.
func TestSemanticSearchGrant(t *testing.T) {
	srv := New(t, Options{Dataset: gmailWith(t, map[string]string{"narrow": narrowGrant})})
	rec := get(t, srv, srv.Token(TokenOwner), "/v1/streams/messages/records/p_msg_002?connection_id=cin_gmail_personal")
	wantOK(t, rec)
	q := "/v1/search/semantic?limit=100&q=" + url.QueryEscape(rec.j("data.snippet").String())

	a := get(t, srv, srv.Token(TokenClient), q)
	wantOK(t, a)
	if h := a.j("data.0"); h.Get("record_key").String() != "p_msg_002" || h.Get("matched_fields.0").String() != "snippet" {
		t.Errorf("client top hit = %s", h.Raw)
	}
	a = get(t, srv, srv.IssueClientToken("narrow"), q)
	wantOK(t, a)
	for _, h := range a.j("data").Array() {
		k := h.Get("connection_id").String() + "/" + h.Get("stream").String() + "/" + h.Get("record_key").String()
		if strings.Contains(h.Get("matched_fields").Raw, `"snippet"`) || h.Get("stream").String() == "message_bodies" ||
			strings.HasSuffix(k, "/p_msg_007") || strings.HasSuffix(k, "/p_msg_008") || strings.Contains(k, "/messages/w_") {
			t.Errorf("outside the grant: %s", h.Raw)
		}
	}
	if a.j("data.#").Int() == 0 {
		t.Error("narrow grant found nothing at all")
	}
}

// TestSemanticSearchRecordGone: a page rendered after its record was deleted
// keeps the hit (the ranking is a snapshot) without emitted_at or snippet.
func TestSemanticSearchRecordGone(t *testing.T) {
	srv := New(t, Options{})
	owner := srv.Token(TokenOwner)
	a := get(t, srv, owner, "/v1/search/semantic?q=Offsite%20in%20Lisbon%3F&limit=1")
	wantOK(t, a)
	if got := strings.Join(hitKeys(a), " "); got != "cin_gmail_work/messages/w_msg_004" {
		t.Fatalf("top hit = %s", got)
	}
	srv.Delete("cin_gmail_work", "messages", "w_msg_004")
	srv.Upsert("cin_gmail_work", "threads", dataset.Record{Key: "w_thr_004", EmittedAt: "2026-05-01T00:00:00.000Z",
		Data: json.RawMessage(`{"id":"w_thr_004","subject":"Renamed"}`)})
	a = get(t, srv, owner, "/v1/search/semantic?q=Offsite%20in%20Lisbon%3F&limit=1&cursor="+url.QueryEscape(a.j("next_cursor").String()))
	wantOK(t, a)
	// The thread was found under its old subject; it is shown as it is now.
	if h := a.j("data.0"); h.Get("record_key").String() != "w_thr_004" || h.Get("snippet.text").String() != "Renamed" ||
		h.Get("emitted_at").String() != "2026-05-01T00:00:00.000Z" {
		t.Errorf("second hit = %s", h.Raw)
	}
	// Going back to the first page shows the deleted record bare.
	first := get(t, srv, owner, "/v1/search/semantic?q=Offsite%20in%20Lisbon%3F&limit=1&cursor="+
		url.QueryEscape(encodeSearchCursor(semanticCursorPrefix, snapshotOf(t, strings.TrimPrefix(a.j("next_cursor").String(), semanticCursorPrefix)), 0)))
	wantOK(t, first)
	if h := first.j("data.0"); h.Get("record_key").String() != "w_msg_004" || h.Get("emitted_at").Type != gjson.Null || h.Get("snippet").Exists() {
		t.Errorf("deleted hit = %s", h.Raw)
	}
}

func TestEmbedText(t *testing.T) {
	a, b := embedText("trip to Portugal"), embedText("trip to Portugal")
	if a != b {
		t.Fatal("embedding is not deterministic")
	}
	var norm float64
	for _, x := range a {
		norm += float64(x) * float64(x)
	}
	if math.Abs(norm-1) > 1e-6 {
		t.Errorf("norm² = %v", norm)
	}
	if d := semanticDistance(&a, &b); d > 1e-6 {
		t.Errorf("self distance = %v", d)
	}
	c := embedText("trip to portugal")
	if d := semanticDistance(&a, &c); d < 0.1 || d > 2 {
		t.Errorf("distance to a different text = %v", d)
	}
	if z := embedText(""); z != (semVector{}) {
		t.Errorf("empty text embeds to %v", z)
	}
}

func TestSemanticExcerpt(t *testing.T) {
	long := strings.Repeat("abcdefghi ", 20) // 200 units
	for _, tc := range []struct{ in, want string }{
		{"short", "short"},
		{strings.Repeat("x", 160), strings.Repeat("x", 160)},
		{long, long[:159] + "…"},
		{strings.Repeat("y", 200), strings.Repeat("y", 160) + "…"},
		// A space within the first 40 units is not a good cut.
		{"ab " + strings.Repeat("z", 200), "ab " + strings.Repeat("z", 157) + "…"},
		// Astral characters count two units, as in JavaScript.
		{strings.Repeat("🍮", 100), strings.Repeat("🍮", 80) + "…"},
	} {
		if got := semanticExcerpt(tc.in); got != tc.want {
			t.Errorf("semanticExcerpt(%.20q…) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got, cut := utf16Prefix("a🍮b", 2); got != "a\uFFFD" || !cut {
		t.Errorf("utf16Prefix cutting a pair = %q %v", got, cut)
	}
	if got, cut := utf16Prefix("a🍮b", 4); got != "a🍮b" || cut {
		t.Errorf("utf16Prefix whole = %q %v", got, cut)
	}
}

func TestSemanticCandidates(t *testing.T) {
	for limit, want := range map[int]int{1: 25, 3: 25, 15: 25, 17: 27, 25: 38, 60: 90, 100: 100} {
		if got := semanticCandidates(limit); got != want {
			t.Errorf("semanticCandidates(%d) = %d, want %d", limit, got, want)
		}
	}
}
