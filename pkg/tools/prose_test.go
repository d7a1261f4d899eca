package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout/fanouttest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

// The prose property: every sentence a result's text says is true for that
// answer. Counts in a header are what the text lists (or say both), every
// step advised works when taken (a larger limit lists more, a smaller limit
// reaches the rest through a cursor, an args line named is shown), and no
// text sends the model to an HTTP route. proseCheck checks one answer and
// takes the steps it advises; TestProseProperty runs it over generated
// calls of every tool, both datasets, a single grant and a package, short
// and long cursors.

// proseCall is one tool call and the text it answered, with the ids of
// structuredContent.results and the next_cursor of a search.
type proseCall struct {
	tool string
	args map[string]any
	text string
	err  bool
	ids  []string
	next string
}

func (c proseCall) String() string {
	b, _ := json.Marshal(c.args)
	return c.tool + " " + string(b)
}

var (
	searchHead   = regexp.MustCompile(`^search: (?:(\d+) of )?(\d+) hit\(s\)( listed)?`)
	searchLine   = regexp.MustCompile(`(?m)^\d+\. id=`)
	recordsHead  = regexp.MustCompile(`^[^\n]*?: (\d+) record\(s\)`)
	recordLine   = regexp.MustCompile(`(?m)^record\[\d+\] `)
	showingUpTo  = regexp.MustCompile(`Showing up to (\d+):`)
	schemaHead   = regexp.MustCompile(`^PDPP schema: connectors=\d+ streams=(\d+)`)
	schemaLine   = regexp.MustCompile(`(?m)^stream name=`)
	moreStreams  = regexp.MustCompile(`(?m)^more_streams=(\d+)`)
	groupsHead   = regexp.MustCompile(`: (\d+) group\(s\)`)
	moreGroups   = regexp.MustCompile(`more_groups=(\d+)`)
	searchSmall  = regexp.MustCompile(`search again with limit=(\d+)( and no cursor)?`)
	httpVerb     = regexp.MustCompile(`\b(GET|POST|PUT|PATCH|DELETE) /`)
	argsLine     = regexp.MustCompile(`read_record_field args=\{`)
	limitInRange = regexp.MustCompile(`raise limit, max 100`)
	hybridWay    = regexp.MustCompile(`search with mode lexical and with mode semantic, both with limit=(\d+), and page each by its next_cursor`)
)

// proseRunner calls a tool for proseCheck, to take an advised step.
type proseRunner func(tool string, args map[string]any) proseCall

// proseCheck returns what is untrue in c's text; run takes advised steps.
func proseCheck(c proseCall, run proseRunner) []string {
	var bad []string
	fail := func(format string, a ...any) { bad = append(bad, fmt.Sprintf(format, a...)) }
	txt := c.text

	// No HTTP route as something to call: no verb and path, and /v1/ only
	// inside an absolute URL (a citation link).
	if httpVerb.MatchString(txt) {
		fail("names an HTTP route: %q", httpVerb.FindString(txt))
	}
	for i := 0; ; {
		j := strings.Index(txt[i:], "/v1/")
		if j < 0 {
			break
		}
		at := i + j
		start := strings.LastIndexAny(txt[:at], " \t\n\"(=") + 1
		// A JSON string value of record data (a blob's fetch_url) is data,
		// not advice.
		if !strings.Contains(txt[start:at], "://") && !strings.HasSuffix(txt[:at], `":"`) {
			fail("names a route %q outside a URL", clipProse(txt[start:], 40))
		}
		i = at + 4
	}
	if strings.Contains(txt, "args shown") && !argsLine.MatchString(txt) {
		fail("names the args shown, and shows no args line")
	}
	if strings.Contains(txt, "introspection") {
		fail("speaks of token introspection")
	}
	if _, has := c.args["connection_id"]; has && strings.Contains(txt, "pass connection_id") {
		fail("advises connection_id, which the call already passed")
	}
	if c.err {
		return bad
	}
	switch c.tool {
	case "search":
		bad = append(bad, checkSearchProse(c, run)...)
	case "query_records":
		bad = append(bad, checkRecordsProse(c, run)...)
	case "schema":
		if m := schemaHead.FindStringSubmatch(txt); m != nil {
			n, _ := strconv.Atoi(m[1])
			listed := len(schemaLine.FindAllString(txt, -1))
			more := 0
			if mm := moreStreams.FindStringSubmatch(txt); mm != nil {
				more, _ = strconv.Atoi(mm[1])
			}
			if listed > 0 && listed+more != n {
				fail("header says streams=%d; %d listed and more_streams=%d", n, listed, more)
			}
		}
	case "aggregate":
		if m := groupsHead.FindStringSubmatch(txt); m != nil {
			n, _ := strconv.Atoi(m[1])
			listed := 0
			if i := strings.Index(txt, " group(s) ["); i >= 0 && n > 0 {
				listed = strings.Count(txt[i:strings.Index(txt[i:], "]")+i], "=")
			}
			more := 0
			if mm := moreGroups.FindStringSubmatch(txt); mm != nil {
				more, _ = strconv.Atoi(mm[1])
			}
			if listed+more != n {
				fail("header says %d group(s); %d listed and more_groups=%d", n, listed, more)
			}
		}
		if limitInRange.MatchString(txt) && limitOf(c.args, 0) >= 100 {
			fail("advises raising a limit that is at its maximum")
		}
	case "read_record_field":
		if strings.Contains(txt, "complete=false") && strings.Contains(txt, "the field ends here") {
			fail("says complete=false and that the field ends here")
		}
	}
	return bad
}

