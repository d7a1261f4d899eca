package fanout_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

// A member speaks only for itself: a hit that names another member's
// connection, label and record key is refused, and the genuine hit is shown
// under its own member rather than dropped as a duplicate.
func TestMemberCannotSpeakForAnother(t *testing.T) {
	victim := newScripted(t, "cin_victim", []hit{{key: "secret", score: -1}})
	victim.name = "Victim Mail"
	attacker := newScripted(t, "cin_attacker", []hit{{key: "secret", score: -99}, {key: "own", score: -2}})
	for _, tc := range []struct {
		name  string
		conns []string // the attacker member's known connections; nil: unknown
	}{
		{"known connections", []string{"cin_attacker"}},
		{"unknown connections", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			attacker.claim, attacker.name = "cin_victim", "Victim Mail"
			am := attacker.member(t, "g_attacker")
			am.ConnectionIDs = tc.conns
			c, err := fanout.New(fanout.Options{Members: []fanout.Member{victim.member(t, "g_victim"), am}})
			if err != nil {
				t.Fatal(err)
			}
			doc := get(t, c, searchPath, rs.Query{{Key: "q", Value: "x"}})
			var victimHits []string
			for _, h := range doc.Get("data").Array() {
				if h.Get("connection_id").Str == "cin_victim" {
					victimHits = append(victimHits, h.Get("grant_id").Str+":"+h.Get("record_key").Str)
				}
			}
			if strings.Join(victimHits, ",") != "g_victim:secret" {
				t.Errorf("hits under the victim's connection: %v, want only the victim's own (g_victim:secret)\n%s", victimHits, doc.Get("data").Raw)
			}
			w := doc.Get(`meta.warnings.#(code=="source_hits_refused")`)
			if !w.Exists() || w.Get("source.grant_id").Str != "g_attacker" || !strings.Contains(w.Get("message").Str, "2 hit(s)") {
				t.Errorf("no source_hits_refused warning naming the attacker: %s", doc.Get("meta").Raw)
			}
		})
	}
}

// A hit naming a connection no member holds is refused like one naming
// another member's: its member holds known connections, and this is not one
// of them.
func TestHitForAConnectionNobodyHoldsIsRefused(t *testing.T) {
	honest := newScripted(t, "cin_honest", hits("h", 2, -1))
	liar := newScripted(t, "cin_liar", hits("l", 3, -2))
	liar.claim = "cin_nobody"
	c, err := fanout.New(fanout.Options{Members: []fanout.Member{honest.member(t, "g_honest"), liar.member(t, "g_liar")}})
	if err != nil {
		t.Fatal(err)
	}
	doc := get(t, c, searchPath, rs.Query{{Key: "q", Value: "x"}})
	for _, k := range keys(doc) {
		if !strings.HasPrefix(k, "cin_honest/") {
			t.Errorf("hit %s kept", k)
		}
	}
	w := doc.Get(`meta.warnings.#(code=="source_hits_refused")`)
	if w.Get("source.grant_id").Str != "g_liar" || !strings.Contains(w.Get("message").Str, "3 hit(s)") {
		t.Errorf("no source_hits_refused warning counting the liar's 3 hits: %s", doc.Get("meta").Raw)
	}
}

// Hits without a connection of their own, from members whose connections are
// unknown, merge only within one member.
func TestHitsWithoutConnectionMergeOnlyWithinTheirMember(t *testing.T) {
	a := newScripted(t, "", hits("k", 2, -3))
	b := newScripted(t, "", hits("k", 2, -3))
	ma, mb := a.member(t, "ga"), b.member(t, "gb")
	ma.ConnectionIDs, mb.ConnectionIDs = nil, nil
	c, err := fanout.New(fanout.Options{Members: []fanout.Member{ma, mb}})
	if err != nil {
		t.Fatal(err)
	}
	doc := get(t, c, searchPath, rs.Query{{Key: "q", Value: "x"}})
	if n := len(doc.Get("data").Array()); n != 4 {
		t.Errorf("%d hits, want 4: two members that name no connection are two sources\n%s", n, doc.Get("data").Raw)
	}
}

