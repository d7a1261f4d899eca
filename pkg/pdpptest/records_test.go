package pdpptest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

const personal = "connection_id=cin_gmail_personal"

func TestRecordsErrors(t *testing.T) {
	srv := New(t, Options{Dataset: gmailWith(t, map[string]string{"narrow": narrowGrant})})
	client, owner, narrow := srv.Token(TokenClient), srv.Token(TokenOwner), srv.IssueClientToken("narrow")
	for _, tc := range []struct {
		name, token, target string
		status              int
		code, param         string
	}{
		{"client stream outside the grant", narrow, "/v1/streams/attachments/records", 401, "context.stream_not_allowed", ""},
		{"client unknown stream", client, "/v1/streams/nope/records", 401, "context.stream_not_allowed", ""},
		{"client connection outside the grant", narrow, "/v1/streams/messages/records?connection_id=cin_gmail_work", 401, "context.instance_mismatch", ""},
		{"owner unknown stream", owner, "/v1/streams/nope/records?connector_id=gmail", 404, "not_found", ""},
		{"owner unknown connection", owner, "/v1/streams/messages/records?connection_id=cin_nope", 404, "connection_not_found", "connection_id"},
		{"owner without a source", owner, "/v1/streams/messages/records", 400, "invalid_request", "connector_id"},
		{"client view", client, "/v1/streams/messages/records?view=envelope", 400, "invalid_request", ""},
		{"owner view and fields", owner, "/v1/streams/messages/records?connector_id=gmail&view=envelope&fields=id", 400, "invalid_request", "view"},
		{"owner unknown view", owner, "/v1/streams/messages/records?connector_id=gmail&view=nope", 400, "invalid_request", "view"},
		{"unknown field", client, "/v1/streams/messages/records?fields=id,nope", 400, "unknown_field", ""},
		{"empty fields", client, "/v1/streams/messages/records?fields=", 400, "invalid_request", "fields"},
		{"field outside the grant", narrow, "/v1/streams/messages/records?fields=id,snippet", 403, "field_not_granted", "fields"},
		{"unknown parameter", client, "/v1/streams/messages/records?" + personal + "&bogus=1", 400, "invalid_request", "bogus"},
		{"bad count", client, "/v1/streams/messages/records?count=all", 400, "invalid_request", "count"},
		{"bad window", client, "/v1/streams/messages/records?window=all", 400, "invalid_request", "window"},
		{"bad order", client, "/v1/streams/messages/records?order=up", 400, "invalid_request", "order"},
		{"sort on another field", client, "/v1/streams/messages/records?sort=subject", 400, "invalid_sort", "sort"},
		{"sort with an empty field", client, "/v1/streams/messages/records?sort=-", 400, "invalid_sort", "sort"},
		{"sort with conflicting directions", client, "/v1/streams/messages/records?sort=received_at,-received_at", 400, "invalid_sort", "sort"},
		{"sort disagreeing with order", client, "/v1/streams/messages/records?sort=-received_at&order=asc", 400, "invalid_sort", "sort"},
		{"sort without a cursor field", client, "/v1/streams/labels/records?sort=name", 400, "invalid_sort", "sort"},
		{"garbage cursor", client, "/v1/streams/messages/records?" + personal + "&cursor=%%%", 400, "invalid_cursor", ""},
		{"alias conflict", client, "/v1/streams/messages/records?connection_id=cin_gmail_personal&connector_instance_id=cin_gmail_work", 400, "invalid_argument", "connector_instance_id"},
		{"repeated scalar", client, "/v1/streams/messages/records?limit=1&limit=2", 400, "invalid_request", "limit"},
		{"owner filter on unknown field", owner, "/v1/streams/messages/records?connector_id=gmail&filter[nope]=1", 400, "unknown_field", "filter"},
		{"owner exact filter on an array", owner, "/v1/streams/messages/records?connector_id=gmail&filter[labels]=INBOX", 400, "invalid_request", "filter"},
		{"owner range on undeclared field", owner, "/v1/streams/messages/records?connector_id=gmail&filter[subject][gte]=a", 400, "invalid_request", "filter"},
		{"owner unknown range operator", owner, "/v1/streams/messages/records?connector_id=gmail&filter[received_at][after]=2026-01-01", 400, "invalid_request", "filter"},
		{"owner range value not a date", owner, "/v1/streams/messages/records?connector_id=gmail&filter[received_at][gte]=soon", 400, "invalid_request", "filter"},
		{"owner range value not a number", owner, "/v1/streams/messages/records?connector_id=gmail&filter[size_bytes][gte]=big", 400, "invalid_request", "filter"},
		{"owner filter without a field", owner, "/v1/streams/messages/records?connector_id=gmail&filter=x", 400, "invalid_request", "filter"},
		{"owner undeclared expand", owner, "/v1/streams/messages/records?connector_id=gmail&expand=thread", 400, "invalid_expand", "expand"},
		{"owner nested expand", owner, "/v1/streams/messages/records?connector_id=gmail&expand=attachments.message", 400, "invalid_expand", "expand"},
		{"owner expand_limit without expand", owner, "/v1/streams/messages/records?connector_id=gmail&expand_limit[attachments]=2", 400, "invalid_expand", "expand_limit"},
		{"owner expand_limit on has_one", owner, "/v1/streams/messages/records?connector_id=gmail&expand=message_bodies&expand_limit[message_bodies]=2", 400, "invalid_expand", "expand_limit"},
		{"owner expand_limit above max", owner, "/v1/streams/messages/records?connector_id=gmail&expand=attachments&expand_limit[attachments]=51", 400, "invalid_expand", "expand_limit"},
		{"owner expand_limit zero", owner, "/v1/streams/messages/records?connector_id=gmail&expand=attachments&expand_limit[attachments]=0", 400, "invalid_expand", "expand_limit"},
		{"changes with sort", client, "/v1/streams/messages/records?" + personal + "&changes_since=beginning&sort=received_at", 400, "invalid_request", "sort"},
		{"changes with count", client, "/v1/streams/messages/records?" + personal + "&changes_since=beginning&count=exact", 400, "invalid_request", "count"},
		{"changes with order", client, "/v1/streams/messages/records?" + personal + "&changes_since=beginning&order=asc", 400, "invalid_request", "order"},
		{"changes with window", client, "/v1/streams/messages/records?" + personal + "&changes_since=beginning&window=exact", 400, "invalid_request", "window"},
		{"owner changes with expand", owner, "/v1/streams/messages/records?" + personal + "&changes_since=beginning&expand=attachments", 400, "invalid_expand", "expand"},
		{"malformed changes_since", client, "/v1/streams/messages/records?" + personal + "&changes_since=yesterday", 400, "invalid_cursor", "changes_since"},
		{"changes under fan-in", client, "/v1/streams/messages/records?changes_since=beginning", 400, "invalid_argument", "changes_since"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, get(t, srv, tc.token, tc.target), tc.status, tc.code, tc.param)
		})
	}
}

