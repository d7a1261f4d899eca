package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// argSpec validates the arguments of one tool against its input schema. The
// input schema is an object with properties, required and
// additionalProperties:false, so validating it is: no unknown keys, no missing
// required keys, and every present value valid against its property schema.
// Doing those steps one by one (rather than validating the whole object at
// once) lets the error name the argument and carry the right PDPP code.
type argSpec struct {
	tool   string
	schema *jsonschema.Schema
	// order is the documented property order, used in messages.
	order []string
	props map[string]*jsonschema.Resolved
	// selfChecked maps properties whose Go type validates itself while
	// decoding (filter, expand_limit) to the code of their errors. Their own
	// checks give more precise messages than a schema validator can.
	selfChecked map[string]string
}

// lazyArgSpec builds a tool's argSpec on its first call. Parsing and
// resolving the input schemas of all tools costs milliseconds of CPU, and
// start-up (initialize and tools/list, before any call) need not pay it.
type lazyArgSpec struct {
	get func() *argSpec
}

// newArgSpec returns the argument checker of a hand-written input schema,
// built on first use. Building panics on a malformed schema: schemas are
// constants, and TestArgSpecsBuild builds every tool's checker.
func newArgSpec(tool, schemaJSON string, selfChecked map[string]string) *lazyArgSpec {
	return &lazyArgSpec{get: sync.OnceValue(func() *argSpec { return buildArgSpec(tool, schemaJSON, selfChecked) })}
}

func (l *lazyArgSpec) decode(raw json.RawMessage, dst any) error { return l.get().decode(raw, dst) }

func buildArgSpec(tool, schemaJSON string, selfChecked map[string]string) *argSpec {
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(schemaJSON), &s); err != nil {
		panic(fmt.Sprintf("tools: %s input schema: %v", tool, err))
	}
	spec := &argSpec{tool: tool, schema: &s, props: map[string]*jsonschema.Resolved{}, selfChecked: selfChecked}
	gjson.Get(schemaJSON, "properties").ForEach(func(k, _ gjson.Result) bool {
		spec.order = append(spec.order, k.String())
		return true
	})
	for _, name := range spec.order {
		r, err := s.Properties[name].Resolve(nil)
		if err != nil {
			panic(fmt.Sprintf("tools: %s input schema, property %s: %v", tool, name, err))
		}
		spec.props[name] = r
	}
	for name := range selfChecked {
		if _, ok := spec.props[name]; !ok {
			panic(fmt.Sprintf("tools: %s: self-checked property %s is not in the schema", tool, name))
		}
	}
	// Every free-form string (or list of strings) must have a rule in
	// argKinds, so a new argument cannot skip the shared checks.
	for _, name := range spec.order {
		p := s.Properties[name]
		free := (p.Type == "string" && len(p.Enum) == 0) || (p.Type == "array" && p.Items != nil && p.Items.Type == "string")
		if free && argKinds[name] == kindNone {
			panic(fmt.Sprintf("tools: %s: argument %s has no rule in argKinds", tool, name))
		}
	}
	return spec
}

