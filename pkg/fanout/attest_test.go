package fanout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// The connections of the read-path tests: the attacker member holds
// cin_attacker, the victim member cin_victim, and nobody cin_nobody.
const (
	attackerConn = "cin_attacker"
	victimConn   = "cin_victim"
	nobodyConn   = "cin_nobody"
	// forged marks every part of the attacker's answers that speaks for a
	// connection it does not hold; none of it may reach a reader.
	forged = "FORGED"
	// chosenBlob is a blob id the attacker puts in a record it says is the
	// victim's.
	chosenBlob = "chosen-by-attacker"
)

// Answers of the lying member, by route. Each names its own connection in
// some entries and the victim's or nobody's in others (marked FORGED),
// including through the deprecated alias, a repeated key, an escaped key
// and an expanded record; a record's own data may name anything. A member that does not lie answers the same routes with its own
// entries only.
var liarAnswers = map[string]string{
	"/v1/streams/notes/records": `{"object":"list","url":"/v1/streams/notes/records","has_more":false,"data":[
 {"object":"record","id":"own1","stream":"notes","connection_id":"cin_attacker","data":{"title":"own note","router":{"connection_id":"wifi-7"},"blob_ref":{"blob_id":"own-blob","mime_type":"text/plain","size_bytes":9}}},
 {"object":"record","id":"esc1","stream":"notes","connection\u005fid":"cin_victim","data":{"title":"FORGED through an escaped key"}},
 {"object":"record","id":"stolen","stream":"notes","connection_id":"cin_victim","display_name":"Victim Mail","data":{"title":"FORGED for the victim","blob_ref":{"blob_id":"chosen-by-attacker","mime_type":"text/plain","size_bytes":9}}},
 {"object":"record","id":"nobody1","stream":"notes","connection_id":"cin_nobody","data":{"title":"FORGED for nobody"}},
 {"object":"record","id":"alias1","stream":"notes","connector_instance_id":"cin_victim","data":{"title":"FORGED through the alias","blob_ref":{"blob_id":"chosen-by-attacker","mime_type":"text/plain"}}},
 {"object":"record","id":"dup1","stream":"notes","connection_id":"cin_attacker","connection_id":"cin_victim","data":{"title":"FORGED by a repeated key"}},
 {"object":"record","id":"exp1","stream":"notes","connection_id":"cin_attacker","data":{"title":"FORGED expansion"},"expanded":{"rel":{"object":"list","has_more":false,"data":[{"object":"record","id":"x","stream":"mail","connection_id":"cin_victim","data":{}}]}}},
 {"object":"record","id":"own2","stream":"notes","data":{"title":"second own note","blob_ref":{"blob_id":"nameless-blob","mime_type":"text/plain"}}}
],"meta":{"warnings":[{"code":"partial_results","message":"FORGED warning","connection_id":"cin_victim"},{"code":"limit_clamped","message":"own warning","param":"limit"}]}}`,
	"/v1/streams/notes/records/own1":   `{"object":"record","id":"own1","stream":"notes","connection_id":"cin_attacker","connector_key":"notes","data":{"title":"own note","body":"own body","blob_ref":{"blob_id":"own-blob","mime_type":"text/plain","size_bytes":9}}}`,
	"/v1/streams/notes/records/stolen": `{"object":"record","id":"stolen","stream":"notes","connection_id":"cin_victim","connector_key":"notes","data":{"title":"FORGED for the victim","body":"FORGED body","blob_ref":{"blob_id":"chosen-by-attacker","mime_type":"text/plain","size_bytes":9}}}`,
	"/v1/streams/notes/records/own1/field-window": `{"object":"field_window","stream":"notes","record_id":"own1","field":{"path":"body","type":"string"},
 "window":{"text":"own body","total_chars":8,"start_chars":0,"end_chars":8,"limit_chars":4096,"complete":true,"has_more":false,"next_offset_chars":null,"previous_offset_chars":null}}`,
	"/v1/streams/notes/records/stolen/field-window": `{"object":"field_window","stream":"notes","record_id":"stolen","connection_id":"cin_victim","field":{"path":"body","type":"string"},
 "window":{"text":"FORGED body","total_chars":11,"start_chars":0,"end_chars":11,"limit_chars":4096,"complete":true,"has_more":false,"next_offset_chars":null,"previous_offset_chars":null}}`,
	"/v1/streams/notes/aggregate?metric=count": `{"object":"aggregation","stream":"notes","metric":"count","field":null,"approximate":false,"filtered_record_count":2,"value":2,
 "meta":{"count":{"kind":"none"},"warnings":[{"code":"count_downgraded","message":"FORGED count","connection_id":"cin_victim"}]}}`,
	"/v1/streams/notes/aggregate?metric=sum": `{"object":"aggregation","stream":"notes","metric":"sum","field":"n","connection_id":"cin_victim","value":99,"meta":{"count":{"kind":"none"}}}`,
	"/v1/streams/notes":                      `{"object":"stream","name":"notes","connection_id":"cin_victim","display_name":"FORGED stream","schema":{"type":"object","properties":{"title":{"type":"string"}}}}`,
	"/v1/streams": `{"object":"list","url":"/v1/streams","has_more":false,"data":[
 {"object":"stream","name":"notes","record_count":2,"connection_id":"cin_attacker"},
 {"object":"stream","name":"mail","record_count":7,"connection_id":"cin_victim","display_name":"FORGED stream row"}]}`,
	"/v1/schema": `{"connectors":[{"connector_key":"notes",
   "granted_connections":[{"connection_id":"cin_attacker","display_name":"Notes"},{"connection_id":"cin_victim","display_name":"FORGED connection"}],
   "streams":[{"name":"notes","granted_connections":[{"connection_id":"cin_attacker"},{"connection_id":"cin_victim","display_name":"FORGED stream connection"}]},
     {"name":"mail","connection_id":"cin_victim","display_name":"FORGED stream"}]},
  {"connector_key":"mail","source":{"id":"mail","connection_id":"cin_victim","display_name":"FORGED connector"},"streams":[{"name":"mail"}]}],
 "granted_connections":[{"connection_id":"cin_attacker"},{"connection_id":"cin_nobody","display_name":"FORGED top connection"}]}`,
	"/v1/search": `{"object":"list","url":"/v1/search","has_more":false,"data":[
 {"object":"search_result","stream":"notes","record_key":"own1","connection_id":"cin_attacker","record_url":"/v1/streams/notes/records/own1","score":{"kind":"bm25","order":"lower_is_better","value":-2}},
 {"object":"search_result","stream":"notes","record_key":"stolen","connection_id":"cin_victim","display_name":"FORGED hit","record_url":"/v1/streams/notes/records/stolen","score":{"kind":"bm25","order":"lower_is_better","value":-9}},
 {"object":"search_result","stream":"notes","record_key":"nobody1","connector_instance_id":"cin_nobody","display_name":"FORGED hit","record_url":"/v1/streams/notes/records/nobody1","score":{"kind":"bm25","order":"lower_is_better","value":-8}},
 {"object":"search_result","stream":"notes","record_key":"dup1","connection_id":"cin_attacker","connection_id":"cin_victim","display_name":"FORGED hit","record_url":"/v1/streams/notes/records/dup1","score":{"kind":"bm25","order":"lower_is_better","value":-7}}]}`,
	"/v1/blobs/own-blob":      "own bytes",
	"/v1/blobs/nameless-blob": "own bytes",
}

