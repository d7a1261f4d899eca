package probe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Kind says which MCP request a call makes.
type Kind int

const (
	// KindTool is tools/call.
	KindTool Kind = iota
	// KindListTools is tools/list.
	KindListTools
	// KindReadResource is resources/read.
	KindReadResource
)

// Method names a script may use besides tool names.
const (
	MethodListTools    = "tools/list"
	MethodReadResource = "resources/read"
	methodCallTool     = "tools/call"
)

// Call is one call of a script: a line of a script file or one --call flag.
type Call struct {
	// Source says where the call was written, for messages: "journey.probe:12"
	// or "--call 2".
	Source string
	// Text is the call as written, trimmed.
	Text string
	Kind Kind
	// Tool is the tool name (KindTool).
	Tool string
	// Args is the argument text as written (KindTool): a JSON object that may
	// hold $variable strings, or one bare $variable naming a whole argument
	// object. Empty means {}.
	Args string
	// URI is the resource URI as written (KindReadResource); it may hold
	// $variables.
	URI string
	// ExpectError marks a call written with a leading "!": the result must be
	// an error result (isError), and that error does not fail the run.
	ExpectError bool
	// Comment holds the comment lines right above the call in a script,
	// without their #, so a panel can say why the call is made.
	Comment []string
}

// Name is what the call asks for: the tool name, or the MCP method.
func (c Call) Name() string {
	switch c.Kind {
	case KindListTools:
		return MethodListTools
	case KindReadResource:
		return MethodReadResource
	}
	return c.Tool
}

// ScriptError is a call that could not be parsed.
type ScriptError struct {
	Source string // "file:line" or "--call N"
	Msg    string
}

func (e *ScriptError) Error() string { return e.Source + ": " + e.Msg }

// maxLine bounds one script line; arguments are small JSON objects.
const maxLine = 1 << 20

// ParseScript reads a script: one call per line, blank lines and lines whose
// first non-blank character is # ignored. name is used in error messages.
// Every line is checked before anything runs, and every problem is reported
// (joined with errors.Join), so a long script is fixed in one pass.
func ParseScript(name string, r io.Reader) ([]Call, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	var calls []Call
	var errs []error
	var comment []string
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if text, ok := strings.CutPrefix(line, "#"); ok {
			comment = append(comment, strings.TrimSpace(text))
			continue
		}
		c, ok, err := ParseCall(fmt.Sprintf("%s:%d", name, n), line)
		switch {
		case err != nil:
			errs = append(errs, err)
		case ok:
			c.Comment = comment
			calls = append(calls, c)
		}
		comment = nil // a blank line or a call ends a comment
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("a line is longer than %d bytes", maxLine)
		}
		errs = append(errs, fmt.Errorf("read %s: %w", name, err))
	}
	return calls, errors.Join(errs...)
}

