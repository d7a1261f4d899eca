package pdpptest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// changesPage is one page of a changes_since session.
type changesPage struct {
	ids        []string
	tombstones []string
	next       string // next_cursor
	since      string // next_changes_since
	more       bool
}

func readChanges(t *testing.T, srv *Server, token, target string) changesPage {
	t.Helper()
	a := get(t, srv, token, target)
	wantOK(t, a)
	p := changesPage{next: a.j("next_cursor").String(), since: a.j("next_changes_since").String(), more: a.j("has_more").Bool()}
	for _, r := range a.j("data").Array() {
		if r.Get("deleted").Bool() {
			if r.Get("data").Exists() || r.Get("deleted_at").String() == "" {
				t.Errorf("tombstone shape: %s", r)
			}
			p.tombstones = append(p.tombstones, r.Get("id").String())
			continue
		}
		p.ids = append(p.ids, r.Get("id").String())
	}
	if p.since == "" {
		t.Errorf("every changes page carries next_changes_since: %s", a.body)
	}
	if p.more != (p.next != "") {
		t.Errorf("has_more %v with next_cursor %q", p.more, p.next)
	}
	return p
}

// session reads a whole changes session, following next_cursor alone.
func session(t *testing.T, srv *Server, token, base, since string, between func()) (ids, tombstones []string, nextSince string) {
	t.Helper()
	p := readChanges(t, srv, token, base+"&changes_since="+url.QueryEscape(since))
	ids, tombstones = p.ids, p.tombstones
	for first := true; p.more; first = false {
		if first && between != nil {
			between()
		}
		p = readChanges(t, srv, token, base+"&cursor="+url.QueryEscape(p.next))
		ids = append(ids, p.ids...)
		tombstones = append(tombstones, p.tombstones...)
	}
	return ids, tombstones, p.since
}

func message(id, at, subject, snippet string) dataset.Record {
	return dataset.Record{Key: id, EmittedAt: at, Data: json.RawMessage(fmt.Sprintf(
		`{"id":%q,"thread_id":"t_%s","subject":%q,"received_at":%q,"snippet":%q}`, id, id, subject, at, snippet))}
}

func TestChangesSession(t *testing.T) {
	srv := New(t, Options{Dataset: gmailWith(t, map[string]string{"narrow": narrowGrant})})
	client := srv.Token(TokenClient)
	base := "/v1/streams/messages/records?" + personal + "&limit=3&fields=id,subject"

	// Bootstrap, with a write landing after page 1: the horizon is frozen.
	ids, tombs, since := session(t, srv, client, base, "beginning", func() {
		srv.Upsert("cin_gmail_personal", "messages", message("p_msg_009", "2026-02-20T09:00:00.000Z", "New", "fresh"))
	})
	want := []string{"p_msg_001", "p_msg_002", "p_msg_003", "p_msg_004", "p_msg_005", "p_msg_006", "p_msg_007", "p_msg_008"}
	if !slices.Equal(ids, want) || len(tombs) != 0 {
		t.Fatalf("bootstrap = %v tombstones %v, want %v", ids, tombs, want)
	}

	// The next session sees the late write, an update and a deletion of a
	// record the client saw; a record created and deleted in between never
	// appears.
	srv.Upsert("cin_gmail_personal", "messages", message("p_msg_003", "2026-01-17T11:14:00.000Z", "Receipt (corrected)", "x"))
	srv.Delete("cin_gmail_personal", "messages", "p_msg_004")
	srv.Upsert("cin_gmail_personal", "messages", message("p_msg_tmp", "2026-02-21T09:00:00.000Z", "Draft", "x"))
	srv.Delete("cin_gmail_personal", "messages", "p_msg_tmp")
	ids, tombs, since2 := session(t, srv, client, base, since, nil)
	if !slices.Equal(ids, []string{"p_msg_009", "p_msg_003"}) || !slices.Equal(tombs, []string{"p_msg_004"}) {
		t.Errorf("second session = %v tombstones %v", ids, tombs)
	}

	// Nothing changed since: an empty terminal page that still carries the token.
	p := readChanges(t, srv, client, base+"&changes_since="+url.QueryEscape(since2))
	if len(p.ids)+len(p.tombstones) != 0 || p.more || p.since != since2 {
		t.Errorf("idle session = %+v", p)
	}
}

