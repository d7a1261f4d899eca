package budget

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// A scenario is a probe-style script: one call per line.
//
//	# a comment; blank lines are skipped
//	schema {}
//	query_records {"stream": "mail_messages", "limit": 100}
//	query_records {"stream": "mail_messages", "cursor": "$next_cursor"}
//	resources/read pdpp://stream/mail_messages
//	tools/list
//
// A tool line is the tool name, then optionally one JSON object of
// arguments on the same line ({} when left out). Inside argument strings,
// $first_fetch_id, $next_cursor and $next_changes_since stand for the handle
// of that name in the model-visible text of the latest earlier result that
// carried one; $$ is a literal $.

// StepKind is what a scenario line asks for.
type StepKind string

const (
	StepTool      StepKind = "tools/call"
	StepRead      StepKind = "resources/read"
	StepListTools StepKind = "tools/list"
)

// Step is one line of a scenario.
type Step struct {
	Line int
	Kind StepKind
	Tool string         // StepTool
	Args map[string]any // StepTool; numbers are json.Number
	URI  string         // StepRead
}

// Scenario is a parsed script.
type Scenario struct {
	Name  string
	Steps []Step
}

// Variables are the handles a scenario may use, each read from result text
// as name=value or name="json string".
var Variables = []string{"first_fetch_id", "next_cursor", "next_changes_since"}

// ScenarioError is a line of a scenario that does not parse.
type ScenarioError struct {
	Name string
	Line int
	Msg  string
}

func (e *ScenarioError) Error() string { return fmt.Sprintf("%s:%d: %s", e.Name, e.Line, e.Msg) }

var toolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// ParseScenario parses a scenario; name labels errors.
func ParseScenario(name string, src []byte) (*Scenario, error) {
	sc := &Scenario{Name: name}
	s := bufio.NewScanner(bytes.NewReader(src))
	s.Buffer(nil, 1<<20)
	for n := 1; s.Scan(); n++ {
		line := strings.TrimSpace(s.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		step, err := parseStep(line)
		if err != nil {
			return nil, &ScenarioError{Name: name, Line: n, Msg: err.Error()}
		}
		step.Line = n
		sc.Steps = append(sc.Steps, step)
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(sc.Steps) == 0 {
		return nil, &ScenarioError{Name: name, Line: 1, Msg: "no calls: write one call per line, such as: schema {}"}
	}
	return sc, nil
}

func parseStep(line string) (Step, error) {
	head, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimSpace(rest)
	switch head {
	case string(StepListTools):
		if rest != "" {
			return Step{}, fmt.Errorf("tools/list takes no arguments, got %q", rest)
		}
		return Step{Kind: StepListTools}, nil
	case string(StepRead):
		if rest == "" || strings.ContainsAny(rest, " \t") {
			return Step{}, errors.New("resources/read takes one URI, such as: resources/read pdpp://stream/mail_messages")
		}
		return Step{Kind: StepRead, URI: rest}, nil
	}
	if !toolName.MatchString(head) {
		return Step{}, fmt.Errorf("%q is not a tool name (letters, digits, _ . and -), tools/list or resources/read", head)
	}
	args := map[string]any{}
	if rest != "" {
		dec := json.NewDecoder(strings.NewReader(rest))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil {
			return Step{}, fmt.Errorf("arguments of %s are not one JSON object: %v", head, err)
		}
		if args == nil {
			return Step{}, fmt.Errorf("arguments of %s are null; write {} or leave them out", head)
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return Step{}, fmt.Errorf("arguments of %s: text after the JSON object (one call per line)", head)
		}
	}
	if err := checkVariables(args); err != nil {
		return Step{}, err
	}
	return Step{Kind: StepTool, Tool: head, Args: args}, nil
}

// varRef matches $$ or $name in an argument string.
var varRef = regexp.MustCompile(`\$\$|\$[A-Za-z_][A-Za-z0-9_]*`)

func checkVariables(v any) error {
	var err error
	mapStrings(v, func(s string) string {
		for _, ref := range varRef.FindAllString(s, -1) {
			if ref != "$$" && !isVariable(ref[1:]) && err == nil {
				err = fmt.Errorf("unknown variable %s (known: $%s; write $$ for a literal $)", ref, strings.Join(Variables, ", $"))
			}
		}
		return s
	})
	return err
}

func isVariable(name string) bool {
	for _, v := range Variables {
		if v == name {
			return true
		}
	}
	return false
}

// mapStrings returns a copy of a decoded JSON value with f applied to every
// string value (keys are left alone).
func mapStrings(v any, f func(string) string) any {
	switch x := v.(type) {
	case string:
		return f(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = mapStrings(e, f)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = mapStrings(e, f)
		}
		return out
	}
	return v
}

// expand substitutes variables in a step's arguments, or names the first
// variable no earlier result has set.
func expand(args map[string]any, vars map[string]string) (map[string]any, error) {
	var missing string
	out := mapStrings(args, func(s string) string {
		return varRef.ReplaceAllStringFunc(s, func(ref string) string {
			if ref == "$$" {
				return "$"
			}
			v, ok := vars[ref[1:]]
			if !ok && missing == "" {
				missing = ref[1:]
			}
			return v
		})
	}).(map[string]any)
	if missing != "" {
		return nil, fmt.Errorf("$%s is not set: no earlier result's text carried %s", missing, missing)
	}
	return out, nil
}

// handleRefs find each variable's handle in result text: name= then a JSON
// string or a bare token (a trailing . , ; or ) is punctuation, not handle).
var handleRefs = func() map[string]*regexp.Regexp {
	m := map[string]*regexp.Regexp{}
	for _, v := range Variables {
		m[v] = regexp.MustCompile(`(?:^|[^A-Za-z0-9_])` + v + `=("(?:[^"\\]|\\.)*"|[^\s"]+)`)
	}
	return m
}()

// readHandles updates vars with the handles a result text carries.
func readHandles(text string, vars map[string]string) {
	for name, re := range handleRefs {
		m := re.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		v := m[1]
		if strings.HasPrefix(v, `"`) {
			if err := json.Unmarshal([]byte(v), &v); err != nil {
				continue // not a JSON string after all: no handle here
			}
		} else {
			v = strings.TrimRight(v, ".,;)")
		}
		if v != "" {
			vars[name] = v
		}
	}
}