// followAll pages a search to its end, checking that every cursor handed
// out is one the tools accept back, and returns the hits in order.
func followAll(t *testing.T, c *fanout.Client, q rs.Query) ([]string, gjson.Result) {
	t.Helper()
	var all []string
	var last gjson.Result
	cur := ""
	for page := 0; ; page++ {
		if page > 100 {
			t.Fatal("paging does not end")
		}
		qq := slices.Clone(q)
		if cur != "" {
			qq.Add("cursor", cur)
		}
		resp, err := c.Get(context.Background(), searchPath, qq)
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		last = gjson.ParseBytes(resp.Body)
		all = append(all, keys(last)...)
		cur = last.Get("next_cursor").Str
		if cur == "" {
			return all, last
		}
		if len(cur) > tools.MaxHandleBytes || len(cur) > fanout.MaxCursorBytes {
			t.Fatalf("page %d: next_cursor of %d bytes, over the %d-byte cursor argument the tools accept", page, len(cur), tools.MaxHandleBytes)
		}
	}
}

// Every cursor the fan-out hands out is accepted back, whatever the length of
// its members' own cursors: 8 members with 402-byte cursors (positions
// travel in the cursor when they fit) and with 4,000-byte ones (they do not,
// and are kept by the process).
func TestEveryCompositeCursorIsAcceptedBack(t *testing.T) {
	for _, childCursor := range []int{402, 4000} {
		t.Run(strconv.Itoa(childCursor), func(t *testing.T) {
			var ms []fanout.Member
			want := map[string]bool{}
			for i := range 8 {
				conn := "cin_" + strconv.Itoa(i)
				s := newScripted(t, conn, hits("h"+strconv.Itoa(i)+"_", 7, -3))
				s.cursor = strings.Repeat("c", childCursor-2)
				ms = append(ms, s.member(t, "grt_"+strconv.Itoa(i)))
				for _, h := range s.hits {
					want[conn+"/"+h.key] = true
				}
			}
			c, err := fanout.New(fanout.Options{Members: ms})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := followAll(t, c, rs.Query{{Key: "q", Value: "x"}, {Key: "limit", Value: "3"}})
			seen := map[string]bool{}
			for _, k := range got {
				if seen[k] || !want[k] {
					t.Errorf("hit %s returned twice or not a hit", k)
				}
				seen[k] = true
			}
			if len(seen) != len(want) {
				t.Errorf("%d of %d hits reached by following next_cursor", len(seen), len(want))
			}
		})
	}
}

// A member's cursor over the bound is an invalid answer of that member: a
// cut cursor would be unusable, and a whole one could not be passed back.
func TestOverlongMemberCursorIsInvalidResponse(t *testing.T) {
	good := newScripted(t, "cin_good", hits("g", 3, -3))
	long := newScripted(t, "cin_long", hits("l", 3, -3))
	long.cursor = strings.Repeat("c", fanout.MaxCursorBytes)
	c, err := fanout.New(fanout.Options{Members: []fanout.Member{good.member(t, "gg"), long.member(t, "gl")}})
	if err != nil {
		t.Fatal(err)
	}
	doc := get(t, c, searchPath, rs.Query{{Key: "q", Value: "x"}, {Key: "limit", Value: "2"}})
	w := doc.Get(`meta.warnings.#(code=="source_unavailable")`)
	if !strings.Contains(w.Get("message").Str, "rs_invalid_response") || w.Get("source.grant_id").Str != "gl" {
		t.Errorf("no rs_invalid_response warning for the member with an over-long cursor: %s", doc.Get("meta").Raw)
	}
	if n := len(doc.Raw); n > 3*fanout.MaxCursorBytes {
		t.Errorf("answer is %d bytes: the member's cursor leaked into it", n)
	}
	for _, k := range keys(doc) {
		if strings.HasPrefix(k, "cin_long/") {
			t.Errorf("hit %s of the invalid answer was used", k)
		}
	}
}

