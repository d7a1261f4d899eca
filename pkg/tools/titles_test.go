package tools_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

var hitLineRE = regexp.MustCompile(`(?m)^\d+\. id=.*$`)

// titledSearch is what one search answered: its hit lines and the titles,
// ids and (unmarked) snippets of structuredContent.results.
type titledSearch struct {
	lines                   []string
	ids, titles, plainSnips []string
}

func searchTitles(t *testing.T, h *harness, args map[string]any) titledSearch {
	t.Helper()
	res := h.call(t, "search", args)
	if res.IsError {
		t.Fatalf("search %v: %s", args, text(res))
	}
	out := titledSearch{lines: hitLineRE.FindAllString(text(res), -1)}
	for _, r := range h.rawResults(t) {
		out.ids = append(out.ids, r.Get("id").Str)
		out.titles = append(out.titles, r.Get("title").Str)
		out.plainSnips = append(out.plainSnips, strings.NewReplacer("<mark>", "", "</mark>", "").Replace(r.Get("snippet").Str))
	}
	return out
}

// declaredTitle reads, straight from the double, the value of the field
// the record's stream declares primary-title ("" when none or not a
// string).
func declaredTitle(t *testing.T, h *harness, id string) string {
	t.Helper()
	conn, rest, _ := strings.Cut(id, "/")
	stream, key, _ := strings.Cut(rest, ":")
	schema := gjson.Parse(h.direct(t, "/v1/schema", rs.Query{{Key: "view", Value: "compact"}, {Key: "stream", Value: stream}}))
	field := ""
	schema.Get("connectors.#.streams").ForEach(func(_, streams gjson.Result) bool {
		streams.ForEach(func(_, s gjson.Result) bool {
			s.Get("field_capabilities").ForEach(func(k, v gjson.Result) bool {
				if field == "" && s.Get("name").Str == stream && strings.Contains(","+v.Str+",", ",role=primary-title,") && !strings.Contains(v.Str, "g=false") {
					field = k.Str
				}
				return true
			})
			return true
		})
		return true
	})
	if field == "" {
		return ""
	}
	rec := gjson.Parse(h.direct(t, rs.Path("v1", "streams", stream, "records", key), rs.Query{{Key: "connection_id", Value: conn}}))
	return rec.Get("data." + gjson.Escape(field)).Str
}

// In a fresh server, the first search titles every hit that carries its
// declared title (a snippet of the whole primary-title field) with it,
// before any schema call, on a single grant and on a package; the hit lines
// are the same after a schema call; and the title is the same in the text,
// in structuredContent and in fetch's document.
func TestTitlesFromTheFirstCall(t *testing.T) {
	demo := pdpptest.New(t, pdpptest.Options{Dataset: demoDataset(t)})
	searches := []map[string]any{
		{"q": "launch", "streams": []string{"mail_messages"}, "limit": 10},
		{"q": "receipt", "limit": 10},
		{"q": "Lisbon", "mode": "semantic", "limit": 10},
		{"q": "launch", "mode": "hybrid", "limit": 10},
	}
	for _, v := range []struct {
		name string
		o    harnessOptions
	}{
		{"grant", harnessOptions{demo: true, srv: demo}},
		{"package", harnessOptions{demo: true, srv: demo, rs: packageRS(t)}},
	} {
		t.Run(v.name, func(t *testing.T) {
			h := newHarness(t, v.o)
			var first []titledSearch
			fromRole := 0
			for _, args := range searches {
				s := searchTitles(t, h, args)
				first = append(first, s)
				for i, id := range s.ids {
					want := declaredTitle(t, h, id)
					if want == "" || s.plainSnips[i] != want {
						continue // the hit does not carry its title
					}
					fromRole++
					if s.titles[i] != want {
						t.Errorf("search %v: hit %s is titled %q, not its %q", args, id, s.titles[i], want)
					}
					// Lines shorten titles past 80 characters.
					if i < len(s.lines) && utf8.RuneCountInString(want) <= 80 && !strings.Contains(s.lines[i], `title=`+jsonQuote(want)) {
						t.Errorf("hit line of %s does not show the title %q:\n%s", id, want, s.lines[i])
					}
				}
			}
			if fromRole < 5 {
				t.Fatalf("only %d hits carry their title: the test shows nothing", fromRole)
			}
			h.call(t, "schema", map[string]any{})
			for i, args := range searches {
				again := searchTitles(t, h, args)
				if strings.Join(again.lines, "\n") != strings.Join(first[i].lines, "\n") {
					t.Errorf("search %v: hit lines changed after schema:\nbefore:\n%s\nafter:\n%s", args,
						strings.Join(first[i].lines, "\n"), strings.Join(again.lines, "\n"))
				}
				if strings.Join(again.titles, "\n") != strings.Join(first[i].titles, "\n") {
					t.Errorf("search %v: titles changed after schema", args)
				}
			}
			// fetch titles the record as search did.
			s := first[0]
			for i, id := range s.ids[:min(3, len(s.ids))] {
				doc := gjson.Parse(text(h.call(t, "fetch", map[string]any{"id": id})))
				if want := declaredTitle(t, h, id); doc.Get("title").Str != want {
					t.Errorf("fetch %s: title %q, want the declared %q", id, doc.Get("title").Str, want)
				} else if s.plainSnips[i] == want && s.titles[i] != want {
					t.Errorf("fetch %s: title %q, search said %q", id, want, s.titles[i])
				}
			}
		})
	}
}