func checkSearchProse(c proseCall, run proseRunner) []string {
	var bad []string
	fail := func(format string, a ...any) { bad = append(bad, fmt.Sprintf(format, a...)) }
	txt := c.text
	m := searchHead.FindStringSubmatch(txt)
	if m == nil {
		return []string{"no search header"}
	}
	n, _ := strconv.Atoi(m[2])
	listed := len(searchLine.FindAllString(txt, -1))
	switch {
	case m[1] != "":
		k, _ := strconv.Atoi(m[1])
		if k != listed || k >= n || m[3] == "" {
			fail("header %q, %d listed", m[0], listed)
		}
	case n != listed:
		fail("header says %d hit(s); %d listed", n, listed)
	}
	if strings.Contains(txt, "smaller limit") {
		fail("advises a smaller limit without saying which")
	}
	limit := limitOf(c.args, 25)
	hybrid := c.args["mode"] == "hybrid"
	if strings.Contains(txt, "larger limit") {
		if limit >= 100 {
			fail("advises a larger limit at limit=%d", limit)
		} else if run != nil {
			next := cloneArgs(c.args)
			next["limit"] = 100
			r := run("search", next)
			if got := len(searchLine.FindAllString(r.text, -1)); r.err || got <= listed {
				fail("advises a larger limit, which lists %d (this lists %d)", got, listed)
			}
		}
	}
	if sm := searchSmall.FindStringSubmatch(txt); sm != nil {
		k, _ := strconv.Atoi(sm[1])
		_, hasCursor := c.args["cursor"]
		switch {
		case hybrid:
			fail("advises paging hybrid search")
		case k <= 0 || k >= limit:
			fail("advises limit=%d at limit=%d", k, limit)
		case (sm[2] != "") != hasCursor:
			fail("advises %q, the call had cursor=%v", sm[0], hasCursor)
		case run != nil:
			next := cloneArgs(c.args)
			next["limit"] = k
			delete(next, "cursor")
			r := run("search", next)
			// Progress, and a cursor on: that answer's own advice is
			// checked when it is generated, so the chain reaches the rest.
			if r.err || len(searchLine.FindAllString(r.text, -1)) == 0 || !strings.Contains(r.text, "next_cursor=") {
				fail("advises limit=%d, which answers:\n%s", k, clipProse(r.text, 400))
			}
		}
	} else if strings.Contains(txt, "page by next_cursor") && !strings.Contains(txt, "next_cursor=") {
		fail("advises paging by a next_cursor it does not show")
	}
	if listed < n && !strings.Contains(txt, "more hit(s) not listed") {
		fail("does not say how to reach the %d hits it does not list", n-listed)
	}
	if hybrid && run != nil && strings.Contains(txt, "has_more=true") {
		bad = append(bad, checkHybridReach(c, run)...)
	}
	return bad
}

