package pdpptest

import (
	"io"
	"net/http"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// answer is one response of the double, read in full.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// j reads a gjson path from the body.
func (a answer) j(path string) gjson.Result { return gjson.GetBytes(a.body, path) }

// get calls the double over loopback. headers are alternating name, value.
func get(t *testing.T, srv *Server, token, target string, headers ...string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL()+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, body}
}

// wantError asserts an error answer's status, code and (when given) param.
func wantError(t *testing.T, a answer, status int, code, param string) {
	t.Helper()
	if a.status != status || a.j("error.code").String() != code {
		t.Fatalf("got %d %s, want %d %s: %s", a.status, a.j("error.code"), status, code, a.body)
	}
	if param != "" && a.j("error.param").String() != param {
		t.Errorf("error.param = %q, want %q", a.j("error.param"), param)
	}
	if a.j("error.request_id").String() == "" || a.j("error.type").String() != errorType(status) {
		t.Errorf("envelope lacks request_id or has type %q: %s", a.j("error.type"), a.body)
	}
}

// wantOK asserts a 200.
func wantOK(t *testing.T, a answer) {
	t.Helper()
	if a.status != http.StatusOK {
		t.Fatalf("status %d: %s", a.status, a.body)
	}
}

// gmailWith returns the gmail dataset with extra grants, given as PDPP grant
// JSON by name.
func gmailWith(t *testing.T, grants map[string]string) *dataset.Dataset {
	t.Helper()
	ds, err := dataset.Gmail()
	if err != nil {
		t.Fatal(err)
	}
	for name, raw := range grants {
		g, err := dataset.ParseGrant([]byte(raw))
		if err != nil {
			t.Fatalf("grant %s: %v", name, err)
		}
		ds.Grants[name] = g
	}
	return ds
}

// ids lists the record ids of a list answer.
func ids(a answer) []string {
	var out []string
	for _, r := range a.j("data.#.id").Array() {
		out = append(out, r.String())
	}
	return out
}

// narrowGrant is a non-legacy client grant on gmail: messages on the personal
// connection without snippet and size_bytes, from 2026-01-10 (inclusive) to
// 2026-02-10 (exclusive); labels on both connections limited to two resources;
// threads on both connections. attachments and message_bodies are withheld.
const narrowGrant = `{
 "version": "0.1.0", "grant_id": "grt_narrow", "client": {"client_id": "narrow_app"},
 "source": {"kind": "connector", "id": "https://registry.pdpp.dev/connectors/gmail"},
 "source_declaration": {"version": "manifest:gmail@0.2.0"},
 "streams": [
  {"name": "messages", "instance_ids": ["cin_gmail_personal"],
   "fields": ["id", "thread_id", "subject", "from_name", "from_email", "received_at", "has_attachments", "is_seen", "labels"],
   "time_constraint": {"field": "received_at", "since": "2026-01-10T00:00:00Z", "until": "2026-02-10T00:00:00Z"}},
  {"name": "labels", "instance_ids": ["cin_gmail_personal", "cin_gmail_work"], "resources": ["INBOX", "Travel"]},
  {"name": "threads", "instance_ids": ["cin_gmail_personal", "cin_gmail_work"]}
 ]
}`
