package fanout_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

var searchPath = rs.Path("v1", "search")

func TestPackageSearchMergesCanonicalChildHits(t *testing.T) {
	s := demoServer(t)
	pms, c := demoPackage(t, s)
	doc := get(t, c, searchPath, rs.Query{{Key: "q", Value: "invoice"}, {Key: "limit", Value: "20"}})
	conns := map[string]bool{}
	doc.Get("data").ForEach(func(_, h gjson.Result) bool {
		for _, k := range []string{"connection_id", "connector_key", "stream", "record_key", "display_name", "grant_id"} {
			if h.Get(k).Str == "" {
				t.Errorf("hit without %s: %s", k, h.Raw)
			}
		}
		conns[h.Get("connection_id").Str] = true
		return true
	})
	if len(conns) < 2 {
		t.Fatalf("hits from %d connection(s), want several: %v", len(conns), keys(doc))
	}
	if n := doc.Get("meta.package.source_mix.#").Int(); n != int64(len(conns)) {
		t.Errorf("source_mix has %d entries, want %d: %s", n, len(conns), doc.Get("meta.package").Raw)
	}
	if doc.Get("meta.package.member_count").Int() != int64(len(pms)) || doc.Get("meta.package.partial").Bool() {
		t.Errorf("meta.package = %s", doc.Get("meta.package").Raw)
	}
	// Global limit: never more hits than asked, whatever the children sent.
	small := get(t, c, searchPath, rs.Query{{Key: "q", Value: "invoice"}, {Key: "limit", Value: "3"}})
	if n := small.Get("data.#").Int(); n != 3 || !small.Get("has_more").Bool() || small.Get("next_cursor").Str == "" {
		t.Errorf("limit 3: %d hits, has_more %v, next_cursor %q", n, small.Get("has_more").Bool(), small.Get("next_cursor").Str)
	}
}

func TestPackageSearchStreamsIntersectedPerChild(t *testing.T) {
	s := demoServer(t)
	pms, c := demoPackage(t, s)
	s.ResetRequests()
	get(t, c, searchPath, rs.Query{{Key: "q", Value: "invoice"}, {Key: "streams", Value: "mail_messages"},
		{Key: "streams", Value: "chat_messages"}})
	for _, pm := range pms {
		reqs := requestsBy(s, pm.Token)
		switch pm.ConnectorKey {
		case "bank":
			if len(reqs) != 0 {
				t.Errorf("bank child (no requested stream granted) was called: %v", reqs)
			}
		default:
			if len(reqs) != 1 {
				t.Fatalf("%s child called %d times, want 1", pm.ConnectorKey, len(reqs))
			}
			want := "mail_messages"
			if pm.ConnectorKey == "chat" {
				want = "chat_messages"
			}
			if got := reqs[0].RawQuery; !strings.Contains(got, "streams="+want) || strings.Count(got, "streams=") != 1 {
				t.Errorf("%s child query %q, want only streams=%s", pm.ConnectorKey, got, want)
			}
		}
	}
}

func TestPackageScopedSearchSelectsOneChild(t *testing.T) {
	s := demoServer(t)
	pms, c := demoPackage(t, s)
	s.ResetRequests()
	doc := get(t, c, searchPath, rs.Query{{Key: "q", Value: "invoice"}, {Key: "connection_id", Value: dataset.DemoWorkMailConnection}})
	for _, pm := range pms {
		n := len(requestsBy(s, pm.Token))
		if want := map[bool]int{true: 1, false: 0}[pm.ConnectionID == dataset.DemoWorkMailConnection]; n != want {
			t.Errorf("child %s called %d times, want %d", pm.ConnectionID, n, want)
		}
	}
	doc.Get("data").ForEach(func(_, h gjson.Result) bool {
		if h.Get("connection_id").Str != dataset.DemoWorkMailConnection {
			t.Errorf("scoped hit from %s", h.Get("connection_id").Str)
		}
		return true
	})
}

