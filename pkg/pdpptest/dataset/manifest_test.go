package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
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
		p                         Property
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

// FuzzObjectMembers checks the scanner against encoding/json's tokenizer: same
// acceptance, same keys in the same order, same values.
func FuzzObjectMembers(f *testing.F) {
	for _, seed := range []string{`{}`, `{"a":1}`, `{"a":{"b":[1,{"c":null}]}}`, `{"a":1}{`, `[1]`, `{"a"`,
		`{"k\"q": "v\\", "e": "\u00e9", "n": -1.5e3, "t": true, "s": [ "]" , "}" ] }`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		members, err := ObjectMembers(raw)
		want, werr := tokenMembers(raw)
		if (err == nil) != (werr == nil) {
			t.Fatalf("ObjectMembers err %v, tokenizer err %v, for %q", err, werr, raw)
		}
		if err != nil {
			return
		}
		if len(members) != len(want) {
			t.Fatalf("%d members, tokenizer %d, for %q", len(members), len(want), raw)
		}
		for i := range members {
			var a, b bytes.Buffer
			if members[i].Key != want[i].Key || json.Compact(&a, members[i].Value) != nil || json.Compact(&b, want[i].Value) != nil || a.String() != b.String() {
				t.Fatalf("member %d: %q=%s, tokenizer %q=%s", i, members[i].Key, members[i].Value, want[i].Key, want[i].Value)
			}
		}
	})
}

// tokenMembers is the slow, obviously right way to split an object.
func tokenMembers(raw []byte) ([]Member, error) {
	if !json.Valid(raw) {
		return nil, errors.New("invalid")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var out []Member
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, Member{Key: kt.(string), Value: v})
	}
	return out, nil
}
