package dataset

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestParseGmailManifest(t *testing.T) {
	ds, err := Gmail()
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseManifest(ds.Connectors[0].Manifest)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range m.Streams {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"messages", "threads", "labels", "message_bodies", "attachments"}) || m.ConnectorKey != "gmail" || m.MaxStalenessSeconds != 3600 {
		t.Fatalf("manifest: streams %v key %q staleness %d", names, m.ConnectorKey, m.MaxStalenessSeconds)
	}
	msgs := m.Stream("messages")
	if msgs.CursorField != "received_at" || !slices.Equal(msgs.PrimaryKey, []string{"id"}) || !slices.Equal(msgs.Required, []string{"id", "thread_id", "received_at"}) {
		t.Errorf("messages keys: %+v", msgs)
	}
	if msgs.Properties[0].Name != "id" || msgs.Properties[2].Name != "subject" || len(msgs.Properties) != 22 {
		t.Errorf("properties keep authored order: %v", msgs.Properties[:3])
	}
	if !slices.Equal(msgs.Query.RangeFilterFields, []string{"received_at", "date", "size_bytes"}) ||
		!slices.Equal(msgs.Query.RangeFilters["size_bytes"], []string{"gte", "gt", "lte", "lt"}) {
		t.Errorf("range filters: %v %v", msgs.Query.RangeFilterFields, msgs.Query.RangeFilters)
	}
	if e := msgs.Query.ExpandItem("attachments"); e == nil || e.DefaultLimit != 10 || e.MaxLimit != 50 {
		t.Errorf("expand attachments: %+v", e)
	}
	if e := msgs.Query.ExpandItem("message_bodies"); e == nil || e.DefaultLimit != 0 {
		t.Errorf("expand message_bodies: %+v", e)
	}
	if r := msgs.Relationship("attachments"); r == nil || r.ForeignKey != "message_id" || r.Cardinality != "has_many" {
		t.Errorf("relationship: %+v", r)
	}
	if a := msgs.Query.Aggregations; a == nil || !a.Count || !slices.Equal(a.Sum, []string{"size_bytes"}) {
		t.Errorf("aggregations: %+v", a)
	}
	if v := msgs.View("envelope"); v == nil || len(v.Fields) != 10 {
		t.Errorf("view: %+v", v)
	}
	if labels := m.Stream("labels"); labels.CursorField != "" || labels.Query.Aggregations != nil || labels.RelationshipsRaw != nil {
		t.Errorf("labels declares no cursor, aggregations or relationships: %+v", labels)
	}
	if !json.Valid(msgs.SchemaRaw) || !json.Valid(msgs.QueryRaw) || !json.Valid(msgs.SelectionRaw) {
		t.Error("verbatim declarations are JSON")
	}
}

func TestPropertyKinds(t *testing.T) {
	for _, tc := range []struct {
		p                          Property
		scalar, numeric, temporal bool
	}{
		{Property{Types: []string{"string"}}, true, false, false},
		{Property{Types: []string{"string", "null"}, Format: "date-time"}, true, false, true},
		{Property{Types: []string{"string"}, Format: "date"}, true, false, true},
		{Property{Types: []string{"integer", "null"}}, true, true, false},
		{Property{Types: []string{"number"}}, true, true, false},
		{Property{Types: []string{"boolean"}}, true, false, false},
		{Property{Types: []string{"array"}}, false, false, false},
		{Property{Types: []string{"object", "null"}}, false, false, false},
		{Property{Types: []string{"string", "integer"}}, false, false, false},
		{Property{}, false, false, false},
	} {
		if tc.p.Scalar() != tc.scalar || tc.p.Numeric() != tc.numeric || tc.p.Temporal() != tc.temporal {
			t.Errorf("%v/%s: scalar %v numeric %v temporal %v", tc.p.Types, tc.p.Format, tc.p.Scalar(), tc.p.Numeric(), tc.p.Temporal())
		}
	}
}

func TestParseManifestErrors(t *testing.T) {
	for name, raw := range map[string]string{
		"not JSON":          `{`,
		"stream not object": `{"streams":[1]}`,
		"nameless stream":   `{"streams":[{}]}`,
		"bad type":          `{"streams":[{"name":"s","schema":{"properties":{"a":{"type":3}}}}]}`,
		"bad range filters": `{"streams":[{"name":"s","query":{"range_filters":{"a":"gte"}}}]}`,
		"properties array":  `{"streams":[{"name":"s","schema":{"properties":[]}}]}`,
	} {
		if _, err := ParseManifest([]byte(raw)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestGmailGrant(t *testing.T) {
	ds, err := Gmail()
	if err != nil {
		t.Fatal(err)
	}
	g := ds.Grants["client"]
	if !g.LegacyProjection() || g.GrantID != "grt_968a9e79fcb893f1" || g.ClientID != "pdpp_cli" || g.ExpiresAt != "" {
		t.Errorf("client grant: %+v", g)
	}
	if s := g.Stream("messages"); s == nil || len(s.InstanceIDs) != 2 || len(s.Fields) != 22 {
		t.Errorf("messages grant: %+v", s)
	}
	if ds.Connectors[0].Connections[1].ID != "cin_gmail_work" || ds.Connectors[0].Connections[1].DisplayName != "Work Gmail" {
		t.Errorf("connections: %+v", ds.Connectors[0].Connections)
	}
}

func TestObjectMembers(t *testing.T) {
	got, err := ObjectMembers([]byte(` {"b": 1, "a": {"x": [1, 2]}, "b": null} `))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Key != "b" || got[1].Key != "a" || string(got[1].Value) != `{"x": [1, 2]}` || string(got[2].Value) != "null" {
		t.Errorf("members = %q", got)
	}
	for _, bad := range []string{``, `[]`, `"s"`, `{"a":1} x`, `{"a":}`, `{"a":1`} {
		if _, err := ObjectMembers([]byte(bad)); err == nil {
			t.Errorf("ObjectMembers(%q): no error", bad)
		}
	}
}

// FuzzObjectMembers checks that the decoder never panics and only accepts
// valid JSON objects.
func FuzzObjectMembers(f *testing.F) {
	for _, seed := range []string{`{}`, `{"a":1}`, `{"a":{"b":[1,{"c":null}]}}`, `{"a":1}{`, `[1]`, `{"a"`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		members, err := ObjectMembers(raw)
		if err != nil {
			return
		}
		if !json.Valid(raw) {
			t.Fatalf("accepted invalid JSON %q", raw)
		}
		for _, m := range members {
			if !json.Valid(m.Value) {
				t.Fatalf("member %q has invalid value %q", m.Key, m.Value)
			}
		}
	})
}
