package tools

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"
)

func TestFieldFlags(t *testing.T) {
	doc := gjson.ParseBytes(readTestdata(t, "rs/schema-full-owner.json"))
	caps := doc.Get("connectors.0.streams.0.field_capabilities")
	want := map[string]string{
		"id":              "t=string,eq",
		"subject":         "t=text,role=primary-title,eq,lex,sem",
		"received_at":     "t=string,role=event-time,eq,r=gte|gt|lte|lt,a=group_by_time|max|min",
		"size_bytes":      "t=integer|null,eq,r=gte|gt|lte|lt,a=max|min|sum",
		"has_attachments": "t=boolean,eq,a=group_by",
		"labels":          "t=array",
		"snippet":         "t=text,role=secondary,g=false,lex=unusable:field_not_granted,sem=unusable:field_not_granted",
	}
	got := map[string]string{}
	caps.ForEach(func(k, v gjson.Result) bool {
		got[k.String()] = fieldFlags(v)
		return true
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("flags (-want +got):\n%s", diff)
	}

	for in, want := range map[string]string{
		`"t=string,eq"`:   "t=string,eq",
		`{"flags":"t=x"}`: "t=x",
		`{}`:              "declared",
		`{"range_filter":{"declared":true,"usable":true}}`:  "r",
		`{"exact_filter":{"declared":true,"usable":false}}`: "eq=unusable",
		`{"type":"a b,c"}`: "t=a_b_c",
		`{"aggregation":{"median":{"usable":true},"sum":{"usable":true}}}`: "a=sum|median",
	} {
		if got := fieldFlags(gjson.Parse(in)); got != want {
			t.Errorf("fieldFlags(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestProjectSchema(t *testing.T) {
	doc := gjson.ParseBytes(readTestdata(t, "rs/schema-full-owner.json"))
	for _, tc := range []struct {
		name   string
		fields bool
	}{{"index", false}, {"fields", true}} {
		t.Run(tc.name, func(t *testing.T) {
			out := projectSchema(doc, tc.fields)
			if !json.Valid([]byte(out)) {
				t.Fatalf("projection is not JSON: %s", out)
			}
			p := gjson.Parse(out)
			if p.Get("detail").String() != "compact" || p.Get("streams").Exists() {
				t.Errorf("detail %q, top-level streams kept: %v", p.Get("detail"), p.Get("streams").Exists())
			}
			c := p.Get("connectors.0")
			// The set shared by messages and threads (in either order) is
			// lifted; labels keeps its own, smaller set.
			if got := c.Get("granted_connections.#.connection_id").Raw; got != `["cin_b","cin_a"]` {
				t.Errorf("lifted connections %s", got)
			}
			if strings.Contains(out, "connector_instance_id") {
				t.Error("connector_instance_id survived the projection")
			}
			for i, want := range []bool{false, false, true} {
				if got := c.Get("streams." + string(rune('0'+i)) + ".granted_connections").Exists(); got != want {
					t.Errorf("stream %d keeps its own connections = %v, want %v", i, got, want)
				}
			}
			msgs := c.Get("streams.0")
			for _, dropped := range []string{"object", "schema", "views", "semantics"} {
				if msgs.Get(dropped).Exists() {
					t.Errorf("stream kept %s", dropped)
				}
			}
			if got := msgs.Get("field_capabilities").Exists(); got != tc.fields {
				t.Errorf("field_capabilities present = %v", got)
			}
			if tc.fields {
				if got := msgs.Get("field_capabilities.received_at").String(); got != "t=string,role=event-time,eq,r=gte|gt|lte|lt,a=group_by_time|max|min" {
					t.Errorf("received_at flags %q", got)
				}
				if msgs.Get("expand_capabilities.0.child_parent_key_field").Exists() {
					t.Error("expand capability kept child_parent_key_field")
				}
			}
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, []byte(out), "", "  "); err != nil {
				t.Fatal(err)
			}
			golden(t, "golden/project-owner-"+tc.name+".json", pretty.Bytes())
		})
	}
}

// A projection copies members in the RS's order and bytes: projecting an
// already-compact document with field detail changes nothing.
func TestProjectCompactIsIdentity(t *testing.T) {
	raw := readTestdata(t, "rs/owner-schema-compact-stream-messages.json")
	var want bytes.Buffer
	if err := json.Compact(&want, raw); err != nil {
		t.Fatal(err)
	}
	got := projectSchema(gjson.ParseBytes(want.Bytes()), true)
	if got != want.String() {
		t.Errorf("projection of a compact document changed it:\n got %s\nwant %s", got, want.String())
	}
}

func TestUnwrapSchema(t *testing.T) {
	inner := `{"object":"schema","connectors":[]}`
	if got := unwrapSchema([]byte(`{"data":` + inner + `,"meta":{}}`)).Raw; got != inner {
		t.Errorf("wrapped: %s", got)
	}
	plain := `{"object":"schema","data":{"x":1}}`
	if got := unwrapSchema([]byte(plain)).Raw; got != plain {
		t.Errorf("unwrapped a data member that is not a schema: %s", got)
	}
}

func TestWithoutDuplicateStreams(t *testing.T) {
	got := withoutDuplicateStreams(gjson.Parse(`{"a":1,"connectors":[{"streams":[]}],"streams":[{"name":"x"}],"z":2}`))
	if want := `{"a":1,"connectors":[{"streams":[]}],"z":2}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	keep := `{"streams":[{"name":"x"}]}`
	if got := withoutDuplicateStreams(gjson.Parse(keep)); got != keep {
		t.Errorf("dropped the only stream list: %s", got)
	}
}