// ParseCall parses one call. ok is false (and err nil) for a blank or comment
// line.
//
//	TOOL [{json arguments} | $variable]
//	!TOOL ...            the call must return isError
//	tools/list
//	resources/read URI
func ParseCall(source, line string) (c Call, ok bool, err error) {
	fail := func(format string, args ...any) (Call, bool, error) {
		return Call{}, false, &ScriptError{Source: source, Msg: fmt.Sprintf(format, args...)}
	}
	if !utf8.ValidString(line) {
		return fail("not valid UTF-8")
	}
	text := strings.TrimSpace(line)
	if text == "" || strings.HasPrefix(text, "#") {
		return Call{}, false, nil
	}
	c = Call{Source: source, Text: text}
	rest := text
	if r, found := strings.CutPrefix(rest, "!"); found {
		c.ExpectError = true
		rest = strings.TrimLeft(r, " \t")
	}
	name, rest, _ := strings.Cut(rest, " ")
	if i := strings.IndexByte(name, '\t'); i >= 0 { // a tab separates too
		name, rest = name[:i], name[i+1:]+" "+rest
	}
	rest = strings.TrimSpace(rest)
	switch {
	case name == "":
		return fail("missing tool name after !")
	case name == MethodListTools:
		c.Kind = KindListTools
		if c.ExpectError {
			return fail("! applies to tool calls only: tools/list has no isError result")
		}
		if rest != "" {
			return fail("tools/list takes no arguments, got %q", rest)
		}
		return c, true, nil
	case name == MethodReadResource:
		c.Kind = KindReadResource
		if c.ExpectError {
			return fail("! applies to tool calls only: resources/read has no isError result")
		}
		if rest == "" {
			return fail("resources/read needs a URI: resources/read pdpp://stream/NAME")
		}
		if strings.ContainsAny(rest, " \t") {
			return fail("resources/read takes one URI without spaces, got %q", rest)
		}
		if err := checkTemplate(rest, false); err != nil {
			return fail("resources/read %s: %v", rest, err)
		}
		c.URI = rest
		return c, true, nil
	case strings.Contains(name, "/"):
		return fail("unknown method %q: a line is a tool name, %s or %s URI", name, MethodListTools, MethodReadResource)
	}
	if err := checkToolName(name); err != nil {
		return fail("%v", err)
	}
	c.Kind, c.Tool = KindTool, name
	if rest == "" {
		return c, true, nil
	}
	if strings.HasPrefix(rest, "$") {
		if _, err := varName(rest); err != nil {
			return fail("%s arguments: %v", name, err)
		}
		c.Args = rest
		return c, true, nil
	}
	if err := checkArgs(rest); err != nil {
		return fail("%s arguments: %v", name, err)
	}
	c.Args = rest
	return c, true, nil
}

// checkToolName applies the MCP tool-name rule: 1 to 128 of A-Z a-z 0-9 _
// - . (what clients accept as a tool name), so a typo such as a stray quote
// is caught before the call.
func checkToolName(name string) error {
	if len(name) > 128 {
		return fmt.Errorf("tool name is %d characters long; MCP tool names have at most 128", len(name))
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return fmt.Errorf("tool name %q has %q; MCP tool names use A-Z a-z 0-9 _ - . only", name, r)
		}
	}
	return nil
}

// checkArgs accepts one JSON object, whose string values may be $variables.
func checkArgs(s string) error {
	if !strings.HasPrefix(s, "{") {
		return fmt.Errorf("want a JSON object {...} or a $variable, got %q", clip(s, 40))
	}
	dec := json.NewDecoder(strings.NewReader(s))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("invalid JSON: %v", err)
	}
	if tail := strings.TrimSpace(s[dec.InputOffset():]); tail != "" {
		return fmt.Errorf("unexpected text after the JSON object: %q (comments go on their own line, starting with #)", clip(tail, 40))
	}
	return checkTemplate(s, true)
}

// clip shortens s for a message.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// jsonStrings calls fn for every string literal of the valid JSON text s that
// is not an object key, with its byte span and decoded value. It stops at the
// first error fn returns.
func jsonStrings(s string, fn func(start, end int, value string) error) error {
	for i := 0; i < len(s); i++ {
		if s[i] != '"' {
			continue
		}
		end := i + 1
		for end < len(s) && s[end] != '"' {
			if s[end] == '\\' {
				end++
			}
			end++
		}
		end++ // past the closing quote
		j := end
		for j < len(s) && strings.IndexByte(" \t\r\n", s[j]) >= 0 {
			j++
		}
		if j < len(s) && s[j] == ':' { // an object key
			i = end - 1
			continue
		}
		var v string
		if err := json.Unmarshal([]byte(s[i:end]), &v); err != nil {
			return err
		}
		if err := fn(i, end, v); err != nil {
			return err
		}
		i = end - 1
	}
	return nil
}

// checkTemplate checks the $variables of an argument object (inJSON) or a
// URI: each must name a known variable.
func checkTemplate(s string, inJSON bool) error {
	if inJSON {
		return jsonStrings(s, func(_, _ int, v string) error {
			if strings.HasPrefix(v, "$") && !strings.HasPrefix(v, "$$") {
				_, err := varName(v)
				return err
			}
			return nil
		})
	}
	for _, ref := range uriRefs(s) {
		if _, err := varName(ref.text); err != nil {
			return err
		}
	}
	return nil
}

// compactJSON removes insignificant space, keeping key order.
func compactJSON(s string) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