// checkHybridReach follows the way a hybrid answer with more hits gives to
// every match: each match of the deepest hybrid search (limit 100) must be
// on a page of the modes it names, at the limit it names, paged by
// next_cursor to the end.
func checkHybridReach(c proseCall, run proseRunner) []string {
	m := hybridWay.FindStringSubmatch(c.text)
	if m == nil {
		return []string{"says more hybrid hits exist and gives no way through every match"}
	}
	limit, _ := strconv.Atoi(m[1])
	deepest := cloneArgs(c.args)
	deepest["limit"] = 100
	all := run("search", deepest)
	if all.err {
		return []string{"the deepest hybrid search failed:\n" + clipProse(all.text, 300)}
	}
	found := map[string]bool{}
	for _, mode := range []string{"lexical", "semantic"} {
		args := cloneArgs(c.args)
		args["mode"], args["limit"] = mode, limit
		for page := 0; ; page++ {
			r := run("search", args)
			if r.err || page == 50 {
				return []string{fmt.Sprintf("following the way on (%s, limit=%d) failed on page %d:\n%s", mode, limit, page+1, clipProse(r.text, 300))}
			}
			for _, id := range r.ids {
				found[id] = true
			}
			if r.next == "" {
				break
			}
			args = cloneArgs(args)
			args["cursor"] = r.next
		}
	}
	var missed []string
	for _, id := range all.ids {
		if !found[id] {
			missed = append(missed, id)
		}
	}
	if len(missed) > 0 {
		return []string{fmt.Sprintf("%d of %d hybrid matches are not reached by the way on it gives (%s): %s",
			len(missed), len(all.ids), m[0], strings.Join(missed[:min(len(missed), 5)], " "))}
	}
	return nil
}

func checkRecordsProse(c proseCall, run proseRunner) []string {
	var bad []string
	fail := func(format string, a ...any) { bad = append(bad, fmt.Sprintf(format, a...)) }
	txt := c.text
	m := recordsHead.FindStringSubmatch(txt)
	if m == nil {
		return []string{"no records header"}
	}
	n, _ := strconv.Atoi(m[1])
	listed := len(recordLine.FindAllString(txt, -1))
	s := showingUpTo.FindStringSubmatch(txt)
	switch {
	case s != nil:
		if k, _ := strconv.Atoi(s[1]); k != listed {
			fail("says Showing up to %d; %d listed", k, listed)
		}
	case n != listed:
		fail("header says %d record(s); %d listed", n, listed)
	}
	if strings.Contains(txt, "smaller limit") {
		switch {
		case listed == n:
			fail("advises a smaller limit, and every record is listed")
		case run != nil && listed > 0:
			next := cloneArgs(c.args)
			next["limit"] = listed
			r := run("query_records", next)
			if r.err || !strings.Contains(r.text, "next_cursor=") {
				fail("advises a smaller limit (%d), which gives no cursor to the rest:\n%s", listed, clipProse(r.text, 300))
			}
		}
	}
	return bad
}

func limitOf(args map[string]any, def int) int {
	switch v := args["limit"].(type) {
	case int:
		return v
	case float64:
		return int(v)
	}
	return def
}

func cloneArgs(a map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	return out
}