// decode validates raw (the tools/call arguments) and unmarshals it into dst.
// A JSON null value counts as an omitted argument: some hosts send null for
// every optional parameter they do not use.
func (s *argSpec) decode(raw json.RawMessage, dst any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if bytes.Contains(raw, []byte(visible.Open)) {
		var err error
		if raw, err = decodeMarks(raw); err != nil {
			return err
		}
	}
	fields, ok := objectMembers(raw)
	if !ok {
		if err := json.Unmarshal(raw, &fields); err != nil {
			return &toolError{Code: CodeInvalidArguments,
				Message: s.tool + " arguments must be a JSON object",
				Next:    "send the arguments as an object, e.g. " + s.example()}
		}
	}
	nulls := false
	for k, v := range fields {
		if string(bytes.TrimSpace(v)) == "null" {
			delete(fields, k)
			nulls = true
		}
	}

	var unknown []string
	for k := range fields {
		if _, ok := s.props[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return s.unknownArgument(unknown)
	}
	for _, k := range s.schema.Required {
		if _, ok := fields[k]; !ok {
			return &toolError{Code: CodeInvalidArguments, Param: k,
				Message: fmt.Sprintf("%s requires %s (%s)", s.tool, k, describe(s.schema.Properties[k])),
				Next:    "add " + k + " and call again"}
		}
	}
	for _, k := range s.order {
		v, ok := fields[k]
		if !ok {
			continue
		}
		if _, self := s.selfChecked[k]; self {
			continue
		}
		val, err := decodeValue(v)
		if err != nil {
			return s.invalid(k, v)
		}
		if err := s.props[k].Validate(val); err != nil {
			return s.invalid(k, v)
		}
		if err := checkArg(k, argKinds[k], val); err != nil {
			return err
		}
	}

	// Re-encode without the nulls so that dst sees omitted arguments as
	// zero values. Without nulls raw already is that object: every key in
	// it is an exact argument name (the check above refused the rest), so
	// encoding/json's case-insensitive matching finds nothing extra.
	clean := []byte(raw)
	if nulls {
		var err error
		if clean, err = json.Marshal(fields); err != nil {
			return fmt.Errorf("tools: re-encoding %s arguments: %w", s.tool, err)
		}
	}
	if err := json.Unmarshal(clean, dst); err != nil {
		var te *toolError
		if errors.As(err, &te) {
			return te
		}
		return &toolError{Code: CodeInvalidArguments, Message: fmt.Sprintf("%s arguments: %v", s.tool, err),
			Next: "match the tool's inputSchema and call again"}
	}
	return nil
}

// decodeMarks turns the visible rule's marks in every string of the
// arguments (member names included) back into the characters they stand
// for, so a name, id or value a tool showed with a mark reaches the RS as
// the RS wrote it. Arguments that are not a JSON object are returned as
// they are, for decode to refuse.
func decodeMarks(raw []byte) ([]byte, error) {
	var args map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if d.Decode(&args) != nil || args == nil {
		return raw, nil
	}
	for k, v := range args {
		dv, err := decodeMarksIn(v)
		if err != nil {
			return nil, &toolError{Code: CodeInvalidArguments, Param: k,
				Message: k + " " + err.Error(),
				Next:    "pass a value shown whole: for a record, its id or handle; for a field, read the record with fetch and take the name from there"}
		}
		args[k] = dv
	}
	out, err := jsonw.MarshalNoEscape(args)
	if err != nil {
		return nil, fmt.Errorf("tools: re-encoding arguments: %w", err)
	}
	return out, nil
}

// decodeMarksIn is decodeMarks of one value.
func decodeMarksIn(v any) (any, error) {
	switch v := v.(type) {
	case string:
		return visible.Decode(v)
	case []any:
		for i, e := range v {
			d, err := decodeMarksIn(e)
			if err != nil {
				return nil, err
			}
			v[i] = d
		}
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			dk, err := visible.Decode(k)
			if err != nil {
				return nil, err
			}
			if out[dk], err = decodeMarksIn(e); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return v, nil
}

// objectMembers reads the members of raw as json.Unmarshal into a
// map[string]json.RawMessage does, for the common case: a valid JSON object
// whose member names are plain ASCII without escapes (a later member of the
// same name replaces an earlier one, and values are the exact text of
// each). It reports false for anything else, which the caller then
// unmarshals. The values share raw's memory.
func objectMembers(raw []byte) (map[string]json.RawMessage, bool) {
	if !json.Valid(raw) {
		return nil, false
	}
	i := skipWhite(raw, 0)
	if raw[i] != '{' {
		return nil, false
	}
	fields := map[string]json.RawMessage{}
	i = skipWhite(raw, i+1)
	if raw[i] == '}' {
		return fields, true
	}
	for {
		// raw is valid JSON: a member name starts here.
		j := i + 1
		for raw[j] != '"' {
			if c := raw[j]; c == '\\' || c >= utf8.RuneSelf {
				return nil, false // encoding/json unescapes or repairs the name
			}
			j++
		}
		name := string(raw[i+1 : j])
		i = skipWhite(raw, j+1) + 1 // past the colon
		i = skipWhite(raw, i)
		end := skipValue(raw, i)
		fields[name] = raw[i:end:end]
		i = skipWhite(raw, end)
		if raw[i] == '}' {
			return fields, true
		}
		i = skipWhite(raw, i+1) // past the comma
	}
}

func skipWhite(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index after the value starting at b[i] of a valid
// JSON text.
func skipValue(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // the end of a number or literal closing the object
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i // the end of a number or literal
			}
		}
	}
	return i
}

