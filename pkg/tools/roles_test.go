package tools

import (
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// The role table reads what each schema row declares, for the connections
// the row speaks for; a role on a field the grant does not hold never
// counts; a stream whose rows disagree has no roles but by connection.
func TestRoleTable(t *testing.T) {
	type look struct {
		stream, conn string
		titles       []string
		times        []string
	}
	for _, tc := range []struct {
		name  string
		doc   string
		looks []look
	}{
		{
			name: "compact, connector-level connections, schema order",
			doc: `{"connectors":[{"granted_connections":[{"connection_id":"cin_a"},{"connection_id":"cin_b"}],"streams":[{"name":"mail","field_capabilities":{` +
				`"subject":"t=text,role=primary-title,lex","name":"t=string,role=primary-title","at":"t=string,role=event-time","body":"t=text"}}]}]}`,
			looks: []look{
				{"mail", "", []string{"subject", "name"}, []string{"at"}},
				{"mail", "cin_a", []string{"subject", "name"}, []string{"at"}},
				{"mail", "cin_unknown", []string{"subject", "name"}, []string{"at"}},
				{"other", "", nil, nil},
			},
		},
		{
			name: "a role on a field outside the grant is not a role",
			doc: `{"connectors":[{"streams":[{"name":"mail","field_capabilities":{` +
				`"secret":"t=text,role=primary-title,g=false,lex=unusable:field_not_granted","subject":"t=text,role=primary-title","at":"t=string,role=event-time,g=false"}}]}]}`,
			looks: []look{{"mail", "", []string{"subject"}, nil}},
		},
		{
			name: "full view: role and granted members",
			doc: `{"connectors":[{"streams":[{"name":"mail","field_capabilities":{` +
				`"secret":{"type":"text","role":"primary-title","granted":false},"subject":{"type":"text","granted":true,"schema":{"x_pdpp_role":"primary-title"}},` +
				`"at":{"type":"string","role":"event-time","granted":true}}}]}]}`,
			looks: []look{{"mail", "", []string{"subject"}, []string{"at"}}},
		},
		{
			name: "a package: each member's rows by their source connection",
			doc: `{"connectors":[` +
				`{"source":{"connection_id":"cin_a","grant_id":"g1"},"streams":[{"name":"mail","field_capabilities":{"subject":"t=text,role=primary-title"}}]},` +
				`{"source":{"connection_id":"cin_b","grant_id":"g2"},"streams":[{"name":"mail","field_capabilities":{"title":"t=text,role=primary-title","when":"t=string,role=event-time"}}]},` +
				`{"source":{"grant_id":"g3"},"streams":[{"name":"notes","granted_connections":[{"connection_id":"cin_c"}],"field_capabilities":{"heading":"t=text,role=primary-title"}}]}]}`,
			looks: []look{
				{"mail", "cin_a", []string{"subject"}, nil},
				{"mail", "cin_b", []string{"title"}, []string{"when"}},
				// Which member a hit without a known connection is from
				// cannot be told: no roles rather than another member's.
				{"mail", "", nil, nil},
				{"mail", "cin_zzz", nil, nil},
				{"notes", "cin_c", []string{"heading"}, nil},
				{"notes", "", []string{"heading"}, nil},
			},
		},
		{
			name: "rows of one stream that agree keep the stream's roles",
			doc: `{"connectors":[` +
				`{"source":{"connection_id":"cin_a"},"streams":[{"name":"mail","field_capabilities":{"subject":"t=text,role=primary-title"}}]},` +
				`{"source":{"connection_id":"cin_b"},"streams":[{"name":"mail","field_capabilities":{"subject":"t=text,role=primary-title,lex"}}]}]}`,
			looks: []look{{"mail", "", []string{"subject"}, nil}, {"mail", "cin_b", []string{"subject"}, nil}},
		},
		{
			name: "stream-level connections override the connector's",
			doc: `{"connectors":[{"granted_connections":[{"connection_id":"cin_a"}],"streams":[` +
				`{"name":"mail","granted_connections":[{"connection_id":"cin_b"}],"field_capabilities":{"subject":"t=text,role=primary-title"}}]}]}`,
			looks: []look{{"mail", "cin_b", []string{"subject"}, nil}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := newRoleTable(gjson.Parse(tc.doc))
			for _, l := range tc.looks {
				got := tab.lookup(l.stream, l.conn)
				if !slices.Equal(got.titles, l.titles) || !slices.Equal(got.times, l.times) {
					t.Errorf("lookup(%q, %q) = %q %q, want %q %q", l.stream, l.conn, got.titles, got.times, l.titles, l.times)
				}
			}
		})
	}
	var none *roleTable
	if r := none.lookup("mail", "cin_a"); r.title() != "" || r.time() != "" || r.keyFields() != nil {
		t.Errorf("a nil table knows %+v", r)
	}
}

// A caller's append to the key fields never writes into the shared table.
func TestRoleTableIsNotWritten(t *testing.T) {
	tab := newRoleTable(gjson.Parse(`{"connectors":[{"streams":[{"name":"mail","field_capabilities":{"a":"t=text,role=primary-title","b":"t=text,role=primary-title","c":"t=string,role=event-time"}}]}]}`))
	k := tab.lookup("mail", "").keyFields()
	_ = append(k, "scribble")
	_ = append(tab.lookup("mail", "").titles, "scribble")
	if got := tab.lookup("mail", "").keyFields(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("key fields %q after appends", got)
	}
}

// A hostile schema is read within bounds: rows past the limit, names longer
// than any real name and fields past the limit are left out.
func TestRoleTableBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"connectors":[{"streams":[`)
	for i := range maxRoleRows + 50 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"name":"s` + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + `","connection_id":"c` + strings.Repeat("9", i%200) + `","field_capabilities":{`)
		for f := range maxRoleFields + 3 {
			if f > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"f` + string(rune('a'+f)) + `":"t=text,role=primary-title"`)
		}
		b.WriteString(`,"` + strings.Repeat("L", maxRoleNameBytes+1) + `":"t=text,role=event-time"}}`)
	}
	b.WriteString(`]}]}`)
	tab := newRoleTable(gjson.Parse(b.String()))
	if len(tab.byConnection) > maxRoleRows || len(tab.byStream) > maxRoleRows {
		t.Fatalf("%d connection and %d stream entries, over %d", len(tab.byConnection), len(tab.byStream), maxRoleRows)
	}
	for k, r := range tab.byConnection {
		if len(k.connectionID) > maxRoleNameBytes || len(r.titles) > maxRoleFields || len(r.times) != 0 {
			t.Fatalf("entry %q: %d titles, times %q", k, len(r.titles), r.times)
		}
	}
	if tab.size <= 0 || tab.size > 4<<20 {
		t.Fatalf("table counted as %d bytes", tab.size)
	}
}