func clipProse(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// longCursors lengthens every next_cursor the RS sends by a padding the
// tools cannot tell from a real cursor, and strips it from cursors sent
// back: the same answers with the long cursors some providers mint.
type longCursors struct {
	tools.RS
}

const cursorPad = ".pad"

func (l longCursors) Get(ctx context.Context, path string, q rs.Query) (*rs.Response, error) {
	for i, p := range q {
		if p.Key == "cursor" {
			q[i].Value, _, _ = strings.Cut(p.Value, cursorPad)
		}
	}
	resp, err := l.RS.Get(ctx, path, q)
	if err != nil || resp == nil {
		return resp, err
	}
	if c := gjson.GetBytes(resp.Body, "next_cursor"); c.Type == gjson.String && c.Str != "" {
		long := c.Str + cursorPad + strings.Repeat("x", 600)
		b, _ := json.Marshal(long)
		body := make([]byte, 0, len(resp.Body)+len(b))
		body = append(body, resp.Body[:c.Index]...)
		body = append(body, b...)
		body = append(body, resp.Body[c.Index+len(c.Raw):]...)
		r := *resp
		r.Body = body
		return &r, nil
	}
	return resp, nil
}

// packageRS is a fan-out client over a package of one child grant per
// connection of the double's dataset.
func packageRS(t testing.TB) func(*pdpptest.Server) tools.RS {
	return func(srv *pdpptest.Server) tools.RS {
		var children []pdpptest.PackageChild
		for _, c := range srv.Dataset().Connectors {
			for _, conn := range c.Connections {
				children = append(children, pdpptest.PackageChild{ConnectionID: conn.ID})
			}
		}
		tok, _ := srv.IssuePackage(children...)
		id, kids, err := fanouttest.PackageChildren(srv, tok)
		if err != nil {
			t.Fatal(err)
		}
		var members []fanout.Member
		for _, ch := range kids {
			tok := ch.Token
			c, err := rs.New(rs.Options{BaseURL: srv.URL(), Token: func() string { return tok }, CompatSearchShapes: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.CloseIdleConnections)
			members = append(members, fanout.Member{GrantID: ch.GrantID, ConnectionIDs: ch.ConnectionIDs,
				ConnectorKey: ch.ConnectorKey, DisplayName: ch.DisplayName, Streams: ch.Streams, RS: c})
		}
		fc, err := fanout.New(fanout.Options{Members: members, PackageID: id})
		if err != nil {
			t.Fatal(err)
		}
		return fc
	}
}

var (
	schemaStream = regexp.MustCompile(`(?m)^stream name="([^"]+)"`)
	schemaConn   = regexp.MustCompile(`connection_id:("(?:[^"\\]|\\.)*"|[^,}|\s"]+)`)
	nextCursor   = regexp.MustCompile(`next_cursor="([^"]+)"`)
	groupable    = regexp.MustCompile(`[;=]([A-Za-z_][A-Za-z0-9_]*)\[[^\]]*a=[^\]]*group_by`)
	firstFetch   = regexp.MustCompile(`first_fetch_id=(\S+)`)
	readArgs     = regexp.MustCompile(`(?m)read_record_field args=(\{.*\})$`)
	nextRead     = regexp.MustCompile(`(?m)^next read_record_field args=(\{.*\})$`)
)

// TestProseProperty checks proseCheck over generated answers of every tool:
// gmail and demo datasets, a single grant and a package of every connection,
// short and long cursors, every search mode, small and large limits, and the
// pages, fetches and field reads the texts lead to.
func TestProseProperty(t *testing.T) {
	type variant struct {
		name          string
		demo, pkg, lc bool
	}
	var variants []variant
	for _, demo := range []bool{false, true} {
		for _, pkg := range []bool{false, true} {
			for _, lc := range []bool{false, true} {
				name := map[bool]string{false: "gmail", true: "demo"}[demo] +
					map[bool]string{false: "/grant", true: "/package"}[pkg] +
					map[bool]string{false: "/short", true: "/long"}[lc]
				variants = append(variants, variant{name, demo, pkg, lc})
			}
		}
	}
	// One double per dataset, shared: indexing the demo dataset is most of
	// the cost.
	servers := map[bool]*pdpptest.Server{false: pdpptest.New(t, pdpptest.Options{}),
		true: pdpptest.New(t, pdpptest.Options{Dataset: demoDataset(t)})}
	for i, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			o := harnessOptions{demo: v.demo, srv: servers[v.demo]}
			base := func(srv *pdpptest.Server) tools.RS {
				c, err := rs.New(rs.Options{BaseURL: srv.URL(), Token: func() string { return srv.Token(pdpptest.TokenClient) }})
				if err != nil {
					t.Fatal(err)
				}
				return c
			}
			if v.pkg {
				base = packageRS(t)
			}
			o.rs = base
			if v.lc {
				o.rs = func(srv *pdpptest.Server) tools.RS { return longCursors{base(srv)} }
			}
			h := newHarness(t, o)
			g := &proseGen{t: t, h: h, rnd: rand.New(rand.NewPCG(uint64(i), 19))}
			g.explore(v.demo)
			if g.calls < 25 {
				t.Errorf("only %d calls generated", g.calls)
			}
		})
	}
}

// proseGen generates calls from what earlier texts show, checks each answer
// and takes the steps it advises.
type proseGen struct {
	t     *testing.T
	h     *harness
	rnd   *rand.Rand
	calls int
}

func (g *proseGen) run(tool string, args map[string]any) proseCall {
	g.t.Helper()
	g.calls++
	res := g.h.call(g.t, tool, args)
	c := proseCall{tool: tool, args: args, text: text(res), err: res.IsError}
	if sc, ok := res.StructuredContent.(map[string]any); ok && tool == "search" {
		rs, _ := sc["results"].([]any)
		for _, r := range rs {
			if id, _ := r.(map[string]any)["id"].(string); id != "" {
				c.ids = append(c.ids, id)
			}
		}
		if d, ok := sc["data"].(map[string]any); ok {
			c.next, _ = d["next_cursor"].(string)
		}
	}
	return c
}

// check runs a call and checks its text, following advice one level deep.
func (g *proseGen) check(tool string, args map[string]any) proseCall {
	g.t.Helper()
	c := g.run(tool, args)
	for _, p := range proseCheck(c, g.run) {
		g.t.Errorf("%s: %s\n%s", c, p, clipProse(c.text, 2500))
	}
	return c
}

