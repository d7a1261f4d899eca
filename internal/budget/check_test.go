package budget_test

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/budget"
)

const connSentence = "Pass connection_id from an error's available_connections to recover from ambiguous_connection."

// Each case bends the healthy surface in one way; exactly the named checks
// must fail, and each failure message must say what it found.
func TestSurfaceChecks(t *testing.T) {
	for _, tt := range []struct {
		name    string
		bend    func(s *synthetic, l *budget.Limits)
		fail    []string
		message string // in the first failed check's message and findings
	}{
		{name: "healthy", bend: func(*synthetic, *budget.Limits) {}},
		{
			name: "seventh tool",
			bend: func(s *synthetic, _ *budget.Limits) {
				s.tools = append(s.tools, &mcp.Tool{Name: "list_streams", Description: "List streams.", InputSchema: input("")})
			},
			fail:    []string{"tools.membership"},
			message: "unexpected list_streams (list_streams: stream listing is schema's job)",
		},
		{
			name: "event tool",
			bend: func(s *synthetic, _ *budget.Limits) {
				s.tools = append(s.tools, &mcp.Tool{Name: "create_event_subscription", Description: "Subscribe.", InputSchema: input("")})
			},
			fail:    []string{"tools.membership"},
			message: "event delivery is REST and operator surface",
		},
		{
			name: "developer tool",
			bend: func(s *synthetic, _ *budget.Limits) {
				s.tools = append(s.tools, &mcp.Tool{Name: "send_test_event", Description: "Test.", InputSchema: input("")})
			},
			fail:    []string{"tools.membership"},
			message: "unexpected send_test_event",
		},
		{
			name: "missing tool",
			bend: func(s *synthetic, _ *budget.Limits) {
				s.tools = slices.DeleteFunc(s.tools, func(t *mcp.Tool) bool { return t.Name == "fetch" })
			},
			fail:    []string{"tools.membership"},
			message: "missing fetch",
		},
		{
			name: "repeated connection_id sentence",
			bend: func(s *synthetic, _ *budget.Limits) {
				s.tool("query_records").Description += " " + connSentence
				s.tool("search").Description += " " + connSentence
			},
			fail:    []string{"prose.repeated"},
			message: `connection_id recovery guidance in query_records, search: "Read-only. Pass connection_id from an error's available_connections to recover from ambiguous_connection."`,
		},
		{
			name: "repeated connection_id property description",
			bend: func(s *synthetic, _ *budget.Limits) {
				prop := `"connection_id": {"type": "string", "description": "A connection_id from schema or from an error's available_connections (not grant_id)."}`
				s.tool("fetch").InputSchema = input(`"id": {"type": "string"}, ` + prop)
				s.tool("read_record_field").InputSchema = input(`"id": {"type": "string"}, ` + prop)
			},
			fail:    []string{"prose.repeated"},
			message: "in fetch, read_record_field",
		},
		{
			name: "repeated paging phrase",
			bend: func(s *synthetic, _ *budget.Limits) {
				p := " Pass next_cursor unchanged as cursor to read the following page of results."
				s.tool("query_records").Description += p
				s.tool("search").Description += p
			},
			fail:    []string{"prose.repeated"},
			message: "paging guidance in query_records, search",
		},
		{
			name: "repeated prose on another topic passes",
			bend: func(s *synthetic, _ *budget.Limits) {
				p := " Results are limited to what the person approved for this client app."
				s.tool("query_records").Description += p
				s.tool("search").Description += p
			},
		},
		{
			name: "short shared phrase passes",
			bend: func(s *synthetic, _ *budget.Limits) {
				p := " Use connection_id from schema."
				s.tool("query_records").Description += p
				s.tool("search").Description += p
			},
		},
		{
			name: "inflated description",
			bend: func(s *synthetic, _ *budget.Limits) {
				s.tool("search").Description += strings.Repeat(" Search is read-only.", 8)
			},
			fail:    []string{"tools_list.description_max_bytes"},
			message: "description of search: 219 bytes, 19 over the budget of 200; cross-tool guidance belongs in the server instructions",
		},
		{
			// "At most" includes the limit: a tool measuring exactly its
			// budget passes, one byte more fails.
			name: "tool exactly at its budget passes",
			bend: func(_ *synthetic, l *budget.Limits) {
				l.ToolsList.ToolMaxBytes["query_records"] = 433
			},
		},
		{
			name: "tool one byte over its budget",
			bend: func(_ *synthetic, l *budget.Limits) {
				l.ToolsList.ToolMaxBytes["query_records"] = 432
			},
			fail:    []string{"tools_list.tool_max_bytes.query_records"},
			message: "tool query_records: 433 bytes, 1 over the budget of 432",
		},
		{
			name: "tool over its budget",
			bend: func(_ *synthetic, l *budget.Limits) {
				l.ToolsList.ToolMaxBytes["query_records"] = 300
			},
			fail:    []string{"tools_list.tool_max_bytes.query_records"},
			message: "tool query_records: 433 bytes, 133 over the budget of 300 (description 75, input schema 211, output schema 77, the rest 70)",
		},
		{
			name: "tools array over its budget",
			bend: func(_ *synthetic, l *budget.Limits) {
				l.ToolsList.MaxBytes = 2000
			},
			fail:    []string{"tools_list.max_bytes"},
			message: "tools/list tools array: 2,292 bytes, 292 over the budget of 2,000; shrink the largest tools: query_records 433, aggregate 423, fetch 367",
		},
		{
			name: "null type union",
			bend: func(s *synthetic, _ *budget.Limits) {
				s.tool("search").InputSchema = input(`"q": {"type": "string"}, "streams": {"type": ["null", "array"], "items": {"type": "string"}}`)
			},
			fail:    []string{"schema.portability"},
			message: `search input /properties/streams: type ["null","array"] is a null union`,
		},
		{
			name: "null union in the output schema",
			bend: func(s *synthetic, _ *budget.Limits) {
				s.tool("fetch").OutputSchema = json.RawMessage(`{"type": "object", "properties": {"url": {"type": ["string", "null"]}}}`)
			},
			fail:    []string{"schema.portability"},
			message: `fetch output /properties/url: type ["string","null"] is a null union`,
		},
		{
			name: "top-level anyOf",
			bend: func(s *synthetic, _ *budget.Limits) {
				s.tool("fetch").InputSchema = json.RawMessage(`{"type": "object", "anyOf": [{"required": ["id"]}, {"required": ["uri"]}], "properties": {"id": {"type": "string"}, "uri": {"type": "string"}}}`)
			},
			fail:    []string{"schema.portability"},
			message: "fetch input /: top-level anyOf",
		},
		{
			name: "filter as a string",
			bend: func(s *synthetic, _ *budget.Limits) {
				s.tool("query_records").InputSchema = input(`"stream": {"type": "string"}, "filter": {"type": "string"}`)
			},
			fail:    []string{"schema.portability"},
			message: `query_records input /properties/filter: filter must be advertised as an object (typed filter), got type "string"`,
		},
		{
			name: "connector_instance_id input",
			bend: func(s *synthetic, _ *budget.Limits) {
				s.tool("schema").InputSchema = input(`"stream": {"type": "string"}, "connector_instance_id": {"type": "string"}`)
			},
			fail:    []string{"schema.portability"},
			message: "connector_instance_id is not an input",
		},
		{
			name: "untyped property",
			bend: func(s *synthetic, _ *budget.Limits) {
				s.tool("query_records").InputSchema = input(`"filter": {"type": "object", "additionalProperties": {"type": "object", "properties": {"gte": {}}}}`)
			},
			fail:    []string{"schema.portability"},
			message: "query_records input /properties/filter/additionalProperties/properties/gte: property has no type",
		},
		{
			name: "typed alternatives count as typed",
			bend: func(s *synthetic, _ *budget.Limits) {
				s.tool("query_records").InputSchema = input(`"filter": {"type": "object", "additionalProperties": {"anyOf": [{"type": "string"}, {"type": "number"}]}, "properties": {"x": {"anyOf": [{"type": "string"}, {"type": "boolean"}]}}}`)
			},
		},
		{
			name: "no instructions",
			bend: func(s *synthetic, _ *budget.Limits) { s.instructions = "" },
			fail: []string{"instructions.present", "instructions.head"},
		},
		{
			name: "instructions head misses topics",
			bend: func(s *synthetic, l *budget.Limits) {
				l.Instructions.MaxBytes = 1000
				s.instructions = strings.Repeat("These tools read one person's data. ", 14) + "Ask for little. " +
					"Start with schema, pass connection_id, filter is a typed object, page with cursor."
			},
			fail:    []string{"instructions.head"},
			message: "the first 512 characters of the instructions must stand alone; they do not mention: schema-first discovery (schema); connection_id; typed filters (filter with typed or object); paging or narrowing (cursor, page, limit, narrow or fields)",
		},
		{
			name: "instructions over budget",
			bend: func(_ *synthetic, l *budget.Limits) { l.Instructions.MaxBytes = 100 },
			fail: []string{"instructions.max_bytes"},
		},
		{
			name: "owner token guidance in instructions",
			bend: func(s *synthetic, _ *budget.Limits) {
				s.instructions += " Never use an owner token or control-plane credentials here."
			},
			fail:    []string{"surface.owner_guidance"},
			message: `instructions: "…nue with cursor. Never use an owner token or control-plane credentials …"; instructions: "…. Never use an owner token or control-plane credentials here."`,
		},
		{
			name: "owner guidance in a property description",
			bend: func(s *synthetic, _ *budget.Limits) {
				s.tool("search").InputSchema = input(`"q": {"type": "string", "description": "Set PDPP_OWNER_TOKEN for all data."}`)
			},
			fail:    []string{"surface.owner_guidance"},
			message: `search input /properties/q description: "Set PDPP_OWNER_TOKEN for all data."`,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, l := healthy(), testLimits()
			tt.bend(s, l)
			checks := surfaceChecks(t, s, l)
			if diff := cmp.Diff(tt.fail, failedNames(checks)); diff != "" {
				t.Fatalf("failed checks (-want +got):\n%s\n%v", diff, checks)
			}
			if tt.message == "" {
				return
			}
			c := find(t, checks, tt.fail[0])
			if got := c.Message + ": " + strings.Join(c.Findings, "; "); !strings.Contains(got, tt.message) {
				t.Errorf("%s explanation\n%s\ndoes not contain\n%s", c.Name, got, tt.message)
			}
		})
	}
}

