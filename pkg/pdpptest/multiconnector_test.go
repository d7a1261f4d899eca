package pdpptest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// notesManifest declares a stream with a compound primary key and no cursor
// field, for a second connector next to gmail.
const notesManifest = `{
 "connector_id": "https://registry.pdpp.dev/connectors/notes", "connector_key": "notes", "display_name": "Notes",
 "streams": [{
  "name": "note_revisions", "semantics": "append_only", "primary_key": ["note_id", "revised_on"],
  "consent_time_field": "revised_on", "selection": {"fields": true, "resources": true},
  "schema": {"type": "object", "required": ["note_id", "revised_on"], "properties": {
   "note_id": {"type": "string"},
   "revised_on": {"type": "string", "format": "date"},
   "title": {"type": "string", "x_pdpp_type": "text", "x_pdpp_role": "primary-title"},
   "words": {"type": "integer"}}},
  "query": {"search": {"lexical_fields": ["title"]}, "range_filters": {"words": ["gte", "lt"]},
   "aggregations": {"count": true, "sum": ["words"], "count_distinct": ["note_id"]}}
 }]
}`

// spanGrant spans both connectors, interleaving their streams.
const spanGrant = `{
 "version": "0.1.0", "grant_id": "grt_span", "client": {"client_id": "span_app"},
 "source": {"kind": "connector", "id": "https://registry.pdpp.dev/connectors/gmail"},
 "streams": [
  {"name": "messages", "instance_ids": ["cin_gmail_work"]},
  {"name": "note_revisions", "instance_ids": ["cin_notes_main"], "fields": ["note_id", "revised_on", "title"]},
  {"name": "threads", "instance_ids": ["cin_gmail_work"]}
 ]
}`

func twoConnectors(t *testing.T) *dataset.Dataset {
	t.Helper()
	ds := gmailWith(t, map[string]string{"span": spanGrant})
	notes := &dataset.Connector{
		Key: "notes", SourceID: "https://registry.pdpp.dev/connectors/notes", DisplayName: "Notes",
		Manifest:    json.RawMessage(notesManifest),
		Connections: []dataset.Connection{{ID: "cin_notes_main", DisplayName: "My notes"}},
		Records:     map[string]map[string][]dataset.Record{"cin_notes_main": {}},
	}
	for i, rev := range []struct{ note, day, title string }{
		{"n1", "2026-03-01", "Groceries"}, {"n2", "2026-03-01", "Trip ideas"}, {"n1", "2026-03-02", "Groceries (more)"},
		{"n2", "2026-03-05", "Trip ideas: Porto"}, {"n3", "2026-03-02", "Books to read"},
	} {
		key, _ := json.Marshal([]string{rev.note, rev.day})
		notes.Records["cin_notes_main"]["note_revisions"] = append(notes.Records["cin_notes_main"]["note_revisions"], dataset.Record{
			Key: string(key), EmittedAt: rev.day + "T08:00:00.000Z",
			Data: json.RawMessage(fmt.Sprintf(`{"note_id":%q,"revised_on":%q,"title":%q,"words":%d}`, rev.note, rev.day, rev.title, 10*(i+1))),
		})
	}
	ds.Connectors = append(ds.Connectors, notes)
	return ds
}

func TestMultiConnectorGrant(t *testing.T) {
	srv := New(t, Options{Dataset: twoConnectors(t)})
	span := srv.IssueClientToken("span")

	a := get(t, srv, span, "/v1/schema?view=compact")
	wantOK(t, a)
	if a.j("connector_count").Int() != 2 || a.j("connectors.#.connector_key").Raw != `["gmail","notes"]` {
		t.Fatalf("one connector item per connector: %s", a.j("connectors.#.connector_key").Raw)
	}
	if a.j("connectors.0.streams.#.name").Raw != `["messages","threads"]` || a.j("connectors.1.source.id").String() != "https://registry.pdpp.dev/connectors/notes" {
		t.Errorf("grouping: %s / %s", a.j("connectors.0.streams.#.name").Raw, a.j("connectors.1.source"))
	}
	notes := a.j("connectors.1.streams.0")
	if notes.Get("primary_key").Raw != `["note_id","revised_on"]` || notes.Get("cursor_field").Exists() {
		t.Errorf("compound key, no cursor field: %s", notes)
	}
	if notes.Get("field_capabilities.words").String() != "t=integer,g=false" || notes.Get("field_capabilities.title").String() != "t=text,role=primary-title,lex" {
		t.Errorf("flags: %s", notes.Get("field_capabilities"))
	}
	if a.j("connectors.1.granted_connections.0.display_name").String() != "My notes" {
		t.Errorf("notes connections: %s", a.j("connectors.1.granted_connections"))
	}

	a = get(t, srv, span, "/v1/streams")
	wantOK(t, a)
	if a.j("data.#.name").Raw != `["messages","note_revisions","threads"]` {
		t.Errorf("streams rows: %s", a.j("data.#.name").Raw)
	}

	// Compound keys order the stream by primary key only and page stably.
	var got []string
	next := "/v1/streams/note_revisions/records?limit=2&order=asc"
	for next != "" {
		a = get(t, srv, span, next)
		wantOK(t, a)
		got = append(got, ids(a)...)
		next = a.j("links.next").String()
	}
	want := []string{`["n1","2026-03-01"]`, `["n1","2026-03-02"]`, `["n2","2026-03-01"]`, `["n2","2026-03-05"]`, `["n3","2026-03-02"]`}
	if !slices.Equal(got, want) {
		t.Errorf("pages = %v, want %v", got, want)
	}
	wantError(t, get(t, srv, span, "/v1/streams/note_revisions/records?sort=revised_on"), 400, "invalid_sort", "sort")

	a = get(t, srv, span, "/v1/streams/note_revisions/records/"+url.PathEscape(`["n2","2026-03-05"]`))
	wantOK(t, a)
	if a.j("id").String() != `["n2","2026-03-05"]` || a.j("connector_key").String() != "https://registry.pdpp.dev/connectors/notes" ||
		a.j("data.words").Exists() {
		t.Errorf("compound-key detail: %s", a.body)
	}
	a = get(t, srv, span, "/v1/streams/note_revisions/aggregate?metric=count_distinct&field=note_id")
	wantOK(t, a)
	if a.j("value").Int() != 3 {
		t.Errorf("distinct notes = %s", a.j("value"))
	}
	// The grant withholds words: aggregating it is refused.
	wantError(t, get(t, srv, span, "/v1/streams/note_revisions/aggregate?metric=sum&field=words"), 403, "field_not_granted", "field")
	wantError(t, get(t, srv, span, "/v1/streams/messages/records?connection_id=cin_notes_main"), 401, "context.instance_mismatch", "")

	// The owner names the source; a connector that lacks the stream is 404.
	owner := srv.Token(TokenOwner)
	wantOK(t, get(t, srv, owner, "/v1/streams/note_revisions/records?connector_id=notes"))
	wantOK(t, get(t, srv, owner, "/v1/streams/note_revisions/records?connection_id=cin_notes_main"))
	wantError(t, get(t, srv, owner, "/v1/streams/note_revisions/records?connector_id=gmail"), 404, "not_found", "")
	a = get(t, srv, owner, "/v1/schema?view=compact")
	if a.j("connectors.#.source.id").Raw != `["gmail","notes"]` {
		t.Errorf("owner connectors: %s", a.j("connectors.#.source.id").Raw)
	}
}