// lockedClock is a hand-driven clock safe for the cache's goroutines.
type lockedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *lockedClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *lockedClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// rolesReads counts the reads of the declared roles the double received,
// by bearer.
func rolesReads(srv *pdpptest.Server) map[string]int {
	n := map[string]int{}
	for _, r := range srv.Requests() {
		if isRolesRead(r.Path, r.RawQuery) {
			n[r.Header.Get("Authorization")]++
		}
	}
	return n
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// The roles are read at most once per credential and cache lifetime: calls
// of every tool that titles or previews records, at once, share one read;
// schema() replaces it; an expired table is read again, once; and another
// credential sharing the cache reads its own.
func TestRolesReadOnce(t *testing.T) {
	clk := &lockedClock{t: time.Unix(1_800_000_000, 0)}
	cache := tools.NewCapabilityCacheClock(time.Minute, clk.now)
	srv := pdpptest.New(t, pdpptest.Options{})
	keyed := func(key string) func(*tools.Env) {
		return func(e *tools.Env) { e.CredentialKey = func() string { return key } }
	}
	h := newHarness(t, harnessOptions{srv: srv, cache: cache, env: keyed("key-a")})
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"search", map[string]any{"q": "Lisbon"}},
		{"search", map[string]any{"q": "receipt", "mode": "semantic"}},
		{"search", map[string]any{"q": "flight", "mode": "hybrid"}},
		{"fetch", map[string]any{"id": "cin_gmail_personal/messages:p_msg_003"}},
		{"fetch", map[string]any{"id": "cin_gmail_work/messages:w_msg_004"}},
		{"query_records", map[string]any{"stream": "messages", "limit": 2}},
		{"query_records", map[string]any{"stream": "messages", "connection_id": "cin_gmail_work"}},
		{"search", map[string]any{"q": "offsite", "streams": []string{"messages"}}},
	}
	runAll := func() {
		var wg sync.WaitGroup
		errs := make(chan string, len(calls))
		for _, c := range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
				switch {
				case err != nil:
					errs <- c.tool + ": " + err.Error()
				case res.IsError:
					errs <- c.tool + ": " + text(res)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
	}
	runAll()
	if n := total(rolesReads(srv)); n != 1 {
		t.Fatalf("%d reads of the roles for %d concurrent calls, want 1", n, len(calls))
	}
	runAll()
	if n := total(rolesReads(srv)); n != 1 {
		t.Fatalf("%d reads of the roles after a second round, want 1", n)
	}
	// schema() reads the compact schema itself (one request of the same
	// shape) and leaves the roles in place.
	h.call(t, "schema", map[string]any{})
	runAll()
	if n := total(rolesReads(srv)); n != 2 {
		t.Fatalf("%d compact schema reads after schema() and a round, want 2 (schema's own, and the first)", n)
	}
	clk.advance(time.Minute)
	runAll()
	if n := total(rolesReads(srv)); n != 3 {
		t.Fatalf("%d reads after the cache lifetime, want one more (3)", n)
	}
	// Another credential sharing the cache reads its own, once.
	other := newHarness(t, harnessOptions{srv: srv, cache: cache, kind: pdpptest.TokenOwner, env: keyed("key-b")})
	srv.ResetRequests()
	for range 3 {
		other.call(t, "search", map[string]any{"q": "Lisbon"})
	}
	reads := rolesReads(srv)
	if len(reads) != 1 || reads["Bearer "+srv.Token(pdpptest.TokenOwner)] != 1 {
		t.Fatalf("reads by bearer %v, want one by the second credential", keysOnly(reads))
	}
}