// Anchor defect 1: one cursor sent to every child. Following next_cursor
// across children with uneven hit counts must return every hit exactly once.
func TestCursorReturnsEveryHitOnceAcrossUnevenChildren(t *testing.T) {
	for _, limit := range []int{1, 3, 4, 10} {
		t.Run("limit="+strconv.Itoa(limit), func(t *testing.T) {
			a := newScripted(t, "cin_a", hits("a", 7, -5))
			b := newScripted(t, "cin_b", hits("b", 2, -4))
			cc := newScripted(t, "cin_c", hits("c", 13, -6))
			c, err := fanout.New(fanout.Options{Members: []fanout.Member{a.member(t, "g_a"), b.member(t, "g_b"), cc.member(t, "g_c")}})
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]int{}
			q := rs.Query{{Key: "q", Value: "x"}, {Key: "limit", Value: strconv.Itoa(limit)}}
			for page := 0; ; page++ {
				if page > 40 {
					t.Fatal("next_cursor never ended")
				}
				doc := get(t, c, searchPath, q)
				if n := doc.Get("data.#").Int(); n > int64(limit) {
					t.Fatalf("page %d has %d hits, limit %d", page, n, limit)
				}
				for _, k := range keys(doc) {
					seen[k]++
				}
				next := doc.Get("next_cursor").Str
				if next == "" {
					if doc.Get("has_more").Bool() {
						t.Fatal("has_more without next_cursor")
					}
					break
				}
				q = rs.Query{{Key: "q", Value: "x"}, {Key: "limit", Value: strconv.Itoa(limit)}, {Key: "cursor", Value: next}}
			}
			if len(seen) != 22 {
				t.Errorf("%d distinct hits, want 22", len(seen))
			}
			for k, n := range seen {
				if n != 1 {
					t.Errorf("%s returned %d times", k, n)
				}
			}
		})
	}
}

// Anchor defect 2: ranking in child order. A strong match in the last child
// outranks weak matches in the first.
func TestStrongMatchInLastChildOutranksWeakFirst(t *testing.T) {
	weak := newScripted(t, "cin_weak", []hit{{"w0", -0.4}, {"w1", -0.3}, {"w2", -0.2}})
	mid := newScripted(t, "cin_mid", []hit{{"m0", -1.1}})
	strong := newScripted(t, "cin_strong", []hit{{"s0", -9.5}})
	c, err := fanout.New(fanout.Options{Members: []fanout.Member{weak.member(t, "g1"), mid.member(t, "g2"), strong.member(t, "g3")}})
	if err != nil {
		t.Fatal(err)
	}
	doc := get(t, c, searchPath, rs.Query{{Key: "q", Value: "x"}, {Key: "limit", Value: "5"}})
	got := keys(doc)
	want := []string{"cin_strong/s0", "cin_mid/m0", "cin_weak/w0", "cin_weak/w1", "cin_weak/w2"}
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	if doc.Get("meta.package.ranking").Str != "reciprocal_rank_fusion" || doc.Get("meta.package.rrf_k").Int() != 60 {
		t.Errorf("ranking meta %s", doc.Get("meta.package").Raw)
	}
}

func TestCompatibilityHitShapes(t *testing.T) {
	a := newScripted(t, "cin_a", hits("a", 2, -3))
	b := newScripted(t, "cin_b", hits("b", 2, -3))
	b.shape = "results"
	d := newScripted(t, "cin_d", hits("d", 2, -3))
	d.shape = "datadata"
	c, err := fanout.New(fanout.Options{Members: []fanout.Member{a.member(t, "ga"), b.member(t, "gb"), d.member(t, "gd")}})
	if err != nil {
		t.Fatal(err)
	}
	doc := get(t, c, searchPath, rs.Query{{Key: "q", Value: "x"}})
	if got := len(keys(doc)); got != 6 {
		t.Errorf("%d hits from three shapes, want 6: %v", got, keys(doc))
	}
}

// Two grants of a package on one connection read the same RS: the hits
// both return are kept once.
func TestDuplicateHitsAcrossChildrenKeptOnce(t *testing.T) {
	a := newScripted(t, "cin_same", hits("k", 3, -3))
	c, err := fanout.New(fanout.Options{Members: []fanout.Member{a.member(t, "ga"), a.member(t, "gb")}})
	if err != nil {
		t.Fatal(err)
	}
	doc := get(t, c, searchPath, rs.Query{{Key: "q", Value: "x"}})
	if got := keys(doc); len(got) != 3 {
		t.Errorf("hits %v, want the 3 distinct records once", got)
	}
}

