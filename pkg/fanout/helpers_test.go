package fanout_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// demoServer is a demo-dataset double shared by a test's members.
func demoServer(t testing.TB) *pdpptest.Server {
	t.Helper()
	ds, err := dataset.Demo()
	if err != nil {
		t.Fatal(err)
	}
	return pdpptest.New(t, pdpptest.Options{Dataset: ds, Now: dataset.DemoTime})
}

// rsClient is a real RS client for one bearer.
func rsClient(t testing.TB, base, token string) *rs.Client {
	t.Helper()
	c, err := rs.New(rs.Options{BaseURL: base, Token: func() string { return token }, CompatSearchShapes: true})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// memberOf turns a double's child into a fan-out member.
func memberOf(t testing.TB, s *pdpptest.Server, m pdpptest.PackageMember) fanout.Member {
	t.Helper()
	out := fanout.Member{GrantID: m.GrantID, ConnectionIDs: []string{m.ConnectionID}, ConnectorKey: m.ConnectorKey,
		DisplayName: m.DisplayName, Streams: m.Streams, RS: rsClient(t, s.URL(), m.Token)}
	if m.Status != "active" {
		out.Unusable = m.Status
	}
	return out
}

// demoPackage is four children: personal mail, work mail, chat, bank.
func demoPackage(t testing.TB, s *pdpptest.Server, extra ...pdpptest.PackageChild) ([]pdpptest.PackageMember, *fanout.Client) {
	t.Helper()
	children := []pdpptest.PackageChild{
		{ConnectionID: dataset.DemoPersonalMailConnection},
		{ConnectionID: dataset.DemoWorkMailConnection},
		{ConnectionID: connectionOf(t, s, "chat")},
		{ConnectionID: connectionOf(t, s, "bank")},
	}
	_, pms := s.IssuePackage(append(children, extra...)...)
	var ms []fanout.Member
	for _, pm := range pms {
		ms = append(ms, memberOf(t, s, pm))
	}
	c, err := fanout.New(fanout.Options{Members: ms, ChildTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return pms, c
}

func connectionOf(t testing.TB, s *pdpptest.Server, key string) string {
	t.Helper()
	c := s.Dataset().Connector(key)
	if c == nil || len(c.Connections) == 0 {
		t.Fatalf("demo has no connector %q", key)
	}
	return c.Connections[0].ID
}

// requestsBy counts the requests the double received with token, by path.
func requestsBy(s *pdpptest.Server, token string) []pdpptest.Request {
	var out []pdpptest.Request
	for _, r := range s.Requests() {
		if r.Header.Get("Authorization") == "Bearer "+token {
			out = append(out, r)
		}
	}
	return out
}

func get(t testing.TB, c *fanout.Client, path string, q rs.Query) gjson.Result {
	t.Helper()
	resp, err := c.Get(context.Background(), path, q)
	if err != nil {
		t.Fatalf("GET %s %v: %v", path, q, err)
	}
	if !json.Valid(resp.Body) {
		t.Fatalf("GET %s: invalid JSON %s", path, resp.Body)
	}
	return gjson.ParseBytes(resp.Body)
}

func rsErr(t testing.TB, err error) *rs.Error {
	t.Helper()
	var re *rs.Error
	if !errors.As(err, &re) {
		t.Fatalf("error %v (%T) is not an *rs.Error", err, err)
	}
	return re
}

// hit is one synthetic search hit a scripted child serves.
type hit struct {
	key   string
	score float64
}

// scripted is a loopback RS whose search serves hits in pages of the
// requested limit, with an offset cursor; it counts search calls. shape
// picks the envelope: "data" (canonical), "results" (data.results[]) or
// "datadata" (data.data[]).
type scripted struct {
	srv    *httptest.Server
	conn   string
	hits   []hit
	shape  string
	calls  atomic.Int32
	hang   bool
	status int
	// claim, when set, is the connection_id its hits name instead of conn;
	// name is their display_name. A hostile member speaks for another.
	claim, name string
	// cursor, when set, is the next_cursor it hands out instead of the
	// offset; the offset follows it after a '.'.
	cursor string
}

func newScripted(t testing.TB, conn string, hits []hit) *scripted {
	t.Helper()
	s := &scripted{conn: conn, hits: hits, shape: "data"}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *scripted) serve(w http.ResponseWriter, r *http.Request) {
	s.calls.Add(1)
	if s.hang {
		<-r.Context().Done()
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if s.status != 0 {
		w.WriteHeader(s.status)
		_, _ = w.Write([]byte(`{"error":{"code":"grant_revoked","message":"Grant has been revoked","type":"permission_error"}}`))
		return
	}
	q := r.URL.Query()
	limit, _ := strconv.Atoi(q.Get("limit"))
	cur := q.Get("cursor")
	if i := strings.LastIndexByte(cur, '.'); i >= 0 {
		cur = cur[i+1:]
	}
	off, _ := strconv.Atoi(cur)
	end := min(off+limit, len(s.hits))
	var data []map[string]any
	conn := s.conn
	if s.claim != "" {
		conn = s.claim
	}
	for _, h := range s.hits[off:end] {
		d := map[string]any{"object": "search_result", "stream": "notes", "record_key": h.key,
			"connection_id": conn, "connector_id": "notes",
			"record_url": "/v1/streams/notes/records/" + h.key,
			"score":      map[string]any{"kind": "bm25", "order": "lower_is_better", "value": h.score}}
		if s.name != "" {
			d["display_name"] = s.name
		}
		data = append(data, d)
	}
	if data == nil {
		data = []map[string]any{}
	}
	env := map[string]any{"object": "list", "has_more": end < len(s.hits)}
	if end < len(s.hits) {
		env["next_cursor"] = strconv.Itoa(end)
		if s.cursor != "" {
			env["next_cursor"] = s.cursor + "." + strconv.Itoa(end)
		}
	}
	switch s.shape {
	case "results":
		env["data"] = map[string]any{"results": data}
	case "datadata":
		env["data"] = map[string]any{"data": data}
	default:
		env["data"] = data
	}
	_ = json.NewEncoder(w).Encode(env)
}

func (s *scripted) member(t testing.TB, grant string) fanout.Member {
	return fanout.Member{GrantID: grant, ConnectionIDs: []string{s.conn}, ConnectorKey: "notes",
		DisplayName: "Notes " + grant, RS: rsClient(t, s.srv.URL, "tok-"+grant)}
}

func hits(prefix string, n int, score float64) []hit {
	out := make([]hit, n)
	for i := range out {
		out[i] = hit{key: prefix + strconv.Itoa(i), score: score + float64(i)*0.01}
	}
	return out
}

func keys(doc gjson.Result) []string {
	var out []string
	doc.Get("data").ForEach(func(_, h gjson.Result) bool {
		out = append(out, h.Get("connection_id").Str+"/"+h.Get("record_key").Str)
		return true
	})
	return out
}