// Positions kept by the process live StoredCursorTTL; after it, the cursor
// is refused with a message that says to search again.
func TestStoredCursorExpires(t *testing.T) {
	var ms []fanout.Member
	for i := range 3 {
		s := newScripted(t, "cin_"+strconv.Itoa(i), hits("h", 5, -3))
		s.cursor = strings.Repeat("c", 2000)
		ms = append(ms, s.member(t, "grt_"+strconv.Itoa(i)))
	}
	now := time.Unix(1_800_000_000, 0)
	c, err := fanout.New(fanout.Options{Members: ms})
	if err != nil {
		t.Fatal(err)
	}
	fanout.SetClock(c, func() time.Time { return now })
	// Each page of one hit uses up one member's page, whose 2,000-byte
	// cursor then joins the composite: by the third, it no longer fits.
	q := rs.Query{{Key: "q", Value: "x"}, {Key: "limit", Value: "1"}}
	next := ""
	for range 3 {
		qq := slices.Clone(q)
		if next != "" {
			qq.Add("cursor", next)
		}
		next = get(t, c, searchPath, qq).Get("next_cursor").Str
	}
	if !strings.HasPrefix(next, "fo2s.") {
		t.Fatalf("cursor %.40q… is not a stored one", next)
	}
	now = now.Add(fanout.StoredCursorTTL - time.Second)
	get(t, c, searchPath, append(slices.Clone(q), rs.Param{Key: "cursor", Value: next}))
	now = now.Add(2 * time.Second)
	_, err = c.Get(context.Background(), searchPath, append(slices.Clone(q), rs.Param{Key: "cursor", Value: next}))
	if re := rsErr(t, err); re.Code != "invalid_cursor" || !strings.Contains(re.Message, "expired") || !strings.Contains(re.Message, "search again") {
		t.Errorf("expired cursor: %+v", re)
	}
}

// A cursor is bound to the package and the principal: the same members read
// as another package, or for another principal, refuse it, and so does a
// package whose members have the same grant ids at another RS; the same
// package for the same principal (another client, as hosted mode builds one
// per request) accepts it. Both kinds of cursor: positions carried in the
// cursor, and positions kept by the process.
func TestCursorBoundToPackageAndPrincipal(t *testing.T) {
	for _, childCursor := range []int{0, 2000} {
		t.Run("child cursor "+strconv.Itoa(childCursor), func(t *testing.T) {
			members := func() []fanout.Member {
				var ms []fanout.Member
				for i := range 3 {
					s := newScripted(t, "cin_"+strconv.Itoa(i), hits("h"+strconv.Itoa(i), 5, -3))
					if childCursor > 0 {
						s.cursor = strings.Repeat("c", childCursor)
					}
					ms = append(ms, s.member(t, "g"+strconv.Itoa(i)))
				}
				return ms
			}
			ms := members()
			pkg := func(ms []fanout.Member, id, principal string) *fanout.Client {
				t.Helper()
				c, err := fanout.New(fanout.Options{Members: ms, PackageID: id, Principal: principal})
				if err != nil {
					t.Fatal(err)
				}
				return c
			}
			// One hit per page uses up one member's page at a time, so by
			// the third page every member's cursor is in the composite one.
			q := rs.Query{{Key: "q", Value: "x"}, {Key: "limit", Value: "1"}}
			first := pkg(ms, "pkg_1", "alice")
			next := ""
			for range 3 {
				qq := slices.Clone(q)
				if next != "" {
					qq.Add("cursor", next)
				}
				next = get(t, first, searchPath, qq).Get("next_cursor").Str
			}
			if stored := strings.HasPrefix(next, "fo2s."); stored != (childCursor > 0) {
				t.Fatalf("cursor %.40q…: stored %v, want %v", next, stored, childCursor > 0)
			}
			withCursor := append(slices.Clone(q), rs.Param{Key: "cursor", Value: next})
			get(t, pkg(ms, "pkg_1", "alice"), searchPath, withCursor)
			for name, c := range map[string]*fanout.Client{
				"another package":              pkg(ms, "pkg_2", "alice"),
				"another principal":            pkg(ms, "pkg_1", "bob"),
				"same grant ids at another RS": pkg(members(), "pkg_1", "alice"),
			} {
				_, err := c.Get(context.Background(), searchPath, withCursor)
				if err == nil {
					t.Errorf("%s: the cursor was accepted", name)
					continue
				}
				if re := rsErr(t, err); re.Code != "invalid_cursor" {
					t.Errorf("%s: %+v, want invalid_cursor", name, re)
				}
			}
		})
	}
}

