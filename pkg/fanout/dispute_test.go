package fanout_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// provider is a loopback RS that claims the connections conns in its
// schema and serves, for each of them, one notes record and one search
// hit saying they come from that connection. It counts record reads.
type provider struct {
	srv         *httptest.Server
	conns       []string
	failSchema  atomic.Int32 // schema answers 503 while this counts down
	recordReads atomic.Int32
	// bare hits name no connection: they are taken to be from the
	// member's one connection.
	bare bool
}

func newProvider(t *testing.T, conns ...string) *provider {
	t.Helper()
	p := &provider{conns: conns}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *provider) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	var body any
	switch r.URL.Path {
	case "/v1/schema":
		if p.failSchema.Add(-1) >= 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":{"code":"unavailable","message":"try later","type":"api_error"}}`))
			return
		}
		var gc []map[string]any
		for _, c := range p.conns {
			gc = append(gc, map[string]any{"connection_id": c, "display_name": "Notes"})
		}
		body = map[string]any{"connectors": []map[string]any{{"connector_key": "notes",
			"granted_connections": gc, "streams": []map[string]any{{"name": "notes"}}}}}
	case "/v1/streams":
		row := map[string]any{"object": "stream", "name": "notes", "record_count": 1}
		if !p.bare {
			row["connection_id"] = p.conns[0]
		}
		body = map[string]any{"object": "list", "has_more": false, "data": []any{row}}
	case "/v1/streams/notes/records":
		p.recordReads.Add(1)
		var rows []map[string]any
		for _, c := range p.conns {
			rows = append(rows, map[string]any{"object": "record", "id": "r-" + c, "stream": "notes", "connection_id": c,
				"data": map[string]any{"title": "a note of " + c}})
		}
		body = map[string]any{"object": "list", "has_more": false, "data": rows}
	case "/v1/search":
		var hits []map[string]any
		for _, c := range p.conns {
			h := map[string]any{"object": "search_result", "stream": "notes", "record_key": "r-" + c,
				"connection_id": c, "record_url": "/v1/streams/notes/records/r-" + c,
				"score": map[string]any{"kind": "bm25", "order": "lower_is_better", "value": -1}}
			if p.bare {
				delete(h, "connection_id")
				h["record_key"] = "made-up"
			}
			hits = append(hits, h)
		}
		body = map[string]any{"object": "list", "has_more": false, "data": hits}
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"code":"not_found","message":"Not found","type":"not_found_error"}}`))
		return
	}
	_ = json.NewEncoder(w).Encode(body)
}

// discovered is a client over members read from their own schemas, as a
// stdio server started with several --provider-url values builds it.
func discovered(t *testing.T, ms ...fanout.Member) *fanout.Client {
	t.Helper()
	c, err := fanout.New(fanout.Options{Members: fanout.Discover(context.Background(), ms, 5*time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// readConns lists the connection of every row or hit in doc's data.
func readConns(doc gjson.Result) []string {
	var out []string
	doc.Get("data").ForEach(func(_, e gjson.Result) bool {
		out = append(out, e.Get("connection_id").Str)
		return true
	})
	return out
}

// A provider that lists another provider's connection in its own schema
// does not come to hold it: a connection members on different resource
// servers both claim is held by none of them. A read naming it is
// ambiguous_connection (source_id does not settle it) and reaches no one;
// rows and hits claiming it, from either member, are left out and counted;
// the merged schema does not offer it; everything else reads as before.
func TestConnectionClaimedAcrossProvidersIsHeldByNone(t *testing.T) {
	victim := newProvider(t, "cin_victim")
	hostile := newProvider(t, "cin_hostile", "cin_victim")
	c := discovered(t,
		fanout.Member{GrantID: "g_victim", DisplayName: "Victim", RS: rsClient(t, victim.srv.URL, "tok-v")},
		fanout.Member{GrantID: "g_hostile", DisplayName: "Hostile", RS: rsClient(t, hostile.srv.URL, "tok-h")})
	ctx := context.Background()
	records := rs.Path("v1", "streams", "notes", "records")

	for _, q := range []rs.Query{
		{{Key: "connection_id", Value: "cin_victim"}},
		{{Key: "connection_id", Value: "cin_victim"}, {Key: "source_id", Value: "notes"}},
	} {
		_, err := c.Get(ctx, records, q)
		re := rsErr(t, err)
		if re.Status != http.StatusConflict || re.Code != "ambiguous_connection" || re.RetryWith == "source_id" ||
			!strings.Contains(re.Message, "different resource servers") {
			t.Errorf("read of the disputed connection %v: %+v", q, re)
		}
		for _, o := range re.AvailableConnections {
			if o.ConnectionID == "cin_victim" {
				t.Errorf("the disputed connection is offered: %+v", re.AvailableConnections)
			}
		}
	}
	if n := victim.recordReads.Load() + hostile.recordReads.Load(); n != 0 {
		t.Fatalf("%d record reads were made for the disputed connection", n)
	}

	doc := get(t, c, records, rs.Query{{Key: "connection_id", Value: "cin_hostile"}})
	if got := strings.Join(readConns(doc), ","); got != "cin_hostile" {
		t.Errorf("rows %s, want only cin_hostile's", got)
	}
	if w := doc.Get(`meta.warnings.#(code=="source_entries_refused")`); w.Get("source.grant_id").Str != "g_hostile" ||
		!strings.Contains(w.Get("message").Str, "1 entr(ies)") {
		t.Errorf("no warning counting the hostile row: %s", doc.Get("meta").Raw)
	}

	doc = get(t, c, searchPath, rs.Query{{Key: "q", Value: "x"}})
	if got := strings.Join(readConns(doc), ","); got != "cin_hostile" {
		t.Errorf("hits %s, want only cin_hostile's", got)
	}
	refusedBy := map[string]bool{}
	doc.Get("meta.warnings").ForEach(func(_, w gjson.Result) bool {
		if w.Get("code").Str == "source_hits_refused" {
			refusedBy[w.Get("source.grant_id").Str] = true
		}
		return true
	})
	if !refusedBy["g_hostile"] || !refusedBy["g_victim"] {
		t.Errorf("source_hits_refused for %v, want both members: %s", refusedBy, doc.Get("meta").Raw)
	}

	doc = get(t, c, rs.Path("v1", "schema"), nil)
	if strings.Contains(doc.Raw, "cin_victim") || !strings.Contains(doc.Raw, "cin_hostile") {
		t.Errorf("merged schema:\n%s", doc.Raw)
	}
}