// TestGrantOfUndeclaredStream: a grant naming a stream its source does not
// declare is a server-side inconsistency; the reference surfaces it as a 500.
func TestGrantOfUndeclaredStream(t *testing.T) {
	srv := New(t, Options{Dataset: gmailWith(t, map[string]string{"ghost": `{"grant_id":"grt_ghost","client":{"client_id":"c"},
		"streams":[{"name":"ghost","instance_ids":["cin_gmail_personal"]}]}`})})
	wantError(t, get(t, srv, srv.IssueClientToken("ghost"), "/v1/streams/ghost/records"), 500, "invalid_stream", "")
}

func TestRecordsLimit(t *testing.T) {
	srv := New(t, Options{})
	client := srv.Token(TokenClient)
	for _, tc := range []struct {
		limit   string
		want    int // records returned (personal messages hold 8)
		clamped bool
	}{
		{"", 8, false},    // default 25
		{"3", 3, false},   //
		{"0", 8, false},   // non-positive falls back to 25
		{"-4", 8, false},  //
		{"abc", 8, false}, // unparseable falls back to 25
		{"101", 8, true},
	} {
		t.Run("limit="+tc.limit, func(t *testing.T) {
			target := "/v1/streams/messages/records?" + personal
			if tc.limit != "" {
				target += "&limit=" + tc.limit
			}
			a := get(t, srv, client, target)
			wantOK(t, a)
			if n := len(a.j("data").Array()); n != tc.want {
				t.Errorf("%d records, want %d", n, tc.want)
			}
			w := a.j(`meta.warnings.#(code=="limit_clamped")`)
			if w.Exists() != tc.clamped {
				t.Fatalf("limit_clamped warning present = %v: %s", w.Exists(), a.j("meta"))
			}
			if tc.clamped && (w.Get("detail.requested_limit").Int() != 101 || w.Get("detail.max_limit").Int() != 100 || w.Get("param").String() != "limit") {
				t.Errorf("warning = %s", w)
			}
		})
	}
}

