package budget

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Limits is the budget file: every number the checks compare against. The
// file format is documented in docs/budget.md; the repository's own limits
// live in budget.json at its root.
//
// Any MCP server can be budgeted: a limit that is absent (zero) is measured
// but not checked. PDPP marks a file for a PDPP read surface, which adds the
// PDPP checks (exact tool membership, owner-credential guidance, a
// self-contained instructions head) and makes the limits they need
// required; measuring pdpp-mcp itself implies it. Tool membership is not a
// limit: the six tools are the contract (see Surface), so widening the
// surface needs a code change here, not a one-line edit of a number.
type Limits struct {
	// Doc is free text for people reading the file (where the format is
	// documented, why a number is what it is). It is not checked.
	Doc string `json:"doc,omitempty"`
	// PDPP asks for the PDPP checks (see above).
	PDPP bool `json:"pdpp,omitempty"`

	ToolsList         ToolsListLimits         `json:"tools_list"`
	Instructions      InstructionsLimits      `json:"instructions"`
	ResourceTemplates ListLimits              `json:"resource_templates"`
	Prompts           ListLimits              `json:"prompts"`
	Prose             ProseLimits             `json:"prose"`
	Schema            SchemaLimits            `json:"schema"`
	Results           map[string]ResultLimits `json:"results"`
}

// AnyTool is the key of a per-tool limit that applies to every tool without
// one of its own: "*" can never be a tool name.
const AnyTool = "*"

// ToolsListLimits bounds tools/list as a client receives it.
type ToolsListLimits struct {
	// MaxBytes bounds the whole tools array as sent.
	MaxBytes int `json:"max_bytes"`
	// ToolMaxBytes bounds each tool's definition, by tool name; AnyTool
	// bounds the others. With PDPP, every tool of Surface needs an entry.
	ToolMaxBytes map[string]int `json:"tool_max_bytes"`
	// DescriptionMaxBytes bounds every tool's description (its JSON string,
	// quotes included).
	DescriptionMaxBytes int `json:"description_max_bytes"`
}

// InstructionsLimits bounds the server instructions sent at initialisation.
type InstructionsLimits struct {
	MaxBytes int `json:"max_bytes"`
	// HeadChars is how many leading characters must stand alone: some hosts
	// show or keep only that much (a PDPP check).
	HeadChars int `json:"head_chars"`
}

// ListLimits bounds a list a client reads at the start of a session
// (resource templates, prompts) as sent.
type ListLimits struct {
	MaxBytes int `json:"max_bytes,omitempty"`
}

// ProseLimits tunes the repeated-prose check.
type ProseLimits struct {
	// MinChars is the shortest phrase shared by two tools that counts as
	// repeated guidance (DefaultMinChars when absent, outside PDPP).
	MinChars int `json:"min_chars"`
	// MaxRepeatedFindings is how many repeated phrases are tolerated: a
	// server adopting the check can start at what it has and only go down.
	MaxRepeatedFindings int `json:"max_repeated_findings,omitempty"`
}

// DefaultMinChars is prose.min_chars when a file without PDPP leaves it out.
const DefaultMinChars = 60

// SchemaLimits tunes the schema portability check.
type SchemaLimits struct {
	// MaxPortabilityFindings is how many schema constructs strict clients
	// reject are tolerated.
	MaxPortabilityFindings int `json:"max_portability_findings,omitempty"`
}

// ResultLimits bounds the results of one tool in the scenario. Zero means
// measured but not budgeted.
type ResultLimits struct {
	TextMaxBytes       int `json:"text_max_bytes,omitempty"`
	TextMaxChars       int `json:"text_max_chars,omitempty"`
	StructuredMaxBytes int `json:"structured_max_bytes,omitempty"`
}