func TestHangingChildCutOffOthersArrive(t *testing.T) {
	a := newScripted(t, "cin_a", hits("a", 3, -3))
	h := newScripted(t, "cin_hang", hits("h", 3, -3))
	h.hang = true
	b := newScripted(t, "cin_b", hits("b", 2, -3))
	c, err := fanout.New(fanout.Options{Members: []fanout.Member{a.member(t, "ga"), h.member(t, "gh"), b.member(t, "gb")},
		ChildTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	doc := get(t, c, searchPath, rs.Query{{Key: "q", Value: "x"}})
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("took %s: the hanging child was not cut off by its own timeout", el)
	}
	if got := len(keys(doc)); got != 5 {
		t.Errorf("%d hits, want the other children's 5", got)
	}
	w := doc.Get("meta.warnings.0")
	if w.Get("code").Str != "source_unavailable" || w.Get("source.grant_id").Str != "gh" ||
		!strings.Contains(w.Get("message").Str, "rs_timeout") || !doc.Get("meta.package.partial").Bool() {
		t.Errorf("warning %s partial %v", doc.Get("meta.warnings").Raw, doc.Get("meta.package.partial").Bool())
	}
}

func TestSourceRequiredRouting(t *testing.T) {
	s := demoServer(t)
	_, c := demoPackage(t, s)
	ctx := context.Background()
	recs := rs.Path("v1", "streams", "mail_messages", "records")

	// Several members hold mail_messages: the model must choose.
	_, err := c.Get(ctx, recs, rs.Query{{Key: "limit", Value: "1"}})
	re := rsErr(t, err)
	if re.Status != 409 || re.Code != "ambiguous_connection" || re.RetryWith != "connection_id" || len(re.AvailableConnections) != 2 {
		t.Errorf("ambiguous: %+v", re)
	}
	for _, o := range re.AvailableConnections {
		if o.GrantID == "" || o.ConnectorKey != "mail" || o.ConnectionID == "" {
			t.Errorf("option %+v lacks metadata", o)
		}
	}
	// Only one member holds chat_messages: it answers without connection_id.
	doc := get(t, c, rs.Path("v1", "streams", "chat_messages", "records"), rs.Query{{Key: "limit", Value: "1"}})
	if doc.Get("data.#").Int() != 1 {
		t.Errorf("chat records: %s", doc.Raw)
	}
	// connection_id selects.
	doc = get(t, c, recs, rs.Query{{Key: "limit", Value: "1"}, {Key: "connection_id", Value: dataset.DemoWorkMailConnection}})
	if doc.Get("data.#").Int() != 1 {
		t.Errorf("selected records: %s", doc.Raw)
	}
	// Unknown connection_id: 404 not_found.
	_, err = c.Get(ctx, recs, rs.Query{{Key: "connection_id", Value: "cin_nobody"}})
	if re := rsErr(t, err); re.Status != 404 || re.Code != "not_found" {
		t.Errorf("unknown connection: %+v", re)
	}
	// detail=full over a stream two members hold.
	_, err = c.Get(ctx, rs.Path("v1", "schema"), rs.Query{{Key: "detail", Value: "full"}, {Key: "stream", Value: "mail_messages"}})
	if re := rsErr(t, err); re.Status != 409 || re.Code != "ambiguous_schema_detail" || len(re.AvailableConnections) != 2 {
		t.Errorf("full schema: %+v", re)
	}
}

// Two grants of a package on one connection (on the RS that holds it): a
// read of the connection asks which source.
func TestConnectionHeldBySeveralMembersAsksForSource(t *testing.T) {
	a := newScripted(t, "cin_shared", nil)
	c, err := fanout.New(fanout.Options{Members: []fanout.Member{a.member(t, "ga"), a.member(t, "gb")}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Get(context.Background(), rs.Path("v1", "streams", "notes", "records"), rs.Query{{Key: "connection_id", Value: "cin_shared"}})
	if re := rsErr(t, err); re.Status != 409 || re.RetryWith != "source_id" || len(re.AvailableConnections) != 2 {
		t.Errorf("shared connection: %+v", re)
	}
	if a.calls.Load() != 0 {
		t.Error("an ambiguity error called a child")
	}
}

func TestAmbiguityBoundedAt13PlusMembers(t *testing.T) {
	var ms []fanout.Member
	var servers []*scripted
	for i := range 15 {
		s := newScripted(t, "cin_"+strconv.Itoa(i), nil)
		servers = append(servers, s)
		ms = append(ms, s.member(t, "g"+strconv.Itoa(i)))
	}
	c, err := fanout.New(fanout.Options{Members: ms})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Get(context.Background(), rs.Path("v1", "streams", "notes", "records"), nil)
	re := rsErr(t, err)
	obj := gjson.ParseBytes(re.Object)
	if re.Status != 409 || len(re.AvailableConnections) != fanout.MaxListedConnections || re.OmittedConnections != 3 ||
		obj.Get("available_connection_count").Int() != 15 || !obj.Get("available_connections_truncated").Bool() ||
		!strings.Contains(obj.Get("discovery_hint").Str, "schema") || !strings.Contains(re.Message, "schema") {
		t.Errorf("bounded ambiguity: %+v object %s", re, re.Object)
	}
	for _, s := range servers {
		if s.calls.Load() != 0 {
			t.Fatal("the ambiguity error probed a child")
		}
	}
}

func TestUnusableChildMarkedAndWorded(t *testing.T) {
	s := demoServer(t)
	pms, c := demoPackage(t, s, pdpptest.PackageChild{ConnectionID: connectionOf(t, s, "calendar"), Revoked: true})
	revoked := pms[len(pms)-1]
	// The double reports the revoked child up front; the resolver passes it on.
	if revoked.Status != "grant_revoked" {
		t.Fatalf("status %q", revoked.Status)
	}
	s.ResetRequests()
	doc := get(t, c, rs.Path("v1", "schema"), rs.Query{{Key: "view", Value: "compact"}})
	if len(requestsBy(s, revoked.Token)) != 0 {
		t.Error("an unusable child was called")
	}
	var found bool
	doc.Get("package.sources").ForEach(func(_, src gjson.Result) bool {
		if src.Get("grant_id").Str == revoked.GrantID {
			found = src.Get("unusable").Str == "grant_revoked"
		}
		return true
	})
	if !found || !strings.Contains(doc.Get("meta.warnings").Raw, "re-approved") {
		t.Errorf("unusable child not marked: package %s warnings %s", doc.Get("package").Raw, doc.Get("meta.warnings").Raw)
	}
	_, err := c.Get(context.Background(), rs.Path("v1", "streams", "calendar_events", "records"),
		rs.Query{{Key: "connection_id", Value: revoked.ConnectionID}})
	re := rsErr(t, err)
	if re.Status != 403 || re.Code != "grant_revoked" || !strings.Contains(re.Message, "re-approved") ||
		!strings.Contains(re.Message, "choose another connection") || len(re.AvailableConnections) != 4 {
		t.Errorf("unusable read: %+v", re)
	}
}

// A child whose grant is revoked after the package was resolved is found
// during discovery and then left out.
func TestChildRevokedDuringDiscoveryBecomesUnusable(t *testing.T) {
	a := newScripted(t, "cin_a", hits("a", 2, -3))
	r := newScripted(t, "cin_r", hits("r", 2, -3))
	r.status = 403
	c, err := fanout.New(fanout.Options{Members: []fanout.Member{a.member(t, "ga"), r.member(t, "gr")}})
	if err != nil {
		t.Fatal(err)
	}
	doc := get(t, c, searchPath, rs.Query{{Key: "q", Value: "x"}})
	if len(keys(doc)) != 2 || !strings.Contains(doc.Get("meta.warnings.0.message").Str, "re-approved") {
		t.Errorf("partial search: %s", doc.Raw)
	}
	before := r.calls.Load()
	get(t, c, searchPath, rs.Query{{Key: "q", Value: "y"}})
	if r.calls.Load() != before {
		t.Error("a child found revoked was called again")
	}
	if ms := c.Members(); ms[1].Unusable != "grant_revoked" {
		t.Errorf("member not marked: %+v", ms[1])
	}
}

func TestSchemaAndStreamsMerge(t *testing.T) {
	s := demoServer(t)
	pms, c := demoPackage(t, s)
	doc := get(t, c, rs.Path("v1", "schema"), rs.Query{{Key: "view", Value: "compact"}})
	if n := doc.Get("connectors.#").Int(); n != int64(len(pms)) {
		t.Errorf("%d connectors, want one per member (%d)", n, len(pms))
	}
	doc.Get("connectors").ForEach(func(_, cn gjson.Result) bool {
		if cn.Get("source.grant_id").Str == "" || cn.Get("source.connection_id").Str == "" || cn.Get("source.id").Str == "" {
			t.Errorf("connector source not tagged: %s", cn.Get("source").Raw)
		}
		return true
	})
	if doc.Get("package.grant_package").Type != gjson.True || doc.Get("package.member_count").Int() != int64(len(pms)) {
		t.Errorf("package %s", doc.Get("package").Raw)
	}
	st := get(t, c, rs.Path("v1", "streams"), nil)
	grants := map[string]bool{}
	st.Get("data").ForEach(func(_, row gjson.Result) bool {
		grants[row.Get("source.grant_id").Str] = true
		if row.Get("grant_id").Str == "" || row.Get("connector_key").Str == "" {
			t.Errorf("row not tagged: %s", row.Raw)
		}
		return true
	})
	if len(grants) != len(pms) {
		t.Errorf("stream rows from %d grants, want %d", len(grants), len(pms))
	}
}

func TestCursorForgedOrForAnotherQueryRefused(t *testing.T) {
	a := newScripted(t, "cin_a", hits("a", 5, -3))
	c, err := fanout.New(fanout.Options{Members: []fanout.Member{a.member(t, "ga"), newScripted(t, "cin_b", nil).member(t, "gb")}})
	if err != nil {
		t.Fatal(err)
	}
	doc := get(t, c, searchPath, rs.Query{{Key: "q", Value: "x"}, {Key: "limit", Value: "2"}})
	next := doc.Get("next_cursor").Str
	for name, q := range map[string]rs.Query{
		"other query": {{Key: "q", Value: "y"}, {Key: "limit", Value: "2"}, {Key: "cursor", Value: next}},
		"forged":      {{Key: "q", Value: "x"}, {Key: "limit", Value: "2"}, {Key: "cursor", Value: next[:len(next)-2] + "AA"}},
		"child's own": {{Key: "q", Value: "x"}, {Key: "limit", Value: "2"}, {Key: "cursor", Value: "2"}},
	} {
		_, err := c.Get(context.Background(), searchPath, q)
		if re := rsErr(t, err); re.Status != 400 || re.Code != "invalid_cursor" {
			t.Errorf("%s: %+v", name, re)
		}
	}
}

func TestStreamHeldOnlyByUnusableMember(t *testing.T) {
	s := demoServer(t)
	_, c := demoPackage(t, s, pdpptest.PackageChild{ConnectionID: connectionOf(t, s, "calendar"), Revoked: true})
	_, err := c.Get(context.Background(), rs.Path("v1", "streams", "calendar_events", "records"), nil)
	if re := rsErr(t, err); re.Status != 403 || re.Code != "grant_revoked" || !strings.Contains(re.Message, "re-approved") {
		t.Errorf("stream of a revoked child: %+v", re)
	}
}

// The composite cursor names children by index and leaves exhausted ones
// out, so it stays far below the 4,096 bytes the tools accept as a cursor.
func TestCompositeCursorStaysSmall(t *testing.T) {
	var ms []fanout.Member
	for i := range 16 {
		s := newScripted(t, "cin_"+strconv.Itoa(i), hits("h"+strconv.Itoa(i)+"_", 5, -3))
		ms = append(ms, s.member(t, "grt_"+strings.Repeat("x", 40)+strconv.Itoa(i)))
	}
	c, err := fanout.New(fanout.Options{Members: ms})
	if err != nil {
		t.Fatal(err)
	}
	doc := get(t, c, searchPath, rs.Query{{Key: "q", Value: "x"}, {Key: "limit", Value: "3"}})
	next := doc.Get("next_cursor").Str
	if next == "" || len(next) > 1024 {
		t.Errorf("cursor over 16 members is %d bytes", len(next))
	}
}

// A merged page's links point at the provider that holds each hit: a
// relative record_url is made absolute on the child that answered.
func TestMergedHitsLinkToTheirOwnProvider(t *testing.T) {
	a := newScripted(t, "conn_a", hits("a", 2, 1))
	b := newScripted(t, "conn_b", hits("b", 2, 1))
	c, err := fanout.New(fanout.Options{Members: []fanout.Member{a.member(t, "g_a"), b.member(t, "g_b")}})
	if err != nil {
		t.Fatal(err)
	}
	doc := get(t, c, "/v1/search", rs.Query{{Key: "q", Value: "x"}, {Key: "limit", Value: "10"}})
	want := map[string]string{"conn_a": a.srv.URL, "conn_b": b.srv.URL}
	n := 0
	doc.Get("data").ForEach(func(_, h gjson.Result) bool {
		n++
		base := want[h.Get("connection_id").Str]
		if u := h.Get("record_url").Str; !strings.HasPrefix(u, base+"/v1/streams/notes/records/") {
			t.Errorf("hit of %s: record_url %q, want it on %s", h.Get("connection_id").Str, u, base)
		}
		return true
	})
	if n != 4 {
		t.Fatalf("%d hits, want 4", n)
	}
}