// TestRecordsPaging walks every page in both directions and checks that the
// pages concatenate to the fully sorted set, with cursors bound to direction.
func TestRecordsPaging(t *testing.T) {
	srv := New(t, Options{})
	client := srv.Token(TokenClient)
	all := func(order string) []string {
		var out []string
		target := "/v1/streams/messages/records?" + personal + "&limit=3&fields=id&order=" + order
		for page := 0; ; page++ {
			a := get(t, srv, client, target)
			wantOK(t, a)
			out = append(out, ids(a)...)
			next := a.j("links.next")
			if !a.j("has_more").Bool() {
				if next.Type.String() != "Null" || a.j("next_cursor").Exists() {
					t.Fatalf("last page has links.next %s / next_cursor %s", next, a.j("next_cursor"))
				}
				return out
			}
			if page > 10 || next.String() == "" || a.j("next_cursor").String() == "" {
				t.Fatalf("page %d: has_more without a usable cursor: %s", page, a.body)
			}
			target = next.String()
		}
	}
	desc := all("desc")
	want := []string{"p_msg_008", "p_msg_007", "p_msg_006", "p_msg_005", "p_msg_004", "p_msg_003", "p_msg_002", "p_msg_001"}
	if !slices.Equal(desc, want) {
		t.Errorf("desc pages = %v, want %v", desc, want)
	}
	asc := all("asc")
	slices.Reverse(want)
	if !slices.Equal(asc, want) {
		t.Errorf("asc pages = %v, want %v", asc, want)
	}

	// A cursor issued under desc does not continue an asc read.
	a := get(t, srv, client, "/v1/streams/messages/records?"+personal+"&limit=2")
	cur := url.QueryEscape(a.j("next_cursor").String())
	wantError(t, get(t, srv, client, "/v1/streams/messages/records?"+personal+"&limit=2&order=asc&cursor="+cur), 400, "invalid_cursor", "")
	wantOK(t, get(t, srv, client, "/v1/streams/messages/records?"+personal+"&limit=2&sort=-received_at&cursor="+cur))
}