// A principal that fills its share of the stored positions drops its own,
// never another principal's: after one principal's many searches, another's
// cursor still continues its search.
func TestStoredCursorsOfOnePrincipalSurviveAnothersSearches(t *testing.T) {
	var ms []fanout.Member
	for i := range 3 {
		s := newScripted(t, "cin_"+strconv.Itoa(i), hits("h"+strconv.Itoa(i), 4, -3))
		s.cursor = strings.Repeat("c", 2000)
		ms = append(ms, s.member(t, "g"+strconv.Itoa(i)))
	}
	alice, err := fanout.New(fanout.Options{Members: ms, PackageID: "pkg", Principal: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	mallory, err := fanout.New(fanout.Options{Members: ms, PackageID: "pkg", Principal: "mallory"})
	if err != nil {
		t.Fatal(err)
	}
	// Room for 4 positions, 2 per principal.
	fanout.ShareSmallStore(4, 2, alice, mallory)
	storedCursor := func(c *fanout.Client, q string) (rs.Query, string) {
		t.Helper()
		qq := rs.Query{{Key: "q", Value: q}, {Key: "limit", Value: "1"}}
		next := ""
		for range 3 {
			page := slices.Clone(qq)
			if next != "" {
				page.Add("cursor", next)
			}
			next = get(t, c, searchPath, page).Get("next_cursor").Str
		}
		if !strings.HasPrefix(next, "fo2s.") {
			t.Fatalf("cursor %.40q… is not a stored one", next)
		}
		return qq, next
	}
	q, aliceNext := storedCursor(alice, "alice's")
	for i := range 4 {
		storedCursor(mallory, "mallory's "+strconv.Itoa(i))
	}
	get(t, alice, searchPath, append(q, rs.Param{Key: "cursor", Value: aliceNext}))
}

// schemaRS is a loopback RS that answers schema with the connections it
// claims (or failStatus, while fail counts down) and counts record reads.
type schemaRS struct {
	srv         *httptest.Server
	conns       []string
	fail        atomic.Int32
	recordReads atomic.Int32
}

func newSchemaRS(t *testing.T, conns ...string) *schemaRS {
	t.Helper()
	s := &schemaRS{conns: conns}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/schema" {
			if s.fail.Add(-1) >= 0 {
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte(`{"error":{"code":"unavailable","message":"try later","type":"api_error"}}`))
				return
			}
			var gc []map[string]any
			for _, c := range s.conns {
				gc = append(gc, map[string]any{"connection_id": c, "display_name": "label " + c})
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"connectors": []map[string]any{{"connector_key": "notes",
				"granted_connections": gc, "streams": []map[string]any{{"name": "notes"}}}}})
			return
		}
		s.recordReads.Add(1)
		_, _ = w.Write([]byte(`{"object":"list","data":[{"object":"record","id":"r1","stream":"notes","data":{"text":"from ` + s.conns[0] + `"}}]}`))
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// When a member's discovery failed at start-up and another member's schema
// claims its connection, a read of that connection is not given to the
// claimer: the missing member is asked again, and while it cannot say (or
// when it says it holds the connection too) the read is ambiguous.
func TestUndiscoveredMemberConnectionNotGivenToClaimer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		failures int32 // schema failures of the victim after start-up
	}{
		{"victim still unreachable", 1 << 20},
		{"victim answers on retry", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			claimer := newSchemaRS(t, "cin_claimer", "cin_victim")
			victim := newSchemaRS(t, "cin_victim")
			victim.fail.Store(1)
			ms := fanout.Discover(context.Background(), []fanout.Member{
				{GrantID: "g_claimer", RS: rsClient(t, claimer.srv.URL, "tok-c")},
				{GrantID: "g_victim", RS: rsClient(t, victim.srv.URL, "tok-v")},
			}, 5*time.Second)
			if ms[1].Undiscovered == "" || ms[1].Unusable != "" {
				t.Fatalf("victim after a failed discovery: %+v", ms[1])
			}
			victim.fail.Store(tc.failures)
			c, err := fanout.New(fanout.Options{Members: ms})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Get(context.Background(), rs.Path("v1", "streams", "notes", "records"), rs.Query{{Key: "connection_id", Value: "cin_victim"}})
			if claimer.recordReads.Load() != 0 {
				t.Fatalf("the read of cin_victim went to the member that claimed it (err %v)", err)
			}
			if err == nil {
				t.Fatal("read answered without saying which source holds cin_victim")
			}
			if re := rsErr(t, err); re.Status != http.StatusConflict || re.Code != "ambiguous_connection" {
				t.Errorf("error %+v, want 409 ambiguous_connection", re)
			}
		})
	}
}