// decodeValue is json.Unmarshal of v (one value of a valid JSON object)
// into an any. The plain string, number and boolean values most arguments
// are take a direct path that yields the same value: a string literal with
// no escapes, quotes or control characters and valid UTF-8 is its bytes, a
// number is strconv.ParseFloat of its text (as encoding/json reads it).
func decodeValue(v json.RawMessage) (any, error) {
	if n := len(v); n >= 2 && v[0] == '"' && v[n-1] == '"' {
		inner := v[1 : n-1]
		plain := utf8.Valid(inner)
		for _, c := range inner {
			if c == '"' || c == '\\' || c < ' ' {
				plain = false
				break
			}
		}
		if plain {
			return string(inner), nil
		}
	}
	switch string(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	if len(v) > 0 && (v[0] == '-' || v[0] >= '0' && v[0] <= '9') {
		if f, err := strconv.ParseFloat(string(v), 64); err == nil {
			return f, nil
		}
	}
	var val any
	err := json.Unmarshal(v, &val)
	return val, err
}

func (s *argSpec) invalid(name string, got json.RawMessage) error {
	code := CodeInvalidArguments
	if c, ok := s.selfChecked[name]; ok {
		code = c
	}
	return &toolError{Code: code, Param: name,
		Message: fmt.Sprintf("%s must be %s; got %s", name, describe(s.schema.Properties[name]), clip(string(got), 80)),
		Next:    "fix " + name + " and call again"}
}

func (s *argSpec) unknownArgument(unknown []string) error {
	first := unknown[0]
	msg := fmt.Sprintf("%s does not accept %s; accepted arguments: %s",
		s.tool, quoteList(unknown), strings.Join(s.order, ", "))
	switch {
	case strings.HasPrefix(first, "filter[") && s.props["filter"] != nil:
		return &toolError{Code: CodeInvalidFilter, Param: first, Message: msg,
			Next: `put filters in the filter object keyed by field name, e.g. filter: {"status": "paid"} or filter: {"created_at": {"gte": "2026-01-01"}}`}
	case strings.HasPrefix(first, "expand_limit[") && s.props["expand_limit"] != nil:
		return &toolError{Code: CodeInvalidExpand, Param: first, Message: msg,
			Next: `put caps in the expand_limit object keyed by relation, e.g. expand_limit: {"attachments": 3}`}
	}
	return &toolError{Code: CodeInvalidArguments, Param: first, Message: msg,
		Next: "drop the unknown argument and call again"}
}

// example renders the required arguments as a one-line JSON object.
func (s *argSpec) example() string {
	var parts []string
	for _, k := range s.schema.Required {
		parts = append(parts, strconv.Quote(k)+`: …`)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// describe says in a few words what a property schema accepts.
func describe(p *jsonschema.Schema) string {
	if p == nil {
		return "a value"
	}
	if len(p.Enum) > 0 {
		vals := make([]string, len(p.Enum))
		for i, v := range p.Enum {
			vals[i] = fmt.Sprint(v)
		}
		return "one of " + strings.Join(vals, ", ")
	}
	switch p.Type {
	case "integer":
		switch {
		case p.Minimum != nil && p.Maximum != nil:
			return fmt.Sprintf("an integer from %g to %g", *p.Minimum, *p.Maximum)
		case p.Minimum != nil:
			return fmt.Sprintf("an integer of at least %g", *p.Minimum)
		}
		return "an integer"
	case "string":
		if p.MinLength != nil && *p.MinLength > 0 {
			return "a non-empty string"
		}
		return "a string"
	case "array":
		if p.Items != nil && p.Items.Type == "string" {
			return "a non-empty array of non-empty strings"
		}
		return "an array"
	case "object":
		return "an object"
	case "boolean":
		return "true or false"
	}
	return "a valid value"
}

func quoteList(vals []string) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = quoteArg(v)
	}
	return strings.Join(q, ", ")
}

// clip shortens s to at most n runes, saying so with an ellipsis.
func clip(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