// TestRecordsCursorStability inserts records between pages, before and after
// the page boundary, and checks nothing is duplicated or skipped.
func TestRecordsCursorStability(t *testing.T) {
	for _, order := range []string{"desc", "asc"} {
		t.Run(order, func(t *testing.T) {
			srv := New(t, Options{})
			client := srv.Token(TokenClient)
			base := "/v1/streams/messages/records?" + personal + "&limit=3&fields=id&order=" + order
			a := get(t, srv, client, base)
			first := ids(a)
			next := a.j("links.next").String()

			// One record sorts inside the pages already read, one inside the
			// pages still to come, one ties the boundary's cursor value.
			boundary := get(t, srv, client, "/v1/streams/messages/records/"+first[2]+"?"+personal).j("data.received_at").String()
			upsert := func(id, at string) {
				srv.Upsert("cin_gmail_personal", "messages", dataset.Record{Key: id, EmittedAt: at,
					Data: json.RawMessage(fmt.Sprintf(`{"id":%q,"thread_id":"t","received_at":%q}`, id, at))})
			}
			var seenSide, unseenSide string
			if order == "desc" {
				seenSide, unseenSide = "2026-03-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z"
			} else {
				seenSide, unseenSide = "2026-01-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z"
			}
			upsert("x_seen_side", seenSide)
			upsert("x_unseen_side", unseenSide)
			upsert("p_msg_000_tie", boundary) // pk sorts before every p_msg_00N

			got := slices.Clone(first)
			for next != "" {
				a = get(t, srv, client, next)
				wantOK(t, a)
				got = append(got, ids(a)...)
				next = a.j("links.next").String()
			}
			counts := map[string]int{}
			for _, id := range got {
				counts[id]++
			}
			for id, n := range counts {
				if n > 1 {
					t.Errorf("%s returned %d times", id, n)
				}
			}
			for i := 1; i <= 8; i++ {
				if id := fmt.Sprintf("p_msg_%03d", i); counts[id] != 1 {
					t.Errorf("%s returned %d times across pages", id, counts[id])
				}
			}
			if counts["x_unseen_side"] != 1 {
				t.Errorf("a record inserted ahead of the cursor was skipped: %v", got)
			}
			if counts["x_seen_side"] != 0 {
				t.Errorf("a record inserted behind the cursor appeared: %v", got)
			}
			// The tie shares the boundary's cursor value; its primary key puts
			// it after the boundary in desc order and before it in asc order.
			if want := map[string]int{"desc": 1, "asc": 0}[order]; counts["p_msg_000_tie"] != want {
				t.Errorf("tie on the cursor value returned %d times, want %d: %v", counts["p_msg_000_tie"], want, got)
			}
		})
	}
}

func TestRecordsProjectionAndIdentity(t *testing.T) {
	srv := New(t, Options{Dataset: gmailWith(t, map[string]string{"narrow": narrowGrant})})
	client, narrow := srv.Token(TokenClient), srv.IssueClientToken("narrow")

	a := get(t, srv, client, "/v1/streams/messages/records?"+personal+"&limit=1&fields=subject,id")
	wantOK(t, a)
	if keys := objectKeys(t, a.j("data.0.data").Raw); !slices.Equal(keys, []string{"subject", "id"}) {
		t.Errorf("requested fields come back in request order; got %v", keys)
	}
	rec := a.j("data.0")
	if rec.Get("connection_id").String() != "cin_gmail_personal" || rec.Get("connector_instance_id").String() != "cin_gmail_personal" ||
		rec.Get("display_name").String() != "Personal Gmail" || rec.Get("connector_key").Exists() {
		t.Errorf("list record identity: %s", rec)
	}

	// A client without fields gets the grant's fields, in grant order.
	a = get(t, srv, narrow, "/v1/streams/messages/records?limit=1")
	wantOK(t, a)
	if keys := objectKeys(t, a.j("data.0.data").Raw); !slices.Equal(keys, []string{"id", "thread_id", "subject", "from_name", "from_email", "received_at", "has_attachments", "is_seen", "labels"}) {
		t.Errorf("default projection = %v", keys)
	}

	// Owner view replaces the field list.
	a = get(t, srv, srv.Token(TokenOwner), "/v1/streams/messages/records?connector_id=gmail&"+personal+"&limit=1&view=envelope")
	wantOK(t, a)
	if keys := objectKeys(t, a.j("data.0.data").Raw); !slices.Equal(keys, []string{"id", "thread_id", "subject", "from_name", "from_email", "to", "cc", "date", "received_at", "labels"}) {
		t.Errorf("view projection = %v", keys)
	}

	// Blob refs get a fetch_url on lists.
	a = get(t, srv, client, "/v1/streams/attachments/records?"+personal+"&fields=id,blob_ref")
	wantOK(t, a)
	hydrated := a.j(`data.#(id=="p_msg_002_att_1").data.blob_ref`)
	if hydrated.Get("fetch_url").String() != "/v1/blobs/"+hydrated.Get("blob_id").String() {
		t.Errorf("blob_ref = %s", hydrated)
	}
	if a.j(`data.#(id=="p_msg_003_att_1").data.blob_ref`).Type.String() != "Null" {
		t.Errorf("a null blob_ref stays null")
	}
}