// LoadLimits reads and validates a budget file; pdpp applies the PDPP rules
// even when the file does not ask for them (the target is pdpp-mcp).
func LoadLimits(path string, pdpp bool) (*Limits, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("budget file: %w", err)
	}
	l, err := ParseLimitsFor(b, pdpp)
	if err != nil {
		return nil, fmt.Errorf("budget file %s: %w", path, err)
	}
	return l, nil
}

// ParseLimits decodes a budget file strictly (an unknown key is an error, so
// a misspelt limit cannot be silently ignored) and validates it, with the
// PDPP rules when it asks for them.
func ParseLimits(b []byte) (*Limits, error) { return ParseLimitsFor(b, false) }

// ParseLimitsFor is ParseLimits with the PDPP rules applied when pdpp is
// true, whatever the file says.
func ParseLimitsFor(b []byte, pdpp bool) (*Limits, error) {
	var l Limits
	if err := decodeStrict(b, &l); err != nil {
		return nil, err
	}
	l.PDPP = l.PDPP || pdpp
	if err := l.Validate(l.PDPP); err != nil {
		return nil, err
	}
	return &l, nil
}

// Validate reports every problem that would make a check meaningless: a
// negative limit or, with pdpp (the PDPP checks), a missing one, a per-tool
// limit for a tool outside Surface or a Surface tool without one.
func (l *Limits) Validate(pdpp bool) error {
	var errs []error
	limit := func(key string, v int, required bool) {
		switch {
		case v < 0:
			errs = append(errs, fmt.Errorf("%s must not be negative, got %d", key, v))
		case v == 0 && required:
			errs = append(errs, fmt.Errorf("%s must be a positive number, got %d", key, v))
		}
	}
	for _, n := range l.numbers() {
		limit(n.key, *n.v, pdpp && n.pdpp)
	}
	if !pdpp && l.Instructions.HeadChars != 0 {
		errs = append(errs, errors.New(`instructions.head_chars is a PDPP check: add "pdpp": true to the file, or leave it out`))
	}
	if pdpp {
		for _, name := range surface {
			if _, ok := l.ToolsList.ToolMaxBytes[name]; !ok {
				errs = append(errs, fmt.Errorf("tools_list.tool_max_bytes has no entry for %s", name))
			}
		}
	}
	for _, name := range sortedKeys(l.ToolsList.ToolMaxBytes) {
		if pdpp && !slices.Contains(surface, name) && name != AnyTool {
			errs = append(errs, fmt.Errorf("tools_list.tool_max_bytes.%s: %s is not one of the tools (%s)", name, name, strings.Join(surface, ", ")))
			continue
		}
		limit("tools_list.tool_max_bytes."+name, l.ToolsList.ToolMaxBytes[name], pdpp)
	}
	for _, name := range sortedKeys(l.Results) {
		r := l.Results[name]
		if name == "" || pdpp && !slices.Contains(surface, name) && name != "resources/read" && name != AnyTool {
			errs = append(errs, fmt.Errorf("results.%s: not a tool of the surface (%s), resources/read or %s", name, strings.Join(surface, ", "), AnyTool))
			continue
		}
		for _, f := range r.fields() {
			limit("results."+name+"."+f.key, *f.v, false)
		}
	}
	return errors.Join(errs...)
}

// number is a limit of the file that is one number: its dotted key (as
// Set and the messages name it), where it is held, and whether the PDPP
// checks need it.
type number struct {
	key  string
	v    *int
	pdpp bool
}

// numbers are l's limits that are one number each, in the order Validate
// reports them.
func (l *Limits) numbers() []number {
	return []number{
		{"tools_list.max_bytes", &l.ToolsList.MaxBytes, true},
		{"tools_list.description_max_bytes", &l.ToolsList.DescriptionMaxBytes, true},
		{"instructions.max_bytes", &l.Instructions.MaxBytes, true},
		{"instructions.head_chars", &l.Instructions.HeadChars, true},
		{"resource_templates.max_bytes", &l.ResourceTemplates.MaxBytes, false},
		{"prompts.max_bytes", &l.Prompts.MaxBytes, false},
		{"prose.min_chars", &l.Prose.MinChars, true},
		{"prose.max_repeated_findings", &l.Prose.MaxRepeatedFindings, false},
		{"schema.max_portability_findings", &l.Schema.MaxPortabilityFindings, false},
	}
}

