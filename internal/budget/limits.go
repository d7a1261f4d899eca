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
// Tool membership is not a limit and is not in the file: the six tools are
// the contract (see Surface), so widening the surface needs a code change
// here, not a one-line edit of a number.
type Limits struct {
	// Doc is free text for people reading the file (where the format is
	// documented, why a number is what it is). It is not checked.
	Doc string `json:"doc,omitempty"`

	ToolsList    ToolsListLimits         `json:"tools_list"`
	Instructions InstructionsLimits      `json:"instructions"`
	Prose        ProseLimits             `json:"prose"`
	Results      map[string]ResultLimits `json:"results"`
}

// ToolsListLimits bounds tools/list as a client receives it.
type ToolsListLimits struct {
	// MaxBytes bounds the compact JSON of the whole tools array.
	MaxBytes int `json:"max_bytes"`
	// ToolMaxBytes bounds each tool's compact JSON, by tool name. Every
	// tool of Surface needs an entry.
	ToolMaxBytes map[string]int `json:"tool_max_bytes"`
	// DescriptionMaxBytes bounds every tool's description (its JSON string,
	// quotes included).
	DescriptionMaxBytes int `json:"description_max_bytes"`
}

// InstructionsLimits bounds the server instructions sent at initialisation.
type InstructionsLimits struct {
	MaxBytes int `json:"max_bytes"`
	// HeadChars is how many leading characters must stand alone: some hosts
	// show or keep only that much.
	HeadChars int `json:"head_chars"`
}

// ProseLimits tunes the repeated-prose check.
type ProseLimits struct {
	// MinChars is the shortest phrase shared by two tools that counts as
	// repeated guidance.
	MinChars int `json:"min_chars"`
}

// ResultLimits bounds the results of one tool in the scenario. Zero means
// measured but not budgeted.
type ResultLimits struct {
	TextMaxBytes       int `json:"text_max_bytes,omitempty"`
	TextMaxChars       int `json:"text_max_chars,omitempty"`
	StructuredMaxBytes int `json:"structured_max_bytes,omitempty"`
}

// LoadLimits reads and validates a budget file.
func LoadLimits(path string) (*Limits, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("budget file: %w", err)
	}
	l, err := ParseLimits(b)
	if err != nil {
		return nil, fmt.Errorf("budget file %s: %w", path, err)
	}
	return l, nil
}

// ParseLimits decodes a budget file strictly (an unknown key is an error, so
// a misspelt limit cannot be silently ignored) and validates it.
func ParseLimits(b []byte) (*Limits, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var l Limits
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("decode: content after the top-level object")
	}
	if err := l.Validate(); err != nil {
		return nil, err
	}
	return &l, nil
}

// Validate reports the first problem that would make a check meaningless: a
// missing or negative limit, a per-tool limit for a tool outside Surface, or
// a Surface tool without one.
func (l *Limits) Validate() error {
	var errs []error
	positive := func(key string, v int) {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be a positive number, got %d", key, v))
		}
	}
	positive("tools_list.max_bytes", l.ToolsList.MaxBytes)
	positive("tools_list.description_max_bytes", l.ToolsList.DescriptionMaxBytes)
	positive("instructions.max_bytes", l.Instructions.MaxBytes)
	positive("instructions.head_chars", l.Instructions.HeadChars)
	positive("prose.min_chars", l.Prose.MinChars)
	for _, name := range surface {
		if _, ok := l.ToolsList.ToolMaxBytes[name]; !ok {
			errs = append(errs, fmt.Errorf("tools_list.tool_max_bytes has no entry for %s", name))
		}
	}
	for _, name := range sortedKeys(l.ToolsList.ToolMaxBytes) {
		if !slices.Contains(surface, name) {
			errs = append(errs, fmt.Errorf("tools_list.tool_max_bytes.%s: %s is not one of the tools (%s)", name, name, strings.Join(surface, ", ")))
			continue
		}
		positive("tools_list.tool_max_bytes."+name, l.ToolsList.ToolMaxBytes[name])
	}
	for _, name := range sortedKeys(l.Results) {
		r := l.Results[name]
		if !slices.Contains(surface, name) && name != "resources/read" {
			errs = append(errs, fmt.Errorf("results.%s: not a tool of the surface (%s) or resources/read", name, strings.Join(surface, ", ")))
			continue
		}
		for _, f := range []struct {
			key string
			v   int
		}{{"text_max_bytes", r.TextMaxBytes}, {"text_max_chars", r.TextMaxChars}, {"structured_max_bytes", r.StructuredMaxBytes}} {
			if f.v < 0 {
				errs = append(errs, fmt.Errorf("results.%s.%s must not be negative, got %d", name, f.key, f.v))
			}
		}
	}
	return errors.Join(errs...)
}

// Set overrides one limit by its dotted key, the path of the value in the
// budget file: tools_list.max_bytes, tools_list.tool_max_bytes.search,
// results.fetch.text_max_bytes, and so on. Validate afterwards.
func (l *Limits) Set(key string, value int) error {
	parts := strings.Split(key, ".")
	switch {
	case key == "tools_list.max_bytes":
		l.ToolsList.MaxBytes = value
	case key == "tools_list.description_max_bytes":
		l.ToolsList.DescriptionMaxBytes = value
	case key == "instructions.max_bytes":
		l.Instructions.MaxBytes = value
	case key == "instructions.head_chars":
		l.Instructions.HeadChars = value
	case key == "prose.min_chars":
		l.Prose.MinChars = value
	case len(parts) == 3 && parts[0] == "tools_list" && parts[1] == "tool_max_bytes":
		if l.ToolsList.ToolMaxBytes == nil {
			l.ToolsList.ToolMaxBytes = map[string]int{}
		}
		l.ToolsList.ToolMaxBytes[parts[2]] = value
	case len(parts) == 3 && parts[0] == "results" && parts[1] != "":
		r := l.Results[parts[1]]
		switch parts[2] {
		case "text_max_bytes":
			r.TextMaxBytes = value
		case "text_max_chars":
			r.TextMaxChars = value
		case "structured_max_bytes":
			r.StructuredMaxBytes = value
		default:
			return fmt.Errorf("unknown limit %q: results.<tool>. takes text_max_bytes, text_max_chars or structured_max_bytes", key)
		}
		if l.Results == nil {
			l.Results = map[string]ResultLimits{}
		}
		l.Results[parts[1]] = r
	default:
		return fmt.Errorf("unknown limit %q (see docs/budget.md for the keys)", key)
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