// keysOnly lists counts without the bearers themselves.
func keysOnly(m map[string]int) []int {
	var out []int
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// In a package each member reads its own roles, once.
func TestRolesReadOncePerMember(t *testing.T) {
	srv := pdpptest.New(t, pdpptest.Options{Dataset: demoDataset(t)})
	h := newHarness(t, harnessOptions{demo: true, srv: srv, rs: packageRS(t)})
	for _, q := range []string{"launch", "receipt", "Lisbon"} {
		h.call(t, "search", map[string]any{"q": q, "limit": 5})
	}
	h.call(t, "fetch", map[string]any{"id": "cin_838839b61dc602e1869f025c/mail_messages:f17a90e77fccf6a1"})
	reads := rolesReads(srv)
	if len(reads) < 2 {
		t.Fatalf("roles read by %d members, want every member", len(reads))
	}
	for _, n := range reads {
		if n != 1 {
			t.Fatalf("reads per member %v, want 1 each", keysOnly(reads))
		}
	}
}

// A read of the roles that fails or is slow never fails the call: titles
// name source, stream and time, nothing says otherwise, the failure is
// remembered for a while, and the roles are read again after it.
func TestRolesReadFailure(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault pdpptest.Fault
	}{
		{"5xx", pdpptest.Fault{Path: "/v1/schema", Status: 503}},
		{"slow", pdpptest.Fault{Path: "/v1/schema", Delay: time.Minute}},
		{"not JSON", pdpptest.Fault{Path: "/v1/schema", InvalidJSON: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &lockedClock{t: time.Unix(1_800_000_000, 0)}
			cache := tools.NewCapabilityCacheClock(time.Hour, clk.now)
			srv := pdpptest.New(t, pdpptest.Options{Dataset: demoDataset(t)})
			h := newHarness(t, harnessOptions{demo: true, srv: srv, cache: cache, env: func(e *tools.Env) {
				tools.SetRolesTimings(e, 50*time.Millisecond, 200*time.Millisecond)
			}})
			remove := srv.Fault(tc.fault)
			args := map[string]any{"q": "Zipline trip receipt", "streams": []string{"mail_messages"}, "limit": 1}
			res := h.call(t, "search", args)
			txt := text(res)
			if res.IsError || !strings.Contains(txt, `title="Personal Mail / mail_messages / `) {
				t.Fatalf("search while the roles cannot be read:\n%s", txt)
			}
			for _, w := range []string{"schema", "role", "503", "unavailable"} {
				if strings.Contains(strings.ToLower(txt), w) {
					t.Errorf("the text speaks of %q:\n%s", w, txt)
				}
			}
			fetched := h.call(t, "fetch", map[string]any{"id": "cin_838839b61dc602e1869f025c/mail_messages:f17a90e77fccf6a1"})
			if fetched.IsError || !strings.HasPrefix(gjson.Get(text(fetched), "title").Str, "Personal Mail / mail_messages / 2025-06-01T") {
				t.Fatalf("fetch while the roles cannot be read:\n%s", text(fetched))
			}
			cache.SettleRoles()
			remove()
			// Remembered: not asked again at once.
			before := total(rolesReads(srv))
			h.call(t, "search", args)
			if n := total(rolesReads(srv)); n != before || before != 1 {
				t.Fatalf("%d reads of the roles before and %d after a call that follows a failure, want 1 and 1", before, n)
			}
			clk.advance(tools.RolesRetry)
			if txt := text(h.call(t, "search", args)); !strings.Contains(txt, `title="Your Zipline trip receipt"`) {
				t.Errorf("after the failure was forgotten the roles were not read again:\n%s", txt)
			}
		})
	}
}

// A role on a field the grant does not hold never makes a title: the
// schema flags it g=false, so the record is titled by source, stream and
// time even though the RS sends the field.
func TestRolesNeverWiden(t *testing.T) {
	srv := pdpptest.New(t, pdpptest.Options{Dataset: demoDataset(t)})
	h := newHarness(t, harnessOptions{demo: true, srv: srv})
	body := h.direct(t, "/v1/schema", rs.Query{{Key: "view", Value: "compact"}})
	narrowed := strings.Replace(body, `"subject":"t=text,role=primary-title,lex,sem"`, `"subject":"t=text,role=primary-title,g=false"`, 1)
	if narrowed == body {
		t.Fatal("the demo schema declares no subject primary-title")
	}
	srv.Fault(pdpptest.Fault{Path: "/v1/schema", Body: []byte(narrowed)})
	id := "cin_838839b61dc602e1869f025c/mail_messages:f17a90e77fccf6a1"
	doc := gjson.Parse(text(h.call(t, "fetch", map[string]any{"id": id})))
	if doc.Get("title").Str == "Your Zipline trip receipt" || !strings.HasPrefix(doc.Get("title").Str, "Personal Mail / mail_messages / ") {
		t.Errorf("title %q from a field the schema says is not granted", doc.Get("title").Str)
	}
}

// An RS that predates view=compact refuses it with a 400: the roles are
// then read from its full schema, as the schema tool reads it, and the
// first search still titles its hits by their declared field.
func TestTitlesFromAFullSchema(t *testing.T) {
	h := newHarness(t, harnessOptions{demo: true})
	h.rs.Fault(pdpptest.Fault{Path: "/v1/schema", Status: 400, Times: 1,
		Body: []byte(`{"error":{"type":"invalid_request_error","code":"unsupported_query","message":"Unsupported query parameter: view"}}`)})
	s := searchTitles(t, h, map[string]any{"q": "launch", "streams": []string{"mail_messages"}, "limit": 10})
	var reads []string
	for _, r := range h.requests(t) {
		if r.Path == "/v1/schema" {
			reads = append(reads, r.String())
		}
	}
	if want := []string{"/v1/schema?view=compact", "/v1/schema"}; !slices.Equal(reads, want) {
		t.Errorf("schema reads %v, want %v", reads, want)
	}
	fromRole := 0
	for i, id := range s.ids {
		want := declaredTitle(t, h, id)
		if want == "" || s.plainSnips[i] != want {
			continue
		}
		fromRole++
		if s.titles[i] != want {
			t.Errorf("hit %s is titled %q, not its %q", id, s.titles[i], want)
		}
	}
	if fromRole == 0 {
		t.Fatalf("no hit titled by its declared field: %q", s.titles)
	}
}