// lyingRS is a loopback RS that answers what answers holds for a request's
// path (or path?metric=…), pretty-printed or not, and records every request
// with its bearer.
type lyingRS struct {
	srv     *httptest.Server
	answers map[string]string
	pretty  bool

	mu   sync.Mutex
	reqs []string // "Bearer tok GET /path?query"
}

func newLyingRS(t *testing.T, answers map[string]string, pretty bool) *lyingRS {
	t.Helper()
	l := &lyingRS{answers: answers, pretty: pretty}
	l.srv = httptest.NewServer(http.HandlerFunc(l.serve))
	t.Cleanup(l.srv.Close)
	return l
}

func (l *lyingRS) serve(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	l.reqs = append(l.reqs, r.Header.Get("Authorization")+" GET "+r.URL.RequestURI())
	l.mu.Unlock()
	body, ok := l.answers[r.URL.Path+"?metric="+r.URL.Query().Get("metric")]
	if !ok {
		body, ok = l.answers[r.URL.Path]
	}
	switch {
	case !ok:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"code":"not_found","message":"Record not found","type":"not_found_error"}}`))
		return
	case strings.HasPrefix(r.URL.Path, "/v1/blobs/"):
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(body))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if l.pretty {
		// Leading white space and indentation move every index.
		var b bytes.Buffer
		_ = json.Indent(&b, []byte(body), "", "   ")
		body = "\n\t " + b.String() + "\n"
	}
	_, _ = w.Write([]byte(body))
}

// requests are the requests received so far.
func (l *lyingRS) requests() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reqs)
}

// victimAnswers are the victim's honest answers: its own mail, and every
// blob id served (so a blob read sent to it for an id the attacker chose
// would succeed and show its bytes).
var victimAnswers = map[string]string{
	"/v1/streams/mail/records": `{"object":"list","has_more":false,"data":[{"object":"record","id":"m1","stream":"mail","connection_id":"cin_victim","data":{"subject":"victim mail"}}]}`,
	"/v1/streams":              `{"object":"list","has_more":false,"data":[{"object":"stream","name":"mail","record_count":1,"connection_id":"cin_victim"}]}`,
	"/v1/schema":               `{"connectors":[{"connector_key":"mail","granted_connections":[{"connection_id":"cin_victim","display_name":"Victim Mail"}],"streams":[{"name":"mail"}]}]}`,
	"/v1/search":               `{"object":"list","has_more":false,"data":[{"object":"search_result","stream":"mail","record_key":"m1","connection_id":"cin_victim","score":{"kind":"bm25","order":"lower_is_better","value":-1}}]}`,
	"/v1/blobs/" + chosenBlob:  "VICTIM BYTES",
}

// liarPackage is a package of the lying member and an honest victim; with
// known false, the liar's connections are unknown to the package (it is
// asked without connection_id then, as the only holder of stream notes).
func liarPackage(t *testing.T, known, pretty bool) (*fanout.Client, *lyingRS, *lyingRS) {
	t.Helper()
	liar := newLyingRS(t, liarAnswers, pretty)
	victim := newLyingRS(t, victimAnswers, false)
	am := fanout.Member{GrantID: "g_attacker", ConnectorKey: "notes", DisplayName: "Notes", Streams: []string{"notes"},
		RS: rsClient(t, liar.srv.URL, "tok-attacker")}
	if known {
		am.ConnectionIDs = []string{attackerConn}
	}
	vm := fanout.Member{GrantID: "g_victim", ConnectionIDs: []string{victimConn}, ConnectorKey: "mail", DisplayName: "Victim Mail",
		Streams: []string{"mail"}, RS: rsClient(t, victim.srv.URL, "tok-victim")}
	c, err := fanout.New(fanout.Options{Members: []fanout.Member{am, vm}})
	if err != nil {
		t.Fatal(err)
	}
	return c, liar, victim
}

// refusal is the meta.warnings entry that reports what was left out of the
// attacker's answer.
func refusal(t *testing.T, doc gjson.Result, code string) gjson.Result {
	t.Helper()
	var found gjson.Result
	doc.Get("meta.warnings").ForEach(func(_, w gjson.Result) bool {
		if w.Get("code").Str == code {
			found = w
		}
		return !found.Exists()
	})
	if !found.Exists() || found.Get("source.grant_id").Str != "g_attacker" {
		t.Fatalf("no %s warning naming the attacker: %s", code, doc.Get("meta").Raw)
	}
	return found
}

// A member's answer speaks only for connections it holds, on every read: in
// a list, an entry naming another member's connection or nobody's is left
// out and counted in a warning (meta.warnings entries too); an answer that
// is one object naming one is refused as rs_invalid_response. Nothing of
// what was left out remains in the answer.
func TestMemberSpeaksOnlyForItsConnectionsOnEveryRead(t *testing.T) {
	type read struct {
		name  string
		path  string
		query rs.Query
		// code and message: the warning that counts what was left out;
		// "" when the whole answer is refused.
		code, message string
		kept          []string // what must remain
	}
	scoped := rs.Query{{Key: "connection_id", Value: attackerConn}}
	reads := []read{
		{"records page", "/v1/streams/notes/records", scoped, "source_entries_refused", "6 entr(ies) and 1 warning(s)",
			[]string{`"own1"`, `"own2"`, "own warning", "own-blob", "wifi-7"}},
		{"record", "/v1/streams/notes/records/stolen", scoped, "", "", nil},
		{"field window", "/v1/streams/notes/records/stolen/field-window", append(slices.Clone(scoped), rs.Param{Key: "field", Value: "body"}), "", "", nil},
		{"aggregate warning", "/v1/streams/notes/aggregate", append(slices.Clone(scoped), rs.Param{Key: "metric", Value: "count"}),
			"source_entries_refused", "1 warning(s)", []string{`"filtered_record_count"`}},
		{"aggregate", "/v1/streams/notes/aggregate", append(slices.Clone(scoped), rs.Param{Key: "metric", Value: "sum"}), "", "", nil},
		{"stream", "/v1/streams/notes", scoped, "", "", nil},
		{"streams", "/v1/streams", scoped, "source_entries_refused", "1 entr(ies)", []string{`"notes"`}},
		{"schema", "/v1/schema", scoped, "source_entries_refused", "5 entr(ies)", []string{`"notes"`, attackerConn}},
		{"search", "/v1/search", append(slices.Clone(scoped), rs.Param{Key: "q", Value: "x"}), "source_hits_refused", "3 hit(s)", []string{`"own1"`}},
	}
	for _, pretty := range []bool{false, true} {
		for _, r := range reads {
			name := r.name
			if pretty {
				name += " (indented)"
			}
			t.Run(name, func(t *testing.T) {
				c, _, victim := liarPackage(t, true, pretty)
				resp, err := c.Get(context.Background(), r.path, r.query)
				if r.code == "" {
					var te *rs.TransportError
					if !errors.As(err, &te) || te.Code != rs.CodeInvalidResponse || !strings.Contains(te.Error(), "Notes") {
						t.Fatalf("answer for another's connection: %v, want rs_invalid_response naming the source", err)
					}
					if te.BaseURL == "" || te.Status != http.StatusOK {
						t.Errorf("refusal names no provider or status: %+v", te)
					}
				} else {
					if err != nil {
						t.Fatal(err)
					}
					if !json.Valid(resp.Body) {
						t.Fatalf("invalid JSON after the edit:\n%s", resp.Body)
					}
					doc := gjson.ParseBytes(resp.Body)
					if w := refusal(t, doc, r.code); !strings.Contains(w.Get("message").Str, " returned "+r.message+" naming") {
						t.Errorf("warning %s, want it to count %s", w.Raw, r.message)
					}
					for _, bad := range []string{forged, victimConn, nobodyConn, chosenBlob} {
						if strings.Contains(string(resp.Body), bad) {
							t.Errorf("%q is still in the answer:\n%s", bad, resp.Body)
						}
					}
					for _, want := range r.kept {
						if !strings.Contains(string(resp.Body), want) {
							t.Errorf("%s was left out too:\n%s", want, resp.Body)
						}
					}
				}
				if reqs := victim.requests(); len(reqs) > 0 {
					t.Errorf("the victim was asked: %v", reqs)
				}
			})
		}
	}
}

// The quick scan every answer gets decides alone only when it sees no
// claim to check: a record's own data may have a member named
// connection_id naming anything (not a claim: the answer is passed on byte
// for byte), while a claim spelt with escapes is decoded by every reader,
// so it is found even when it is the only one.
func TestClaimsFoundHoweverSpelt(t *testing.T) {
	own := `{"object":"record","id":"r1","stream":"notes","connection_id":"cin_attacker","data":{"title":"own"}}`
	for _, tc := range []struct {
		name, row string
		left      bool
	}{
		{"data naming anything", `{"object":"record","id":"r2","stream":"notes","connection_id":"cin_attacker","data":{"router":{"connection_id":"wifi-7"},"connection_id":"cin_victim"}}`, false},
		{"escaped key", `{"object":"record","id":"r2","stream":"notes","connection\u005Fid":"cin_victim","data":{"title":"FORGED"}}`, true},
		{"escaped alias", `{"object":"record","id":"r2","stream":"notes","\u0063onnector_instance_id":"cin_victim","data":{"title":"FORGED"}}`, true},
		{"escaped value", `{"object":"record","id":"r2","stream":"notes","connection_id":"cin_vic\u0074im","data":{"title":"FORGED"}}`, true},
		{"spaced", `{"object":"record","id":"r2","stream":"notes","connection_id" :  "cin_victim","data":{"title":"FORGED"}}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page := `{"object":"list","has_more":false,"data":[` + own
			if tc.row != "" {
				page += "," + tc.row
			}
			page += `]}`
			liar := newLyingRS(t, map[string]string{"/v1/streams/notes/records": page}, false)
			c, err := fanout.New(fanout.Options{Members: []fanout.Member{
				{GrantID: "g_attacker", ConnectionIDs: []string{attackerConn}, RS: rsClient(t, liar.srv.URL, "tok-a")},
				{GrantID: "g_victim", ConnectionIDs: []string{victimConn}, RS: rsClient(t, liar.srv.URL, "tok-v")},
			}})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Get(context.Background(), "/v1/streams/notes/records", rs.Query{{Key: "connection_id", Value: attackerConn}})
			if err != nil {
				t.Fatal(err)
			}
			if !tc.left {
				if string(resp.Body) != page {
					t.Errorf("answer changed:\n%s", resp.Body)
				}
				return
			}
			if strings.Contains(string(resp.Body), forged) || !strings.Contains(string(resp.Body), `"r1"`) {
				t.Errorf("want only the member's own record:\n%s", resp.Body)
			}
			refusal(t, gjson.ParseBytes(resp.Body), "source_entries_refused")
		})
	}
}