// The healthy surface runs every check once, tools in the documented
// order: membership, the total, per tool its bytes and description, three on
// the instructions, and the three text and schema checks.
func TestSurfaceCheckNames(t *testing.T) {
	checks := surfaceChecks(t, healthy(), testLimits())
	var names []string
	for _, c := range checks {
		names = append(names, c.Name)
	}
	want := []string{"tools.membership", "tools_list.max_bytes"}
	for _, n := range budget.Surface() {
		want = append(want, "tools_list.tool_max_bytes."+n)
	}
	for range budget.Surface() {
		want = append(want, "tools_list.description_max_bytes")
	}
	want = append(want, "instructions.present", "instructions.max_bytes", "instructions.head",
		"surface.owner_guidance", "prose.repeated", "schema.portability")
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("check names (-want +got):\n%s", diff)
	}
}

func TestRepeatedPhrases(t *testing.T) {
	shared := "the quick brown fox jumps over the lazy dog beside the riverbank at dawn"
	tools := []*mcp.Tool{
		{Name: "a", Description: "Alpha: " + shared + ". End."},
		{Name: "b", Description: "Beta says " + shared + ", then stops."},
		{Name: "c", Description: "Gamma is unrelated and short."},
		{Name: "d", Description: "Delta:    " + strings.ReplaceAll(shared, " ", "\n ") + "!"},
	}
	got := budget.RepeatedPhrases(tools, 60)
	want := []budget.RepeatedPhrase{{Phrase: shared, Tools: []string{"a", "b", "d"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := budget.RepeatedPhrases(tools, 80); len(got) != 0 {
		t.Errorf("phrases of 80+ characters: %v", got)
	}
}

// Sizes are of the bytes the server sent: the SDK's encoder writes < and &
// as they are, where re-encoding the decoded tool would spell them \u003c
// and \u0026. Without a recording, Measure falls back to re-encoding.
func TestMeasureUsesWireBytes(t *testing.T) {
	s := healthy()
	s.tool("search").Description = "Find records where a < b & c > d (GET /v1/search). Read-only."
	cs, wire := s.connect(t)
	st, err := budget.ReadSurface(t.Context(), cs, wire, 0)
	if err != nil {
		t.Fatal(err)
	}
	sent, err := budget.Measure(st, words{})
	if err != nil {
		t.Fatal(err)
	}
	st.Raw = nil
	reencoded, err := budget.Measure(st, words{})
	if err != nil {
		t.Fatal(err)
	}
	search := func(fp *budget.Footprint) budget.ToolFootprint {
		for _, tf := range fp.Tools {
			if tf.Name == "search" {
				return tf
			}
		}
		t.Fatal("no search")
		return budget.ToolFootprint{}
	}
	want := len(`"Find records where a < b & c > d (GET /v1/search). Read-only."`)
	if got := search(sent).DescriptionBytes; got != want {
		t.Errorf("description as sent: %d bytes, want %d", got, want)
	}
	if got := search(reencoded).DescriptionBytes; got != want+15 {
		t.Errorf("description re-encoded: %d bytes, want %d", got, want+15)
	}
	if sent.Bytes != reencoded.Bytes-15 {
		t.Errorf("tools array %d bytes as sent, %d re-encoded", sent.Bytes, reencoded.Bytes)
	}
}

// The name of every check with a limit is the key --limit takes for that
// limit: setting it below the measurement fails exactly the checks of that
// name.
func TestCheckNamesAreLimitKeys(t *testing.T) {
	l := testLimits()
	l.Results = map[string]budget.ResultLimits{"search": {TextMaxBytes: 1800, StructuredMaxBytes: 10000}, "aggregate": {TextMaxChars: 400}}
	calls := []budget.Call{
		{Seq: 1, Source: "c:1", Method: "tools/call", Tool: "search", Text: budget.TextSize{Bytes: 50}, Structured: budget.TextSize{Bytes: 70}},
		{Seq: 2, Source: "c:2", Method: "tools/call", Tool: "aggregate", Text: budget.TextSize{Chars: 30}},
	}
	all := func(l *budget.Limits) []budget.Check {
		return append(surfaceChecks(t, healthy(), l), budget.CheckResults(calls, l, false)...)
	}
	n := 0
	for _, c := range all(l) {
		if c.Kind != budget.AtMost {
			continue
		}
		n++
		low := *l
		low.ToolsList.ToolMaxBytes = maps.Clone(l.ToolsList.ToolMaxBytes)
		low.Results = maps.Clone(l.Results)
		if err := low.Set(c.Name, c.Measured-1); err != nil {
			t.Errorf("--limit does not take the check name %s: %v", c.Name, err)
			continue
		}
		for _, d := range all(&low) {
			if d.Name == c.Name && d.Subject == c.Subject && d.Pass {
				t.Errorf("%s (%s) still passes with %s=%d", d.Name, d.Subject, c.Name, c.Measured-1)
			}
		}
	}
	if n < 15 {
		t.Errorf("only %d limit checks", n)
	}
}

// Outside PDPP only the limits the file sets are checked, with portability
// and repeated prose always: no membership, instructions head or owner
// guidance, and none of the read surface's own schema rules.
func TestGenericSurfaceChecks(t *testing.T) {
	shared := "Results are paged; pass the cursor from the previous answer to read the next page of them."
	s := healthy()
	s.tools = append(s.tools, &mcp.Tool{Name: "extra", Description: "Owner token goes here. " + shared,
		InputSchema: input(`"connector_instance_id": {"type": "string"}, "filter": {"type": "string"}, "n": {"type": ["string", "number"]}`)})
	s.tool("search").Description += " " + shared
	s.instructions = ""
	l := &budget.Limits{Results: map[string]budget.ResultLimits{}}
	checks := surfaceChecks(t, s, l)
	var names []string
	for _, c := range checks {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"prose.repeated", "schema.portability"}, names); diff != "" {
		t.Errorf("checks without limits (-want +got):\n%s", diff)
	}
	port := find(t, checks, "schema.portability")
	if diff := cmp.Diff([]string{`extra input /properties/n: type ["string","number"] is a list; function declarations take one type (use anyOf)`}, port.Findings); diff != "" {
		t.Errorf("portability findings (-want +got):\n%s", diff)
	}
	prose := find(t, checks, "prose.repeated")
	if prose.Pass || len(prose.Findings) != 1 || !strings.Contains(prose.Findings[0], "in extra, search: ") {
		t.Errorf("prose %+v", prose)
	}

	// Tolerated findings pass; '*' bounds every tool without a limit.
	l.Prose.MaxRepeatedFindings, l.Schema.MaxPortabilityFindings = 1, 1
	l.ToolsList.ToolMaxBytes = map[string]int{budget.AnyTool: 1, "extra": 5000}
	checks = surfaceChecks(t, s, l)
	if c := find(t, checks, "prose.repeated"); !c.Pass || c.LimitKey() != "prose.max_repeated_findings" {
		t.Errorf("tolerated prose %+v", c)
	}
	var anyTool []string
	for _, c := range checks {
		if c.Name == "tools_list.tool_max_bytes.*" {
			anyTool = append(anyTool, c.Subject)
		}
	}
	if diff := cmp.Diff([]string{"aggregate", "fetch", "query_records", "read_record_field", "schema", "search"}, anyTool); diff != "" {
		t.Errorf("'*' applied to (-want +got):\n%s", diff)
	}
	if c := find(t, checks, "tools_list.tool_max_bytes.extra"); !c.Pass {
		t.Errorf("extra has its own limit: %+v", c)
	}
}