// objectKeys returns the keys of a JSON object in document order.
func objectKeys(t *testing.T, raw string) []string {
	t.Helper()
	members, err := dataset.ObjectMembers([]byte(raw))
	if err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	var out []string
	for _, m := range members {
		out = append(out, m.Key)
	}
	return out
}

func TestRecordsVisibility(t *testing.T) {
	srv := New(t, Options{Dataset: gmailWith(t, map[string]string{"narrow": narrowGrant})})
	narrow := srv.IssueClientToken("narrow")

	// Time constraint: since inclusive, until exclusive.
	a := get(t, srv, narrow, "/v1/streams/messages/records?order=asc&count=exact")
	wantOK(t, a)
	want := []string{"p_msg_002", "p_msg_003", "p_msg_004", "p_msg_005", "p_msg_006"}
	if got := ids(a); !slices.Equal(got, want) {
		t.Errorf("visible messages = %v, want %v", got, want)
	}
	if a.j("meta.count.value").Int() != int64(len(want)) || a.j("meta.count.kind").String() != "exact" {
		t.Errorf("meta.count = %s", a.j("meta.count"))
	}
	// Resources allowlist, fanned in over both connections.
	a = get(t, srv, narrow, "/v1/streams/labels/records")
	wantOK(t, a)
	got := ids(a)
	slices.Sort(got)
	if !slices.Equal(got, []string{"INBOX", "INBOX", "Travel", "Travel"}) {
		t.Errorf("visible labels = %v", got)
	}
	// A record outside the time window is 404 on detail.
	wantError(t, get(t, srv, narrow, "/v1/streams/messages/records/p_msg_001"), 404, "not_found", "")
	wantOK(t, get(t, srv, narrow, "/v1/streams/messages/records/p_msg_002"))
}