func (g *proseGen) pick(n int, of []string) []string {
	s := append([]string(nil), of...)
	g.rnd.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	return s[:min(n, len(s))]
}

func (g *proseGen) explore(demo bool) {
	sc := g.check("schema", map[string]any{})
	streams := uniq(submatches(schemaStream, sc.text))
	var conns []string
	for _, c := range uniq(submatches(schemaConn, sc.text)) {
		if strings.HasPrefix(c, `"`) {
			if err := json.Unmarshal([]byte(c), &c); err != nil {
				g.t.Errorf("connection_id %s: %v", c, err)
			}
		}
		conns = append(conns, c)
	}
	// Display names are what the person named a source: shown as written,
	// quoted when they hold a space, never rewritten.
	for _, cn := range g.h.rs.Dataset().Connectors {
		for _, conn := range cn.Connections {
			if conn.DisplayName == "" || !strings.Contains(sc.text, conn.ID) {
				continue
			}
			b, _ := json.Marshal(conn.DisplayName)
			if !strings.Contains(sc.text, "display_name:"+string(b)) && !strings.Contains(sc.text, "display_name:"+conn.DisplayName+"}") {
				g.t.Errorf("schema does not show display name %q as written:\n%s", conn.DisplayName, sc.text)
			}
		}
	}
	if len(streams) == 0 {
		g.t.Fatalf("schema lists no streams:\n%s", sc.text)
	}
	g.check("query_records", map[string]any{"stream": "no_such_stream"})
	for _, s := range g.pick(3, streams) {
		st := g.check("schema", map[string]any{"stream": s})
		g.check("aggregate", map[string]any{"stream": s, "metric": "count"})
		if m := groupable.FindStringSubmatch(st.text); m != nil {
			g.check("aggregate", map[string]any{"stream": s, "metric": "count", "group_by": m[1], "limit": []int{1, 5, 100}[g.rnd.IntN(3)]})
		}
		for _, limit := range g.pick(2, []string{"1", "2", "5", "25", "100"}) {
			n, _ := strconv.Atoi(limit)
			args := map[string]any{"stream": s, "limit": n}
			if g.rnd.IntN(3) == 0 && len(conns) > 0 {
				args["connection_id"] = conns[g.rnd.IntN(len(conns))]
			}
			c := g.check("query_records", args)
			if m := nextCursor.FindStringSubmatch(c.text); m != nil {
				next := cloneArgs(args)
				next["cursor"] = m[1]
				g.check("query_records", next)
			}
		}
	}
	queries := []string{"Lisbon", "receipt", "offsite", "flight"}
	if demo {
		queries = []string{"receipt", "Lisbon", "launch", "marigold contingency", "invoice"}
	}
	for _, q := range g.pick(2, queries) {
		for _, mode := range []string{"lexical", "semantic", "hybrid"} {
			limit := []int{1, 3, 5, 25, 100}[g.rnd.IntN(5)]
			args := map[string]any{"q": q, "mode": mode, "limit": limit}
			c := g.check("search", args)
			if m := nextCursor.FindStringSubmatch(c.text); m != nil && mode != "hybrid" {
				next := cloneArgs(args)
				next["cursor"] = m[1]
				g.check("search", next)
			}
			if m := firstFetch.FindStringSubmatch(c.text); m != nil && g.rnd.IntN(2) == 0 {
				g.check("fetch", map[string]any{"id": m[1]})
			}
			if m := readArgs.FindStringSubmatch(c.text); m != nil {
				g.readOn(m[1])
			}
		}
	}
}

// readOn reads a field from args, then its next window and its last one.
func (g *proseGen) readOn(raw string) {
	var args map[string]any
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		g.t.Errorf("args line %s: %v", raw, err)
		return
	}
	c := g.check("read_record_field", args)
	m := nextRead.FindStringSubmatch(c.text)
	if m == nil {
		return
	}
	var next map[string]any
	if err := json.Unmarshal([]byte(m[1]), &next); err != nil {
		g.t.Errorf("next args line %s: %v", m[1], err)
		return
	}
	c = g.check("read_record_field", next)
	total := gjson.Get(`{"t":`+regexp.MustCompile(`total_chars=(\d+)`).FindStringSubmatch(c.text + " total_chars=0")[1]+`}`, "t").Int()
	if total > 0 {
		last := cloneArgs(next)
		last["offset_chars"] = max(0, int(total)-100)
		delete(last, "cursor")
		g.check("read_record_field", last)
	}
}