// Two grants of one package may read one connection when they read the
// same resource server: their rows for it are theirs, and source_id picks
// one. Origins compare as origins (case, default port, path), whether
// given or taken from the member's RS client; a member whose origin is
// unknown shares with no one.
func TestConnectionSharedOnOneResourceServer(t *testing.T) {
	p := newProvider(t, "cin_shared")
	other := newProvider(t, "cin_shared")
	bare := func(c *rs.Client) fanout.RS { return struct{ fanout.RS }{c} } // no BaseURL
	for _, tc := range []struct {
		name     string
		a, b     fanout.Member
		disputed bool
	}{
		{"one RS", fanout.Member{RS: rsClient(t, p.srv.URL, "tok-a")}, fanout.Member{RS: rsClient(t, p.srv.URL, "tok-b")}, false},
		{"one RS, given spelt two ways",
			fanout.Member{Origin: "HTTPS://RS.Example:443/a", RS: rsClient(t, p.srv.URL, "tok-a")},
			fanout.Member{Origin: "https://rs.example/b", RS: rsClient(t, other.srv.URL, "tok-b")}, false},
		{"two RSs", fanout.Member{RS: rsClient(t, p.srv.URL, "tok-a")}, fanout.Member{RS: rsClient(t, other.srv.URL, "tok-b")}, true},
		{"another scheme", fanout.Member{Origin: "http://rs.example", RS: rsClient(t, p.srv.URL, "tok-a")},
			fanout.Member{Origin: "https://rs.example", RS: rsClient(t, p.srv.URL, "tok-b")}, true},
		{"another port", fanout.Member{Origin: "https://rs.example:8443", RS: rsClient(t, p.srv.URL, "tok-a")},
			fanout.Member{Origin: "https://rs.example", RS: rsClient(t, p.srv.URL, "tok-b")}, true},
		{"origin unknown", fanout.Member{RS: bare(rsClient(t, p.srv.URL, "tok-a"))}, fanout.Member{RS: rsClient(t, p.srv.URL, "tok-b")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.a.GrantID, tc.b.GrantID = "ga", "gb"
			tc.a.ConnectorKey, tc.b.ConnectorKey = "notes", "other"
			tc.a.ConnectionIDs, tc.b.ConnectionIDs = []string{"cin_shared"}, []string{"cin_shared"}
			c, err := fanout.New(fanout.Options{Members: []fanout.Member{tc.a, tc.b}})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Get(context.Background(), rs.Path("v1", "streams", "notes", "records"),
				rs.Query{{Key: "connection_id", Value: "cin_shared"}, {Key: "source_id", Value: "notes"}})
			if tc.disputed {
				if re := rsErr(t, err); re.Code != "ambiguous_connection" || !strings.Contains(re.Message, "different resource servers") {
					t.Errorf("read of a connection claimed across origins: %+v", re)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			doc := gjson.ParseBytes(resp.Body)
			if got := strings.Join(readConns(doc), ","); got != "cin_shared" || doc.Get("meta.warnings").Exists() {
				t.Errorf("rows %s, warnings %s: want the shared connection's row, nothing left out", got, doc.Get("meta.warnings").Raw)
			}
		})
	}
}

// A member whose schema could not be read at start claims nothing; once it
// is read (before a read routed by connection_id), a connection it shares
// with a member on another resource server becomes disputed, for reads and
// for what either member says about it.
func TestConnectionDisputedOnceUndiscoveredMemberIsRead(t *testing.T) {
	victim := newProvider(t, "cin_victim")
	victim.failSchema.Store(1)
	hostile := newProvider(t, "cin_hostile", "cin_victim")
	c := discovered(t,
		fanout.Member{GrantID: "g_victim", RS: rsClient(t, victim.srv.URL, "tok-v")},
		fanout.Member{GrantID: "g_hostile", RS: rsClient(t, hostile.srv.URL, "tok-h")})
	_, err := c.Get(context.Background(), rs.Path("v1", "streams", "notes", "records"), rs.Query{{Key: "connection_id", Value: "cin_victim"}})
	if re := rsErr(t, err); re.Code != "ambiguous_connection" || !strings.Contains(re.Message, "different resource servers") {
		t.Errorf("read once the victim is known: %+v", re)
	}
	doc := get(t, c, searchPath, rs.Query{{Key: "q", Value: "x"}})
	if got := strings.Join(readConns(doc), ","); got != "cin_hostile" {
		t.Errorf("hits %s, want only cin_hostile's", got)
	}
}

// A hit that names no connection is taken to be from its member's one
// connection, but never from a disputed one: a provider listing only
// another's connection cannot have its hits shown as that connection's,
// nor tag its source with it.
func TestDisputedConnectionNotGivenToWhatNamesNone(t *testing.T) {
	victim := newProvider(t, "cin_victim")
	hostile := newProvider(t, "cin_victim")
	hostile.bare = true
	c := discovered(t,
		fanout.Member{GrantID: "g_victim", RS: rsClient(t, victim.srv.URL, "tok-v")},
		fanout.Member{GrantID: "g_hostile", RS: rsClient(t, hostile.srv.URL, "tok-h")})
	doc := get(t, c, searchPath, rs.Query{{Key: "q", Value: "x"}})
	doc.Get("data").ForEach(func(_, h gjson.Result) bool {
		if h.Get("connection_id").Str == "cin_victim" {
			t.Errorf("hit shown as the disputed connection's: %s", h.Raw)
		}
		return true
	})
	if strings.Contains(doc.Get("meta").Raw, "cin_victim") {
		t.Errorf("a source is tagged with the disputed connection: %s", doc.Get("meta").Raw)
	}
	if doc = get(t, c, rs.Path("v1", "streams"), nil); strings.Contains(doc.Raw, "cin_victim") {
		t.Errorf("streams list tags a source with the disputed connection:\n%s", doc.Raw)
	}
}