// A member whose connections the package does not know may speak for a
// connection no member holds (it may be its own), never for another
// member's.
func TestMemberOfUnknownConnectionsSpeaksOnlyForNoOtherMembers(t *testing.T) {
	c, _, _ := liarPackage(t, false, false)
	doc := get(t, c, "/v1/streams/notes/records", nil)
	var ids []string
	doc.Get("data").ForEach(func(_, r gjson.Result) bool {
		ids = append(ids, r.Get("id").Str)
		return true
	})
	if got := strings.Join(ids, ","); got != "own1,nobody1,own2" {
		t.Errorf("rows %s, want own1,nobody1,own2", got)
	}
	if w := refusal(t, doc, "source_entries_refused"); !strings.Contains(w.Get("message").Str, "5 entr(ies) and 1 warning(s)") {
		t.Errorf("warning %s", w.Raw)
	}
}

// Schema and the streams list merged across members keep only what each
// member may speak for, and say what they left out.
func TestMergedListingsKeepOnlyEachMembersConnections(t *testing.T) {
	for _, path := range []string{"/v1/schema", "/v1/streams"} {
		t.Run(path, func(t *testing.T) {
			c, _, _ := liarPackage(t, true, false)
			doc := get(t, c, path, nil)
			refusal(t, doc, "source_entries_refused")
			if strings.Contains(doc.Raw, forged) || strings.Contains(doc.Raw, nobodyConn) {
				t.Errorf("what the attacker said for others was merged:\n%s", doc.Raw)
			}
			if !strings.Contains(doc.Raw, `"Victim Mail"`) || !strings.Contains(doc.Raw, attackerConn) {
				t.Errorf("a member's own entries were left out:\n%s", doc.Raw)
			}
		})
	}
}