func submatches(re *regexp.Regexp, s string) []string {
	var out []string
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

func uniq(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// TestProseCases are the answers seen untrue on a real resource server, each
// checked by proseCheck and by what it must (not) say.
func TestProseCases(t *testing.T) {
	demo := pdpptest.New(t, pdpptest.Options{Dataset: demoDataset(t)})
	grant := newHarness(t, harnessOptions{demo: true, srv: demo})
	pkg := packageRS(t)
	longPkg := newHarness(t, harnessOptions{demo: true, srv: demo, rs: func(s *pdpptest.Server) tools.RS { return longCursors{pkg(s)} }})
	gmail := newHarness(t, harnessOptions{})
	body := "cin_3a769b3e43e3792e0a811ceb/mail_bodies:177aa15315e811e9_body"
	for _, tc := range []struct {
		name       string
		h          *harness
		tool       string
		args       map[string]any
		want, nope []string
	}{
		{"hybrid search does not loop between larger and smaller limits", grant, "search",
			map[string]any{"q": "receipt", "mode": "hybrid"}, []string{"hybrid search has no cursor"}, []string{"smaller limit", "larger limit"}},
		{"hybrid search at a small limit", grant, "search",
			map[string]any{"q": "receipt", "mode": "hybrid", "limit": 5}, nil, []string{"smaller limit"}},
		{"every hybrid match is reached by the way on", grant, "search",
			map[string]any{"q": "launch", "mode": "hybrid", "limit": 5, "streams": []string{"mail_messages"}},
			[]string{"with mode lexical and with mode semantic, both with limit=100"}, []string{"lexical or semantic"}},
		{"the header counts what is listed", grant, "search",
			map[string]any{"q": "Lisbon", "mode": "hybrid", "limit": 5}, []string{"search: 3 of 5 hit(s) listed "}, nil},
		{"a package with long cursors names args lines only when shown", longPkg, "search",
			map[string]any{"q": "Lisbon", "limit": 25}, nil, nil},
		{"records of several connections without a cursor", grant, "query_records",
			map[string]any{"stream": "mail_messages", "limit": 2}, []string{"pass connection_id"}, []string{"smaller limit", "same cursor"}},
		{"expand names the schema tool", gmail, "query_records",
			map[string]any{"stream": "messages", "connection_id": "cin_gmail_work", "expand": []string{"attachments"}},
			[]string{"schema(stream) lists the relations"}, []string{"GET /v1/schema"}},
		{"the last window does not say complete=false", grant, "read_record_field",
			map[string]any{"id": body, "field_path": "body_text", "offset_chars": 52000}, []string{"last_window=true", "the field ends here"}, []string{"complete=false"}},
		{"an ungranted stream says what it means", grant, "query_records",
			map[string]any{"stream": "calendar_attendees"}, []string{"message: the stream is not in this grant\nnext: call schema"}, []string{"introspection", "http_status=401"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &proseGen{t: t, h: tc.h}
			c := g.check(tc.tool, tc.args)
			for _, w := range tc.want {
				if !strings.Contains(c.text, w) {
					t.Errorf("text lacks %q:\n%s", w, c.text)
				}
			}
			for _, w := range tc.nope {
				if strings.Contains(c.text, w) {
					t.Errorf("text says %q:\n%s", w, c.text)
				}
			}
		})
	}
}

// TestTitlesUseDeclaredRoles: search and fetch titles are the value of the
// field the schema declares primary-title, before schema has been called as
// after; never a guess from field names.
func TestTitlesUseDeclaredRoles(t *testing.T) {
	h := newHarness(t, harnessOptions{demo: true})
	id := "cin_838839b61dc602e1869f025c/mail_messages:f17a90e77fccf6a1"
	search := map[string]any{"q": "Zipline trip receipt", "streams": []string{"mail_messages"}, "limit": 1}
	fetchTitle := func() string { return gjson.Get(text(h.call(t, "fetch", map[string]any{"id": id})), "title").Str }
	const want = "Your Zipline trip receipt"
	for _, when := range []string{"before schema", "after schema"} {
		if got := fetchTitle(); got != want {
			t.Errorf("fetch title %s %q, want the subject %q", when, got, want)
		}
		if txt := text(h.call(t, "search", search)); !strings.Contains(txt, `title="`+want+`"`) {
			t.Errorf("search title %s is not the subject:\n%s", when, txt)
		}
		h.call(t, "schema", map[string]any{})
	}
}