func TestChangesHiddenFieldsNeverSurface(t *testing.T) {
	srv := New(t, Options{Dataset: gmailWith(t, map[string]string{"narrow": narrowGrant})})
	narrow := srv.IssueClientToken("narrow")
	base := "/v1/streams/messages/records?limit=50"
	_, _, since := session(t, srv, narrow, base, "beginning", nil)

	// snippet is outside the narrow grant; subject is inside it.
	orig := srv.Dataset().Connectors[0].Records["cin_gmail_personal"]["messages"][1]
	if orig.Key != "p_msg_002" {
		t.Fatalf("fixture order changed: %s", orig.Key)
	}
	hidden := withField(t, orig, "snippet", `"a secret change"`)
	srv.Upsert("cin_gmail_personal", "messages", hidden)
	ids, _, since := session(t, srv, narrow, base, since, nil)
	if len(ids) != 0 {
		t.Errorf("a change to a withheld field surfaced: %v", ids)
	}
	// The full client (which sees snippet) gets it...
	if ids, _, _ := session(t, srv, srv.Token(TokenClient), "/v1/streams/messages/records?"+personal+"&fields=id,snippet", "beginning", nil); !slices.Contains(ids, "p_msg_002") {
		t.Errorf("full client misses p_msg_002: %v", ids)
	}
	// ...and so does the narrow one once a granted field changes.
	srv.Upsert("cin_gmail_personal", "messages", withField(t, hidden, "subject", `"Your Lisbon flight itinerary (updated)"`))
	if ids, _, _ := session(t, srv, narrow, base, since, nil); !slices.Equal(ids, []string{"p_msg_002"}) {
		t.Errorf("a change to a granted field = %v", ids)
	}

	// A record moving out of the time window is a tombstone for this client.
	moved := srv.Dataset().Connectors[0].Records["cin_gmail_personal"]["messages"][4]
	srv.Upsert("cin_gmail_personal", "messages", withField(t, moved, "received_at", `"2026-03-01T00:00:00.000Z"`))
	ids, tombs, _ := session(t, srv, narrow, base, since, nil)
	if !slices.Contains(tombs, "p_msg_005") || slices.Contains(ids, "p_msg_005") {
		t.Errorf("record leaving the grant window: ids %v tombstones %v", ids, tombs)
	}
}

func TestChangesCursorExpired(t *testing.T) {
	srv := New(t, Options{ChangeRetention: 3})
	client := srv.Token(TokenClient)
	base := "/v1/streams/messages/records?" + personal + "&limit=2&fields=id"

	// beginning always works, even when early history is compacted away.
	ids, _, since := session(t, srv, client, base, "beginning", nil)
	if len(ids) != 8 {
		t.Fatalf("bootstrap over compacted history = %v", ids)
	}
	srv.Upsert("cin_gmail_personal", "messages", message("p_msg_010", "2026-02-20T09:00:00.000Z", "a", "a"))
	if ids, _, _ := session(t, srv, client, base, since, nil); !slices.Equal(ids, []string{"p_msg_010"}) {
		t.Errorf("within retention = %v", ids)
	}
	for i := 0; i < 4; i++ {
		srv.Upsert("cin_gmail_personal", "messages", message(fmt.Sprintf("p_msg_1%02d", i), "2026-02-21T09:00:00.000Z", "b", "b"))
	}
	a := get(t, srv, client, base+"&changes_since="+url.QueryEscape(since))
	wantError(t, a, 410, "cursor_expired", "")

	// A page cursor of a session whose horizon has been compacted away is
	// expired too.
	p := readChanges(t, srv, client, base+"&changes_since=beginning")
	for i := 0; i < 5; i++ {
		srv.Upsert("cin_gmail_personal", "messages", message(fmt.Sprintf("p_msg_2%02d", i), "2026-02-22T09:00:00.000Z", "c", "c"))
	}
	wantError(t, get(t, srv, client, base+"&cursor="+url.QueryEscape(p.next)), 410, "cursor_expired", "")
}

func TestChangesTokenSpaces(t *testing.T) {
	srv := New(t, Options{})
	client := srv.Token(TokenClient)
	base := "/v1/streams/messages/records?" + personal + "&limit=2"
	page := get(t, srv, client, base).j("next_cursor").String()
	// A records page cursor is not a changes_since token.
	wantError(t, get(t, srv, client, base+"&changes_since="+url.QueryEscape(page)), 400, "invalid_cursor", "changes_since")
	// A changes token is not a page cursor.
	tok := readChanges(t, srv, client, base+"&changes_since=beginning").since
	wantError(t, get(t, srv, client, base+"&cursor="+url.QueryEscape(tok)), 400, "invalid_cursor", "")
}

// withField returns r with one top-level field replaced (authored order kept).
func withField(t *testing.T, r dataset.Record, field, rawValue string) dataset.Record {
	t.Helper()
	o, err := decodeObject(r.Data)
	if err != nil {
		t.Fatal(err)
	}
	o.set(field, json.RawMessage(rawValue))
	b, err := marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	r.Data = b
	return r
}
