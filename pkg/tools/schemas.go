package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Schema fragments shared by several tools. They are spliced into each
// tool's input schema text, which stays readable as the JSON clients see.
// Cross-tool guidance lives in the server instructions, not here: every byte
// of these fragments is repeated once per tool in tools/list.
const (
	connectionIDProp = `{"type": "string", "minLength": 1, "description": "As schema lists it; never a grant_id."}`

	streamProp = `{"type": "string", "minLength": 1, "description": "Stream name from schema."}`

	limitProp = `{"type": "integer", "minimum": 1, "maximum": 100, "description": "Page size, 1-100 (RS default 25)."}`

	// filterProp advertises the typed filter. Values are checked by
	// parseFilter, which gives more precise errors than the schema can.
	filterProp = `{
   "type": "object",
   "minProperties": 1,
   "propertyNames": {"minLength": 1, "pattern": "^[^\\[\\]]+$"},
   "additionalProperties": {"anyOf": [
     {"type": "string"}, {"type": "number"}, {"type": "boolean"},
     {"type": "object", "minProperties": 1, "additionalProperties": false, "properties": {"gte": {"anyOf": [{"type": "string"}, {"type": "number"}]}, "gt": {"anyOf": [{"type": "string"}, {"type": "number"}]}, "lte": {"anyOf": [{"type": "string"}, {"type": "number"}]}, "lt": {"anyOf": [{"type": "string"}, {"type": "number"}]}}}
   ]},
   "description": "An object, never a string: {\"field\": value} exact, {\"field\": {\"gte\": v, \"lt\": v}} range; ANDed. Fields flagged eq or r in schema(stream)."
  }`
)

// readOutput is the output schema of the read tools that return an RS
// envelope. An error result's structuredContent is {"error": {...}} alone, so
// every output schema declares error and requires nothing: strict clients
// validate error results against it too.
const readOutput = `{
 "type": "object",
 "properties": {
  "data": {"type": "object"},
  "content_ladder": {"type": "object"},
  "provider_url": {"type": "string"},
  "request_id": {"type": "string"},
  "error": {"type": "object"}
 }
}`

// aggregateOutput is readOutput without the content ladder: aggregations
// have no record fields to read further.
const aggregateOutput = `{
 "type": "object",
 "properties": {
  "data": {"type": "object"},
  "provider_url": {"type": "string"},
  "request_id": {"type": "string"},
  "error": {"type": "object"}
 }
}`

const schemaOutput = `{
 "type": "object",
 "properties": {
  "data": {"type": "object"},
  "field_capability_legend": {"type": "object"},
  "omitted": {"type": "string"},
  "provider_url": {"type": "string"},
  "request_id": {"type": "string"},
  "error": {"type": "object"}
 }
}`

// mustSchema returns a hand-written schema compacted. The SDK gets the raw
// JSON rather than a *jsonschema.Schema: it re-encodes tool schemas when a
// tool is added and on every tools/list, and copying raw bytes is far cheaper
// than the reflective encoding of a Schema value. That keeps New (one server
// per hosted request) and tools/list cheap. Resolving the schemas is left to
// TestToolSchemasResolve: at start-up it would cost milliseconds.
func mustSchema(tool, text string) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(text)); err != nil {
		panic(fmt.Sprintf("tools: %s schema: %v", tool, err))
	}
	return b.Bytes()
}
