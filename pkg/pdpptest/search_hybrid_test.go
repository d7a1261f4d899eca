package pdpptest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestHybridSearch(t *testing.T) {
	srv := New(t, Options{})
	client := srv.Token(TokenClient)
	// The exact subject is the best lexical match and a zero-distance
	// semantic one: found by both, it is listed once.
	a := get(t, srv, client, "/v1/search/hybrid?q=Your%20Lisbon%20flight%20itinerary&limit=4")
	wantOK(t, a)
	top := a.j("data.0")
	for path, want := range map[string]string{
		"record_key": "p_msg_002", "retrieval_mode": "hybrid", "retrieval_sources": `["lexical","semantic"]`,
		"matched_fields.0": "subject", "scores.lexical.kind": "bm25", "scores.semantic.kind": "semantic_distance",
		"snippet.text":  "<mark>Your</mark> <mark>Lisbon</mark> <mark>flight</mark> <mark>itinerary</mark>",
		"connection_id": "cin_gmail_personal", "display_name": "Personal Gmail",
	} {
		if got := top.Get(path); got.Raw != want && got.String() != want {
			t.Errorf("%s = %s, want %s", path, got.Raw, want)
		}
	}
	if keys := objectKeysOf(top.Get("scores")); keys != "lexical semantic" {
		t.Errorf("scores order = %s", keys)
	}
	seen := map[string]bool{}
	for _, k := range hitKeys(a) {
		if seen[k] {
			t.Errorf("%s listed twice", k)
		}
		seen[k] = true
	}
	// Both lexical hits were also semantic ones: four distinct records, so
	// nothing was cut.
	if a.j("data.#").Int() != 4 || a.j("has_more").Bool() || a.j("next_cursor").Exists() || a.j("links.next").Raw != "null" ||
		a.j("meta.count.kind").String() != "none" || a.j("url").String() != "/v1/search/hybrid" {
		t.Errorf("envelope = %s", a.body)
	}
	// Round-robin: lexical first at each rank, then semantic.
	a = get(t, srv, client, "/v1/search/hybrid?q=Lisbon%20flight&limit=3")
	wantOK(t, a)
	if got := a.j("data.#.retrieval_sources.0").Raw; got != `["lexical","semantic","lexical"]` {
		t.Errorf("sources by rank = %s", got)
	}
	if !a.j("has_more").Bool() || a.j("links.next").Raw != "null" {
		t.Errorf("a cut list: has_more %s, links.next %s", a.j("has_more").Raw, a.j("links.next").Raw)
	}
	// Fewer merged hits than the limit: nothing was cut.
	a = get(t, srv, client, "/v1/search/hybrid?q=Lisbon&limit=100&streams=threads")
	wantOK(t, a)
	if a.j("has_more").Bool() || a.j("data.#").Int() > 100 {
		t.Errorf("has_more with %d hits", a.j("data.#").Int())
	}
	for _, h := range a.j("data").Array() {
		if h.Get("stream").String() != "threads" {
			t.Errorf("stream filter ignored: %s", h.Raw)
		}
	}
	// Owners get the connector in record_url, and warnings are merged once.
	a = get(t, srv, srv.Token(TokenOwner), "/v1/search/hybrid?q=Lisbon&limit=300&connector_instance_id=cin_gmail_work")
	wantOK(t, a)
	if !strings.HasSuffix(a.j("data.0.record_url").String(), "?connector_id=gmail") {
		t.Errorf("owner record_url = %s", a.j("data.0.record_url"))
	}
	if got := a.j("meta.warnings.#.code").Raw; got != `["deprecated_alias_used","limit_clamped"]` {
		t.Errorf("warnings = %s", got)
	}
	// The cut says how to get the rest, and it is not a cursor.
	if msg := a.j("meta.warnings.1.message").String(); strings.Contains(msg, "next_cursor") || !strings.Contains(msg, "/v1/search") {
		t.Errorf("limit_clamped message = %q", msg)
	}
	for _, h := range a.j("data").Array() {
		if h.Get("connection_id").String() != "cin_gmail_work" {
			t.Errorf("connection filter ignored: %s", h.Raw)
		}
	}
}

// objectKeysOf lists an object's keys in order.
func objectKeysOf(r gjson.Result) string {
	var keys []string
	r.ForEach(func(k, _ gjson.Result) bool {
		keys = append(keys, k.String())
		return true
	})
	return strings.Join(keys, " ")
}

func TestHybridSearchErrors(t *testing.T) {
	srv := New(t, Options{Dataset: gmailWith(t, map[string]string{"narrow": narrowGrant})})
	client, owner, narrow := srv.Token(TokenClient), srv.Token(TokenOwner), srv.IssueClientToken("narrow")
	for _, tc := range []struct {
		name, token, target string
		status              int
		code, param         string
	}{
		{"cursor", client, "/v1/search/hybrid?q=x&cursor=abc", 400, "invalid_request", "cursor"},
		{"cursor before other keys", owner, "/v1/search/hybrid?cursor=abc&model=m", 400, "invalid_request", "cursor"},
		{"client filter first", client, "/v1/search/hybrid?cursor=abc&filter[a]=b", 400, "invalid_request", "filter"},
		{"banned", owner, "/v1/search/hybrid?q=x&weights=0.5", 400, "invalid_request", "weights"},
		{"banned blend", owner, "/v1/search/hybrid?q=x&blend=rrf", 400, "invalid_request", "blend"},
		{"unknown", owner, "/v1/search/hybrid?q=x&page=2", 400, "invalid_request", "page"},
		{"q missing", client, "/v1/search/hybrid", 400, "invalid_request", "q"},
		{"client stream outside the grant", narrow, "/v1/search/hybrid?q=x&streams=message_bodies", 403, "grant_stream_not_allowed", "streams"},
		{"client connection outside the grant", client, "/v1/search/hybrid?q=x&connection_id=cin_nope", 401, "context.instance_mismatch", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, get(t, srv, tc.token, tc.target), tc.status, tc.code, tc.param)
		})
	}
}

// TestSearchUnmounted: switched-off modes are plain 404s, like any unknown
// route, and the others keep working.
func TestSearchUnmounted(t *testing.T) {
	for _, opts := range []Options{{DisableSemantic: true}, {DisableHybrid: true}, {DisableSemantic: true, DisableHybrid: true}} {
		srv := New(t, opts)
		owner := srv.Token(TokenOwner)
		wantOK(t, get(t, srv, owner, "/v1/search?q=Lisbon"))
		semantic := get(t, srv, owner, "/v1/search/semantic?q=Lisbon")
		hybrid := get(t, srv, owner, "/v1/search/hybrid?q=Lisbon")
		if opts.DisableSemantic {
			wantError(t, semantic, http.StatusNotFound, "not_found", "")
		} else {
			wantOK(t, semantic)
		}
		wantError(t, hybrid, http.StatusNotFound, "not_found", "")
		// Even without a bearer: the route does not exist, so nothing asks for one.
		wantError(t, get(t, srv, "", "/v1/search/hybrid?q=Lisbon"), http.StatusNotFound, "not_found", "")
	}
}
