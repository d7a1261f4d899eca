package budget

import (
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
)

// A tool's schemas, as the client decoded them, are plain JSON values:
// map[string]any for a schema object. The walk below visits every subschema
// with its JSON Pointer.

// schemaMaps and schemaLists are the keywords whose values hold subschemas:
// by name, or in a list.
var (
	schemaMaps  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
	schemaLists = []string{"anyOf", "oneOf", "allOf", "prefixItems"}
	schemaOne   = []string{"additionalProperties", "items", "not", "propertyNames", "contains", "if", "then", "else", "unevaluatedProperties", "unevaluatedItems"}
)

// walkSchema calls visit for v and every subschema below it, depth first in
// a fixed order (map keys sorted), so findings come out the same every run.
func walkSchema(v any, ptr string, visit func(ptr string, m map[string]any)) {
	m, ok := v.(map[string]any)
	if !ok {
		return // true/false schemas and malformed values have nothing below
	}
	visit(ptr, m)
	for _, k := range schemaMaps {
		sub, _ := m[k].(map[string]any)
		for _, name := range sortedKeys(sub) {
			walkSchema(sub[name], ptr+"/"+k+"/"+pointerEscape(name), visit)
		}
	}
	for _, k := range schemaLists {
		list, _ := m[k].([]any)
		for i, s := range list {
			walkSchema(s, fmt.Sprintf("%s/%s/%d", ptr, k, i), visit)
		}
	}
	for _, k := range schemaOne {
		if list, ok := m[k].([]any); ok && k == "items" { // draft-04 tuple items
			for i, s := range list {
				walkSchema(s, fmt.Sprintf("%s/items/%d", ptr, i), visit)
			}
			continue
		}
		walkSchema(m[k], ptr+"/"+k, visit)
	}
}

func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// toolSchemas names a tool's schemas for findings.
func toolSchemas(t *mcp.Tool) []struct {
	name   string
	schema any
} {
	return []struct {
		name   string
		schema any
	}{{"input", t.InputSchema}, {"output", t.OutputSchema}}
}

type located struct{ where, text string }

// schemaDescriptions returns every description string in a tool's schemas.
func schemaDescriptions(t *mcp.Tool) []located {
	var out []located
	for _, s := range toolSchemas(t) {
		walkSchema(s.schema, "", func(ptr string, m map[string]any) {
			if d, ok := m["description"].(string); ok && d != "" {
				out = append(out, located{where: s.name + " " + orRoot(ptr) + " description", text: d})
			}
		})
	}
	return out
}

func orRoot(ptr string) string {
	if ptr == "" {
		return "/"
	}
	return ptr
}

// typed reports whether a schema declares what type its values have: a type
// keyword, or alternatives that each do.
func typed(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	switch t := m["type"].(type) {
	case string:
		return t != ""
	case []any:
		return len(t) > 0
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := m[k].([]any); ok && len(alts) > 0 {
			return !slices.ContainsFunc(alts, func(a any) bool { return !typed(a) })
		}
	}
	return false
}

// portability lists what strict clients (OpenAI-style strict schemas,
// Gemini function declarations, older validators, hosts that render forms
// from the schema) reject or misread; pdpp adds the read surface's own
// rules on filter and connector_instance_id.
func portability(t *mcp.Tool, pdpp bool) []string {
	var out []string
	add := func(format string, args ...any) {
		out = append(out, t.Name+" "+fmt.Sprintf(format, args...))
	}
	for _, s := range toolSchemas(t) {
		if s.schema == nil {
			if s.name == "input" {
				add("input: no schema")
			}
			continue
		}
		top, ok := s.schema.(map[string]any)
		if !ok {
			add("%s: schema is %T, not an object schema", s.name, s.schema)
			continue
		}
		if top["type"] != "object" {
			add("%s /: type is %s, want \"object\"", s.name, compactJSON(top["type"]))
		}
		for _, k := range []string{"anyOf", "oneOf", "allOf", "not"} {
			if _, ok := top[k]; ok {
				add("%s /: top-level %s; strict clients need a plain object schema", s.name, k)
			}
		}
		walkSchema(top, "", func(ptr string, m map[string]any) {
			if list, ok := m["type"].([]any); ok && slices.Contains(list, any("null")) {
				add("%s %s: type %s is a null union; leave the property optional instead", s.name, orRoot(ptr), compactJSON(list))
			} else if ok && len(list) > 1 {
				add("%s %s: type %s is a list; function declarations take one type (use anyOf)", s.name, orRoot(ptr), compactJSON(list))
			}
			props, _ := m["properties"].(map[string]any)
			for _, name := range sortedKeys(props) {
				p := ptr + "/properties/" + pointerEscape(name)
				if !typed(props[name]) {
					add("%s %s: property has no type", s.name, p)
				}
				if pdpp && s.name == "input" && name == "connector_instance_id" {
					add("input %s: connector_instance_id is not an input; connection_id selects a source", p)
				}
			}
		})
		if pdpp && s.name == "input" {
			props, _ := top["properties"].(map[string]any)
			if f, ok := props["filter"]; ok {
				if fm, _ := f.(map[string]any); fm == nil || fm["type"] != "object" {
					add("input /properties/filter: filter must be advertised as an object (typed filter), got type %s", compactJSON(typeOf(f)))
				}
			}
		}
	}
	return out
}

func typeOf(v any) any {
	if m, ok := v.(map[string]any); ok {
		return m["type"]
	}
	return nil
}

func checkPortability(tools []*mcp.Tool, l *Limits) Check {
	var found []string
	for _, t := range tools {
		found = append(found, portability(t, l.PDPP)...)
	}
	return tolerated("schema.portability", "schema.max_portability_findings", "findings", found, l.Schema.MaxPortabilityFindings,
		fmt.Sprintf("%d schema construct(s) that strict clients reject or misread", len(found)))
}

// compactJSON shows a decoded JSON value in findings; a missing one is
// "none".
func compactJSON(v any) string {
	if v == nil {
		return "none"
	}
	return jsonw.Compact(v)
}