// fields are r's limits, each by its key under results.<tool>.
func (r *ResultLimits) fields() []number {
	return []number{
		{"text_max_bytes", &r.TextMaxBytes, false},
		{"text_max_chars", &r.TextMaxChars, false},
		{"structured_max_bytes", &r.StructuredMaxBytes, false},
	}
}

// minChars is prose.min_chars, or its default.
func (l *Limits) minChars() int {
	if l.Prose.MinChars > 0 {
		return l.Prose.MinChars
	}
	return DefaultMinChars
}

// Set overrides one limit by its dotted key, the path of the value in the
// budget file: tools_list.max_bytes, tools_list.tool_max_bytes.search,
// results.fetch.text_max_bytes, and so on. A tool name may hold dots and
// spaces; it is what lies between the known parts. Validate afterwards.
func (l *Limits) Set(key string, value int) error {
	for _, n := range l.numbers() {
		if key == n.key {
			*n.v = value
			return nil
		}
	}
	tool, perTool := strings.CutPrefix(key, "tools_list.tool_max_bytes.")
	result, perResult := strings.CutPrefix(key, "results.")
	switch {
	case perTool && tool != "":
		if l.ToolsList.ToolMaxBytes == nil {
			l.ToolsList.ToolMaxBytes = map[string]int{}
		}
		l.ToolsList.ToolMaxBytes[tool] = value
		return nil
	case perResult && strings.Contains(result, "."):
		i := strings.LastIndexByte(result, '.')
		name, field := result[:i], result[i+1:]
		if name == "" {
			break
		}
		r := l.Results[name]
		for _, f := range r.fields() {
			if field == f.key {
				*f.v = value
				if l.Results == nil {
					l.Results = map[string]ResultLimits{}
				}
				l.Results[name] = r
				return nil
			}
		}
		return fmt.Errorf("unknown limit %q: results.<tool>. takes text_max_bytes, text_max_chars or structured_max_bytes", key)
	}
	return fmt.Errorf("unknown limit %q (see docs/budget.md for the keys)", key)
}

// decodeStrict decodes src, one JSON object, into v: an unknown key or
// anything after the object is an error, so a misspelt key or a file of
// another shape is refused rather than read wrongly.
func decodeStrict(src []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("decode: content after the top-level object")
	}
	return nil
}

// ParseOverride splits a KEY=N flag value.
func ParseOverride(s string) (key string, value int, err error) {
	key, v, ok := strings.Cut(s, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		return "", 0, fmt.Errorf("limit %q is not KEY=N", s)
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return "", 0, fmt.Errorf("limit %q: %q is not a whole number", s, v)
	}
	return key, n, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// LimitLines maps each key of a budget file (tools_list.max_bytes,
// results.search.text_max_bytes, …) to the 1-based line it is on, so an
// annotation can point at the limit a check failed. A file that is not JSON
// gives the keys read before the error.
func LimitLines(src []byte) map[string]int {
	lines := map[string]int{}
	dec := json.NewDecoder(bytes.NewReader(src))
	var walk func(prefix string) error
	walk = func(prefix string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := kt.(string)
				if prefix != "" {
					key = prefix + "." + key
				}
				lines[key] = 1 + bytes.Count(src[:dec.InputOffset()], []byte("\n"))
				if err := walk(key); err != nil {
					return err
				}
			}
		case json.Delim('['):
			for dec.More() {
				if err := walk(prefix); err != nil {
					return err
				}
			}
		default:
			return nil // a scalar
		}
		_, err = dec.Token() // the closing delimiter
		return err
	}
	_ = walk("") // what was read before an error is still worth pointing at
	return lines
}
