package tools

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestSchemaText(t *testing.T) {
	for _, tc := range []struct {
		name, input, stream, connection string
		// project applies the global index projection first, as the tool
		// does for calls without stream.
		project bool
		want    []string
	}{
		{name: "client-global", input: "rs/schema-compact.json", project: true, want: []string{
			"PDPP schema: connectors=1 streams=5\nbearer token_kind=client\n",
			`stream name="labels" connector_key="gmail" connections={connection_id:cin_gmail_personal,display_name:"Personal Gmail"}|{connection_id:cin_gmail_work,display_name:"Work Gmail"}`,
			"\n" + indexHint,
		}},
		{name: "client-stream", input: "rs/schema-compact-stream-messages.json", stream: "messages", want: []string{
			"\n" + legendLine + "\n",
			"fields=bcc[declared];cc[declared];date[declared]",
			"thread_id[declared];to[declared]", // all 22 fields: nothing cut for one row
		}},
		{name: "owner-stream", input: "rs/owner-schema-compact-stream-messages.json", stream: "messages", want: []string{
			" primary_key=id cursor_field=received_at expand=message_bodies(has_one)|attachments(has_many,max_limit=50) fields=id[t=string,eq];",
			"received_at[t=string,role=event-time,eq,r=gte|gt|lte|lt,a=group_by_time|max|min]",
			" aggregations=group_by=is_draft|is_flagged|is_seen|is_answered|has_attachments;group_by_time=date|received_at;sum=size_bytes;min=date|received_at|size_bytes;max=date|received_at|size_bytes",
		}},
		{name: "owner-full-scoped", input: "rs/schema-full-owner.json", stream: "messages", connection: "cin_a", want: []string{
			"\nschema_scope connection_id=\"cin_a\"\n",
			" views=envelope",
			"expand=attachments(has_many,max_limit=50)|message_bodies(unusable:related_stream_not_granted)",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := unwrapSchema(readTestdata(t, tc.input))
			if tc.project {
				doc = gjson.Parse(projectSchema(doc, false))
			}
			got := schemaText(doc, tc.stream, tc.connection)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("text lacks %q", w)
				}
			}
			golden(t, "golden/schema-text-"+tc.name+".txt", []byte(got))
		})
	}
}

// A grant with more streams than the row cap still names every stream in
// the text, and says how to see the others.
func TestSchemaTextIndexesEveryStream(t *testing.T) {
	var connectors []string
	var names []string
	for c := range 4 {
		var streams []string
		for s := range 20 {
			name := fmt.Sprintf("stream_%d_%d", c, s)
			names = append(names, name)
			streams = append(streams, fmt.Sprintf(`{"name":%q,"field_capabilities":{"f":"t=string"}}`, name))
		}
		connectors = append(connectors, fmt.Sprintf(
			`{"connector_key":"connector-%d","granted_connections":[{"connection_id":"cin_%d","display_name":"Source %d"}],"streams":[%s]}`,
			c, c, c, strings.Join(streams, ",")))
	}
	doc := gjson.Parse(`{"object":"schema","connectors":[` + strings.Join(connectors, ",") + `]}`)
	got := schemaText(gjson.Parse(projectSchema(doc, false)), "", "")
	for _, n := range names {
		if !strings.Contains(got, n) {
			t.Errorf("stream %s is not named", n)
		}
	}
	for _, w := range []string{
		`stream_index connector_key="connector-3" stream_count=20 streams=stream_3_0|stream_3_1|`,
		"\nmore_streams=30 (",
		`stream name="stream_2_9" connector_key="connector-2"`, // row 50
	} {
		if !strings.Contains(got, w) {
			t.Errorf("text lacks %q", w)
		}
	}
	if strings.Contains(got, `stream name="stream_2_10"`) {
		t.Error("more than 50 stream rows")
	}
	if len(got) > 18000 {
		t.Errorf("index text is %d bytes", len(got))
	}
}

// Shared streams listed under many rows cut their field lists, and say so.
func TestSchemaTextAnnouncesCutFields(t *testing.T) {
	var fields []string
	for i := range 40 {
		fields = append(fields, fmt.Sprintf(`"f%d":"t=string,a=group_by"`, i))
	}
	row := `{"name":"shared","field_capabilities":{` + strings.Join(fields, ",") + `}}`
	var conns []string
	for i := range 8 {
		conns = append(conns, fmt.Sprintf(`{"connector_key":"k%d","streams":[%s]}`, i, row))
	}
	got := schemaText(gjson.Parse(`{"connectors":[`+strings.Join(conns, ",")+`]}`), "shared", "")
	for _, w := range []string{";more:24 ", "group_by=f0|f1|f2|f3|f4|f5|f6|f7|f8|f9|f10|f11|more:28", "\nfields_cut: "} {
		if !strings.Contains(got, w) {
			t.Errorf("text lacks %q", w)
		}
	}
}
