package pdpptest

import (
	"slices"
	"testing"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

func TestCompactFlags(t *testing.T) {
	yes, no := true, false
	capOf := func(declared, granted bool) capability { return capability{declared, granted} }
	agg := func(granted bool, kinds ...string) []capability {
		var out []capability
		for _, k := range aggKinds {
			out = append(out, capOf(slices.Contains(kinds, k), granted))
		}
		return out
	}
	for _, tc := range []struct {
		name string
		fc   fieldCaps
		want string
	}{
		{"owner event time", fieldCaps{
			prop:    dataset.Property{Types: []string{"string"}, Format: "date-time", XRole: "event-time"},
			granted: yes, agg: agg(yes, "group_by_time", "max", "min"),
			exact: &capability{yes, yes}, rng: &capability{yes, yes}, ops: []string{"gte", "gt", "lte", "lt"},
		}, "t=string,role=event-time,eq,r=gte|gt|lte|lt,a=group_by_time|max|min"},
		{"owner array", fieldCaps{prop: dataset.Property{Types: []string{"array"}}, granted: yes, agg: agg(yes),
			exact: &capability{no, yes}, rng: &capability{no, yes}}, "t=array"},
		{"client text", fieldCaps{prop: dataset.Property{Types: []string{"string", "null"}, XType: "text", XRole: "primary-title"},
			granted: yes, lex: capOf(yes, yes), sem: capOf(yes, yes), agg: agg(yes)}, "t=text,role=primary-title,lex,sem"},
		{"client withheld field", fieldCaps{prop: dataset.Property{Types: []string{"string", "null"}, XType: "text", XRole: "secondary"},
			granted: no, lex: capOf(yes, no), sem: capOf(yes, no), agg: agg(no)},
			"t=text,role=secondary,g=false,lex=unusable:field_not_granted,sem=unusable:field_not_granted"},
		{"withheld aggregate field", fieldCaps{prop: dataset.Property{Types: []string{"integer", "null"}}, granted: no, agg: agg(no, "sum")},
			"t=integer|null,g=false"},
		{"owner range without operators, withheld exact", fieldCaps{prop: dataset.Property{Types: []string{"number"}}, granted: yes, agg: agg(yes),
			exact: &capability{yes, no}, rng: &capability{yes, yes}}, "t=number,eq=unusable:field_not_granted,r"},
		{"nothing known", fieldCaps{prop: dataset.Property{}, granted: yes, agg: agg(yes)}, "declared"},
		{"separators in values", fieldCaps{prop: dataset.Property{XType: "a,b=c d", XRole: "x[1]"}, granted: yes, agg: agg(yes)}, "t=a_b_c_d,role=x_1_"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := compactFlags(tc.fc); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestSchemaNarrowGrant(t *testing.T) {
	srv := New(t, Options{Dataset: gmailWith(t, map[string]string{"narrow": narrowGrant})})
	narrow := srv.IssueClientToken("narrow")

	a := get(t, srv, narrow, "/v1/schema?view=COMPACT")
	wantOK(t, a)
	if a.j("detail").String() != "compact" || a.j("connector_count").Int() != 1 || a.j("stream_count").Int() != 3 {
		t.Errorf("compact header: %s %s %s", a.j("detail"), a.j("connector_count"), a.j("stream_count"))
	}
	if b := a.j("bearer"); b.Get("grant_id").String() != "grt_narrow" || b.Get("client_id").String() != "narrow_app" || b.Get("scope").String() != "grant" {
		t.Errorf("bearer = %s", b)
	}
	conn := a.j("connectors.0")
	var names []string
	for _, s := range conn.Get("streams.#.name").Array() {
		names = append(names, s.String())
	}
	if !slices.Equal(names, []string{"messages", "labels", "threads"}) {
		t.Errorf("streams in grant order: %v", names)
	}
	msgs := conn.Get(`streams.#(name=="messages")`)
	for field, want := range map[string]string{
		"subject":     "t=text,role=primary-title,lex,sem",
		"snippet":     "t=text,role=secondary,g=false,lex=unusable:field_not_granted,sem=unusable:field_not_granted",
		"received_at": "t=string,role=event-time,a=group_by_time|max|min",
		"size_bytes":  "t=integer|null,g=false",
		"labels":      "t=array",
	} {
		if got := msgs.Get("field_capabilities." + field).String(); got != want {
			t.Errorf("%s = %q, want %q", field, got, want)
		}
	}
	if msgs.Get("cursor_field").String() != "received_at" || msgs.Get("primary_key.0").String() != "id" {
		t.Errorf("keys: %s", msgs)
	}
	if r := msgs.Get(`expand_capabilities.#(name=="attachments")`); r.Get("granted").Bool() || r.Get("reason").String() != "related_stream_not_granted" {
		t.Errorf("expand capability for an ungranted stream: %s", r)
	}
	// The set shared by most streams is lifted; messages keeps its own.
	if got := conn.Get("granted_connections.#.connection_id").String(); got != `["cin_gmail_personal","cin_gmail_work"]` {
		t.Errorf("connector granted_connections = %s", got)
	}
	if got := msgs.Get("granted_connections.#.connection_id").String(); got != `["cin_gmail_personal"]` {
		t.Errorf("messages granted_connections = %s", got)
	}
	if conn.Get(`streams.#(name=="labels").granted_connections`).Exists() {
		t.Errorf("labels repeats the lifted set")
	}

	// Full view: no filter capabilities for a client, reasons for withheld fields.
	a = get(t, srv, narrow, "/v1/schema?stream=messages")
	wantOK(t, a)
	full := a.j("connectors.0.streams.0")
	snip := full.Get("field_capabilities.snippet")
	if snip.Get("granted").Bool() || snip.Get("lexical_search.reason").String() != "field_not_granted" || snip.Get("exact_filter").Exists() {
		t.Errorf("snippet capability: %s", snip)
	}
	if full.Get("instance_ids.#").Int() != 1 || full.Get("granted_connections.0.connection_id").String() != "cin_gmail_personal" {
		t.Errorf("full stream connections: %s / %s", full.Get("instance_ids"), full.Get("granted_connections"))
	}
	if a.j("connector_count").Int() != 1 || a.j("stream_count").Int() != 1 {
		t.Errorf("scoped full view counts: %s %s", a.j("connector_count"), a.j("stream_count"))
	}
	// detail=full with a single source needs no connection_id.
	wantOK(t, get(t, srv, narrow, "/v1/schema?stream=messages&detail=full"))
	wantError(t, get(t, srv, narrow, "/v1/schema?stream=labels&detail=full"), 409, "ambiguous_schema_detail", "connection_id")
}

func TestSchemaScoping(t *testing.T) {
	srv := New(t, Options{Dataset: gmailWith(t, map[string]string{"narrow": narrowGrant})})
	narrow, owner := srv.IssueClientToken("narrow"), srv.Token(TokenOwner)
	for _, tc := range []struct {
		name, token, target string
		streams             int
	}{
		{"unknown stream", narrow, "/v1/schema?view=compact&stream=nope", 0},
		{"stream outside the grant", narrow, "/v1/schema?view=compact&stream=attachments", 0},
		{"connection outside the grant", narrow, "/v1/schema?view=compact&connection_id=cin_nope", 0},
		{"connection drops streams without it", narrow, "/v1/schema?view=compact&connection_id=cin_gmail_work", 2},
		{"owner sees every declared stream", owner, "/v1/schema?view=compact", 5},
		{"owner stream scope", owner, "/v1/schema?stream=threads", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := get(t, srv, tc.token, tc.target)
			wantOK(t, a)
			n := 0
			for _, c := range a.j("connectors").Array() {
				n += len(c.Get("streams").Array())
			}
			if n != tc.streams || a.j("stream_count").Int() != int64(tc.streams) {
				t.Errorf("%d streams (stream_count %s), want %d", n, a.j("stream_count"), tc.streams)
			}
			if tc.streams == 0 && a.j("connectors").Raw != "[]" {
				t.Errorf("no match gives connectors: [], got %s", a.j("connectors").Raw)
			}
		})
	}
	// An unscoped full view has no counts.
	a := get(t, srv, owner, "/v1/schema")
	if a.j("connector_count").Exists() || a.j("detail").Exists() {
		t.Errorf("unscoped full view: %s %s", a.j("connector_count"), a.j("detail"))
	}
	// Owner full view carries filter capabilities with operators.
	a = get(t, srv, owner, "/v1/schema?stream=messages")
	rf := a.j("connectors.0.streams.0.field_capabilities.size_bytes.range_filter")
	if !rf.Get("usable").Bool() || rf.Get("operators.#").Int() != 4 {
		t.Errorf("owner range_filter = %s", rf)
	}
	if a.j("bearer.scope").String() != "owner" || a.j("connectors.0.source.id").String() != "gmail" {
		t.Errorf("owner bearer/source: %s %s", a.j("bearer"), a.j("connectors.0.source"))
	}
	wantError(t, get(t, srv, owner, "/v1/schema?detail=full"), 400, "invalid_request", "detail")
	wantError(t, get(t, srv, owner, "/v1/schema?detail=full&stream=messages"), 409, "ambiguous_schema_detail", "connection_id")
	a = get(t, srv, owner, "/v1/schema?detail=full&stream=messages&connection_id=cin_gmail_work&view=compact")
	wantOK(t, a)
	if a.j("detail").Exists() || !a.j("connectors.0.streams.0.schema").Exists() {
		t.Errorf("detail=full answers the full view: %s", a.body)
	}
}

func TestStreams(t *testing.T) {
	now := time.Date(2026, 2, 16, 17, 0, 0, 0, time.UTC)
	srv := New(t, Options{Dataset: gmailWith(t, map[string]string{"narrow": narrowGrant}), Now: func() time.Time { return now }})
	narrow, owner := srv.IssueClientToken("narrow"), srv.Token(TokenOwner)

	a := get(t, srv, narrow, "/v1/streams")
	wantOK(t, a)
	type row struct {
		name, conn string
		count      int64
		status     string
	}
	var got []row
	for _, r := range a.j("data").Array() {
		got = append(got, row{r.Get("name").String(), r.Get("connection_id").String(), r.Get("record_count").Int(), r.Get("freshness.status").String()})
	}
	want := []row{
		{"messages", "cin_gmail_personal", 5, "stale"}, // the visible window ends 2026-02-10
		{"labels", "cin_gmail_personal", 2, "stale"},
		{"labels", "cin_gmail_work", 2, "stale"},
		{"threads", "cin_gmail_personal", 7, "current"}, // p_thr_007 emitted 2026-02-16T16:49
		{"threads", "cin_gmail_work", 6, "stale"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows\n got %v\nwant %v", got, want)
	}
	if a.j("has_more").Bool() || a.j("links.next").Type.String() != "Null" {
		t.Errorf("streams never paginate: %s", a.body)
	}

	a = get(t, srv, narrow, "/v1/streams?connection_id=cin_gmail_work")
	wantOK(t, a)
	if n := len(a.j("data").Array()); n != 2 {
		t.Errorf("narrowed to work: %d rows", n)
	}
	wantError(t, get(t, srv, narrow, "/v1/streams?connection_id=cin_nope"), 401, "context.instance_mismatch", "")
	wantError(t, get(t, srv, narrow, "/v1/streams?connection_id=cin_gmail_work&connector_instance_id=cin_gmail_personal"), 400, "invalid_argument", "connector_instance_id")
	wantError(t, get(t, srv, owner, "/v1/streams?connection_id=cin_nope"), 404, "connection_not_found", "connection_id")

	a = get(t, srv, owner, "/v1/streams")
	wantOK(t, a)
	if n := len(a.j("data").Array()); n != 10 || a.j("data.0.connector_id").String() != "gmail" || a.j("data.0.source.kind").String() != "connector" {
		t.Errorf("owner rows: %d, first %s", n, a.j("data.0"))
	}
}

func TestFreshnessWithoutData(t *testing.T) {
	srv := New(t, Options{})
	last, fresh := srv.freshness(srv.store.connectors[0], nil)
	if last != nil || fresh.len() != 1 {
		t.Errorf("no data: last_updated %v freshness %v", last, fresh)
	}
	if v, _ := fresh.get("status"); v != "unknown" {
		t.Errorf("status = %v", v)
	}
}

func TestStreamMetadata(t *testing.T) {
	srv := New(t, Options{Dataset: gmailWith(t, map[string]string{"narrow": narrowGrant})})
	narrow, owner := srv.IssueClientToken("narrow"), srv.Token(TokenOwner)

	a := get(t, srv, narrow, "/v1/streams/messages")
	wantOK(t, a)
	if a.j("object").String() != "stream_metadata" || a.j("cursor_field").String() != "received_at" ||
		a.j("instance_ids.0").String() != "cin_gmail_personal" || a.j("granted_connections").Exists() || a.j("record_count").Exists() {
		t.Errorf("client stream metadata: %s", a.body)
	}
	// Not grant-projected: the full declared schema, withheld fields included.
	if !a.j("schema.properties.snippet").Exists() || a.j("field_capabilities.snippet.granted").Bool() {
		t.Errorf("schema and capabilities: %s", a.j("field_capabilities.snippet"))
	}
	wantError(t, get(t, srv, narrow, "/v1/streams/attachments"), 401, "context.stream_not_allowed", "")
	wantError(t, get(t, srv, narrow, "/v1/streams/messages?connection_id=cin_gmail_work"), 401, "context.instance_mismatch", "")
	wantError(t, get(t, srv, owner, "/v1/streams/nope"), 404, "not_found", "")
	wantError(t, get(t, srv, owner, "/v1/streams/labels?connection_id=cin_nope"), 404, "connection_not_found", "connection_id")
	wantError(t, get(t, srv, owner, "/v1/streams/labels?connection_id=cin_gmail_work&connector_id=notes"), 404, "connection_not_found", "connection_id")
	wantError(t, get(t, srv, owner, "/v1/streams/labels?connection_id=cin_gmail_work&connector_instance_id=cin_gmail_personal"), 400, "invalid_argument", "connector_instance_id")
	wantOK(t, get(t, srv, owner, "/v1/streams/labels"))
	a = get(t, srv, owner, "/v1/streams/labels?connector_instance_id=cin_gmail_work")
	wantOK(t, a)
	if a.j("meta.warnings.0.code").String() != "deprecated_alias_used" {
		t.Errorf("alias warning: %s", a.j("meta"))
	}
}