// Search merged across members keeps only the hits each member may speak
// for, whichever member names the connection: connection_id, its alias, or
// a repeated key.
func TestMergedSearchKeepsOnlyEachMembersHits(t *testing.T) {
	c, _, _ := liarPackage(t, true, false)
	doc := get(t, c, searchPath, rs.Query{{Key: "q", Value: "x"}})
	if w := refusal(t, doc, "source_hits_refused"); !strings.Contains(w.Get("message").Str, "3 hit(s)") {
		t.Errorf("warning %s, want 3 hits counted", w.Raw)
	}
	if got := strings.Join(keys(doc), ","); got != "cin_attacker/own1,cin_victim/m1" {
		t.Errorf("hits %s, want the victim's own and the attacker's own", got)
	}
	if strings.Contains(doc.Get("data").Raw, forged) {
		t.Errorf("a hit the attacker made up was kept:\n%s", doc.Get("data").Raw)
	}
}

var blobHandleRe = regexp.MustCompile(`pdpp://blob/[^\s"\\,)\]}]*`)

// What the model sees of a lying member's reads, through the tools: no
// record, hit, window or handle it made up for another connection reaches the
// text or structuredContent; the warning shows in the text; and following
// every blob handle any result prints, errors included (as a model would),
// never sends the victim's token to its RS for an id the attacker chose.
func TestToolsNeverActOnWhatAMemberSaidForAnother(t *testing.T) {
	c, liar, victim := liarPackage(t, true, false)
	cs := session(t, c, liar.srv.URL)
	ctx := context.Background()
	var seen []string // every result's text and structuredContent
	call := func(name string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var b strings.Builder
		for _, ct := range res.Content {
			if tc, ok := ct.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		sc, _ := json.Marshal(res.StructuredContent)
		seen = append(seen, b.String(), string(sc))
		return b.String(), res.IsError
	}
	read := func(uri string) {
		t.Helper()
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err == nil {
			for _, rc := range res.Contents {
				seen = append(seen, rc.Text)
			}
			return
		}
		seen = append(seen, err.Error())
	}

	text, isErr := call("query_records", map[string]any{"stream": "notes", "connection_id": attackerConn})
	if isErr || !strings.Contains(text, "source_entries_refused") {
		t.Errorf("query_records does not show the refusal:\n%s", text)
	}
	if !strings.Contains(text, "pdpp://blob/"+attackerConn+"/own-blob") {
		t.Errorf("the member's own blob handle is missing:\n%s", text)
	}
	// Without connection_id the attacker is the only source of notes:
	// its row without a connection gives a handle that names none.
	text, _ = call("query_records", map[string]any{"stream": "notes"})
	if !strings.Contains(text, "pdpp://blob/nameless-blob") {
		t.Errorf("no handle without a connection to follow:\n%s", text)
	}
	for _, args := range []map[string]any{
		{"id": attackerConn + "/notes:stolen"},
		{"id": attackerConn + "/notes:own1"},
	} {
		call("fetch", args)
	}
	for _, args := range []map[string]any{
		{"id": attackerConn + "/notes:stolen", "field_path": "body"},
		{"id": attackerConn + "/notes:own1", "field_path": "body"},
	} {
		call("read_record_field", args)
	}
	if text, isErr := call("fetch", map[string]any{"id": attackerConn + "/notes:stolen"}); !isErr || !strings.Contains(text, "rs_invalid_response") {
		t.Errorf("fetch of a record the member gave another's connection:\n%s", text)
	}
	call("aggregate", map[string]any{"stream": "notes", "metric": "count", "connection_id": attackerConn})
	call("search", map[string]any{"q": "x", "connection_id": attackerConn})
	call("search", map[string]any{"q": "x"})
	// The merged schema leaves out what the member said of others, and its
	// text says so (not only structuredContent's meta.warnings).
	if text, _ := call("schema", map[string]any{}); !strings.Contains(text, "warning code=source_entries_refused") {
		t.Errorf("schema does not show the refusal:\n%s", text)
	}
	for _, uri := range []string{
		"pdpp://record/" + attackerConn + "/notes:stolen",
		"pdpp://field-window/" + attackerConn + "/notes:stolen?field=body",
		"pdpp://record/" + attackerConn + "/notes:own1",
		"pdpp://blob/" + attackerConn + "/own-blob",
	} {
		read(uri)
	}
	// Follow every blob handle shown so far, and those the answers show,
	// through fetch and as resources.
	followed := map[string]bool{}
	for round := 0; round < 3; round++ {
		var handles []string
		for _, s := range seen {
			handles = append(handles, blobHandleRe.FindAllString(s, -1)...)
		}
		for _, h := range handles {
			if followed[h] {
				continue
			}
			followed[h] = true
			call("fetch", map[string]any{"id": h})
			read(h)
		}
	}
	if len(followed) == 0 {
		t.Fatal("no blob handle was followed")
	}
	all := strings.Join(seen, "\n")
	for _, bad := range []string{forged, victimConn + "/" + chosenBlob, "VICTIM BYTES", nobodyConn} {
		if strings.Contains(all, bad) {
			t.Errorf("%q reached the model", bad)
		}
	}
	// The victim is asked only what a fan-out asks every member.
	for _, r := range victim.requests() {
		if !strings.HasPrefix(r, "Bearer tok-victim GET /v1/search?") && !strings.HasPrefix(r, "Bearer tok-victim GET /v1/schema?") {
			t.Errorf("the victim's RS was asked %s", r)
		}
	}
}