func TestRecordsOwnerFiltersAndExpand(t *testing.T) {
	srv := New(t, Options{})
	owner := srv.Token(TokenOwner)
	base := "/v1/streams/messages/records?connector_id=gmail&" + personal

	for _, tc := range []struct {
		filter string
		want   []string
	}{
		{"filter[has_attachments]=true", []string{"p_msg_005", "p_msg_003", "p_msg_002"}},
		{"filter[has_attachments]=true&filter[is_flagged]=true", []string{"p_msg_005", "p_msg_002"}},
		{"filter[from_name]=Lisbon%20Air", []string{"p_msg_008", "p_msg_003"}},
		{"filter[size_bytes][gte]=20000", []string{"p_msg_005", "p_msg_003", "p_msg_002"}},
		{"filter[size_bytes][gt]=22148&filter[size_bytes][lte]=22181", []string{"p_msg_002"}},
		{"filter[received_at][gte]=2026-01-17T11:14:00Z&filter[received_at][lt]=2026-01-29T13:28:00Z", []string{"p_msg_004", "p_msg_003"}},
		{"filter[received_at][gte]=2026-02-10", []string{"p_msg_008", "p_msg_007"}},
	} {
		t.Run(tc.filter, func(t *testing.T) {
			a := get(t, srv, owner, base+"&fields=id&"+tc.filter)
			wantOK(t, a)
			if got := ids(a); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}

	a := get(t, srv, owner, base+"&fields=id&filter[id]=p_msg_002&expand=attachments&expand=message_bodies")
	wantOK(t, a)
	exp := a.j("data.0.expanded")
	if exp.Get("attachments.object").String() != "list" || exp.Get("attachments.data.0.id").String() != "p_msg_002_att_1" ||
		exp.Get("attachments.has_more").Bool() {
		t.Errorf("has_many expansion = %s", exp.Get("attachments"))
	}
	if exp.Get("attachments.data.0.data.blob_ref.fetch_url").String() == "" {
		t.Errorf("expanded children get fetch_url: %s", exp.Get("attachments.data.0.data.blob_ref"))
	}
	if exp.Get("message_bodies.id").String() != "p_msg_002_body" || exp.Get("message_bodies.object").String() != "record" {
		t.Errorf("has_one expansion = %s", exp.Get("message_bodies"))
	}
	// has_one without a child is null; has_many is an empty list.
	a = get(t, srv, owner, base+"&fields=id&filter[id]=p_msg_001&expand=attachments&expand=message_bodies")
	wantOK(t, a)
	if len(a.j("data.0.expanded.attachments.data").Array()) != 0 {
		t.Errorf("p_msg_001 has no attachments: %s", a.j("data.0.expanded"))
	}
	// expand_limit cuts has_many lists and says so with has_more.
	srv.Upsert("cin_gmail_personal", "attachments", dataset.Record{Key: "p_msg_002_att_2", EmittedAt: "2026-01-11T10:07:00.000Z",
		Data: json.RawMessage(`{"id":"p_msg_002_att_2","message_id":"p_msg_002","part_index":"2","message_received_at":"2026-01-11T10:07:00.000Z","hydration_status":"metadata_only"}`)})
	a = get(t, srv, owner, base+"&fields=id&filter[id]=p_msg_002&expand=attachments&expand_limit[attachments]=1")
	wantOK(t, a)
	if n := len(a.j("data.0.expanded.attachments.data").Array()); n != 1 || !a.j("data.0.expanded.attachments.has_more").Bool() {
		t.Errorf("expand_limit 1 of 2: %s", a.j("data.0.expanded.attachments"))
	}
}

func TestRecordsFanIn(t *testing.T) {
	srv := New(t, Options{})
	client := srv.Token(TokenClient)

	a := get(t, srv, client, "/v1/streams/messages/records?limit=3&count=exact&fields=id")
	wantOK(t, a)
	if n := len(a.j("data").Array()); n != 6 {
		t.Errorf("fan-in returns a page per connection: %d records", n)
	}
	if !a.j("has_more").Bool() || a.j("next_cursor").Exists() || a.j("links.next").Type.String() != "Null" {
		t.Errorf("fan-in: has_more %s next_cursor %s links.next %s", a.j("has_more"), a.j("next_cursor"), a.j("links.next"))
	}
	if w := a.j(`meta.warnings.#(code=="partial_results")`); w.Get("param").String() != "connection_id" {
		t.Errorf("partial_results warning: %s", a.j("meta.warnings"))
	}
	if a.j("meta.count.value").Int() != 15 {
		t.Errorf("fan-in count sums connections: %s", a.j("meta.count"))
	}
	// Everything fits: no warning.
	a = get(t, srv, client, "/v1/streams/messages/records?limit=50&fields=id")
	if a.j("has_more").Bool() || len(a.j("meta.warnings").Array()) != 0 {
		t.Errorf("complete fan-in: has_more %s warnings %s", a.j("has_more"), a.j("meta.warnings"))
	}
}

func TestRecordsWindowAndAlias(t *testing.T) {
	srv := New(t, Options{})
	client := srv.Token(TokenClient)
	a := get(t, srv, client, "/v1/streams/messages/records?"+personal+"&limit=1&window=exact")
	wantOK(t, a)
	w := a.j("meta.window")
	if w.Get("total").Int() != 8 || w.Get("earliest_at").String() != "2026-01-05T09:00:00.000Z" || w.Get("latest_at").String() != "2026-02-16T16:49:00.000Z" {
		t.Errorf("meta.window = %s", w)
	}
	// labels have no consent_time_field: total only.
	a = get(t, srv, client, "/v1/streams/labels/records?"+personal+"&window=exact")
	if w := a.j("meta.window"); w.Get("total").Int() != 7 || w.Get("earliest_at").Exists() {
		t.Errorf("meta.window without consent_time_field = %s", w)
	}

	a = get(t, srv, client, "/v1/streams/messages/records?connector_instance_id=cin_gmail_work&limit=1")
	wantOK(t, a)
	if a.j("data.0.connection_id").String() != "cin_gmail_work" {
		t.Errorf("alias did not narrow: %s", a.j("data.0.connection_id"))
	}
	if a.j(`meta.warnings.#(code=="deprecated_alias_used").param`).String() != "connector_instance_id" {
		t.Errorf("alias warning missing: %s", a.j("meta.warnings"))
	}
}

func TestRecordDetail(t *testing.T) {
	srv := New(t, Options{Dataset: gmailWith(t, map[string]string{"narrow": narrowGrant})})
	client, owner, narrow := srv.Token(TokenClient), srv.Token(TokenOwner), srv.IssueClientToken("narrow")

	a := get(t, srv, client, "/v1/streams/labels/records/INBOX")
	wantError(t, a, 409, "ambiguous_connection", "")
	if a.j("error.retry_with").String() != "connection_id" || len(a.j("error.available_connections").Array()) != 2 {
		t.Errorf("409 body: %s", a.body)
	}
	wantOK(t, get(t, srv, client, "/v1/streams/labels/records/INBOX?connection_id=cin_gmail_work"))
	wantError(t, get(t, srv, client, "/v1/streams/messages/records/nope?"+personal), 404, "not_found", "")
	wantError(t, get(t, srv, client, "/v1/streams/messages/records/p_msg_002?fields=id,nope"), 400, "unknown_field", "")

	// Fields outside the grant are dropped silently on detail.
	a = get(t, srv, narrow, "/v1/streams/messages/records/p_msg_002?fields=id,snippet,subject")
	wantOK(t, a)
	if keys := objectKeys(t, a.j("data").Raw); !slices.Equal(keys, []string{"id", "subject"}) {
		t.Errorf("detail projection = %v", keys)
	}
	if a.j("connector_key").String() != "https://registry.pdpp.dev/connectors/gmail" || a.j("record_json_bytes").Int() != 601 {
		t.Errorf("detail identity: connector_key %s record_json_bytes %s", a.j("connector_key"), a.j("record_json_bytes"))
	}
	// The owner sees the storage key and may expand.
	a = get(t, srv, owner, "/v1/streams/messages/records/p_msg_002?connector_id=gmail&expand=attachments")
	wantOK(t, a)
	if a.j("connector_key").String() != "gmail" || a.j("expanded.attachments.data.0.id").String() != "p_msg_002_att_1" {
		t.Errorf("owner detail: %s", a.body)
	}
	// Percent-encoded keys are decoded.
	srv.Upsert("cin_gmail_personal", "labels", dataset.Record{Key: "Work/Projects", EmittedAt: "2026-01-05T00:00:00.000Z",
		Data: json.RawMessage(`{"name":"Work/Projects","canonical_name":"work/projects","is_system":false,"parent_name":"Work","message_count":0}`)})
	a = get(t, srv, client, "/v1/streams/labels/records/"+url.PathEscape("Work/Projects")+"?"+personal)
	wantOK(t, a)
	if a.j("id").String() != "Work/Projects" {
		t.Errorf("decoded key: %s", a.j("id"))
	}
	if !strings.Contains(a.j("links.self").String(), "Work%2FProjects") {
		t.Errorf("links.self keeps the request as sent: %s", a.j("links.self"))
	}
}
