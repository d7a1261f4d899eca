package tools

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// Argument size limits. They bound what one call makes this server hold and
// forward, whatever the RS would accept; docs/tools.md lists them. An
// argument over a limit is refused with CodeArgumentTooLarge before any RS
// request.
const (
	// MaxNameBytes bounds a name: stream, streams items, connection_id,
	// field names (fields, field, group_by, sort, field_path, filter keys),
	// expand relations, view, time_zone.
	MaxNameBytes = 256
	// MaxQueryBytes bounds search text (q).
	MaxQueryBytes = 2048
	// MaxHandleBytes bounds opaque handles: id, record_id, cursor,
	// changes_since.
	MaxHandleBytes = 4096
	// MaxListItems bounds arrays (fields, expand, streams) and the entries
	// of filter and expand_limit.
	MaxListItems = 100
	// MaxFilterValueBytes bounds one filter value.
	MaxFilterValueBytes = 1024
)

// CodeArgumentTooLarge: an argument is over one of the limits above.
const CodeArgumentTooLarge = "argument_too_large"

// argKind is the rule one argument follows beyond its schema type. Every
// free-form string argument of every tool has one (newArgSpec enforces it),
// so an argument name means the same checks on all six tools.
type argKind int

const (
	// kindNone: an enum, number or boolean; the schema says everything.
	kindNone argKind = iota
	// kindSegment: a name that becomes a URL path segment or selects a
	// source (stream, connection_id): the name rule, and not ".", ".." and
	// no '/' or '\'.
	kindSegment
	// kindName: a field name, relation, view or time zone: the name rule.
	kindName
	// kindText: search text; bounded, valid UTF-8.
	kindText
	// kindHandle: a cursor or change token; bounded, no control
	// characters.
	kindHandle
	// kindID: a record id; bounded here, and its parser (resultid) checks
	// the rest with code invalid_id.
	kindID
	// kindSelf: filter and expand_limit, which check themselves while
	// decoding (filterArg, expandLimitArg) with the same name rule.
	kindSelf
)

// argKinds maps argument names to their rule. A list argument's items follow
// the rule of the list's name.
var argKinds = map[string]argKind{
	"stream": kindSegment, "streams": kindSegment, "connection_id": kindSegment,
	"field": kindName, "fields": kindName, "group_by": kindName, "group_by_time": kindName, "sort": kindName,
	"field_path": kindName, "expand": kindName, "view": kindName, "time_zone": kindName,
	"q":  kindText,
	"id": kindID, "record_id": kindID, "cursor": kindHandle, "changes_since": kindHandle,
	"filter": kindSelf, "expand_limit": kindSelf,
}

// checkArg applies param's rule to its decoded JSON value (a string, or a
// list of strings).
func checkArg(param string, kind argKind, v any) error {
	switch v := v.(type) {
	case string:
		return checkString(param, kind, v)
	case []any:
		if len(v) > MaxListItems {
			return tooLarge(param, fmt.Sprintf("%s has %d items; at most %d are accepted", param, len(v), MaxListItems))
		}
		for _, item := range v {
			if s, ok := item.(string); ok {
				if err := checkString(param, kind, s); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func checkString(param string, kind argKind, s string) error {
	switch kind {
	case kindSegment, kindName:
		return checkName(param, s, kind == kindSegment)
	case kindText:
		if len(s) > MaxQueryBytes {
			return tooLarge(param, fmt.Sprintf("%s is %d bytes; at most %d are accepted", param, len(s), MaxQueryBytes))
		}
		if !utf8.ValidString(s) {
			return invalidName(param, s, "is not valid UTF-8")
		}
	case kindID:
		if len(s) > MaxHandleBytes {
			return tooLarge(param, fmt.Sprintf("%s is %d bytes; at most %d are accepted", param, len(s), MaxHandleBytes))
		}
	case kindHandle:
		if len(s) > MaxHandleBytes {
			return tooLarge(param, fmt.Sprintf("%s is %d bytes; at most %d are accepted", param, len(s), MaxHandleBytes))
		}
		p := ""
		switch {
		case !utf8.ValidString(s):
			p = "is not valid UTF-8"
		case strings.ContainsFunc(s, unicode.IsControl):
			p = "contains a control character"
		}
		if p != "" {
			return &toolError{Code: CodeInvalidArguments, Param: param,
				Message: fmt.Sprintf("%s %s %s", param, quoteArg(s), p),
				Next:    "pass " + param + " exactly as a tool returned it"}
		}
	}
	return nil
}

// checkName is the one rule for names, on every tool: not empty, at most
// MaxNameBytes, valid UTF-8, no control characters (NUL, line feed, tab, …),
// no spaces around it; a path segment also may not be "." or ".." nor contain
// '/' or '\'. Names are rejected, never trimmed, so what the RS sees is what
// the caller sent.
func checkName(param, s string, segment bool) error {
	if len(s) > MaxNameBytes {
		return tooLarge(param, fmt.Sprintf("%s is %d bytes; names are at most %d", param, len(s), MaxNameBytes))
	}
	if p := nameProblem(s, segment); p != "" {
		return invalidName(param, s, p)
	}
	return nil
}

// nameProblem says what breaks the name rule, or "".
func nameProblem(s string, segment bool) string {
	switch {
	case s == "":
		return "is empty"
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	case strings.ContainsFunc(s, unicode.IsControl):
		return "contains a control character"
	case strings.TrimSpace(s) != s:
		return "has spaces around it"
	case segment && (s == "." || s == ".."):
		return "is a path traversal segment"
	case segment && strings.ContainsAny(s, `/\`):
		return "contains '/' or '\\'"
	}
	return ""
}

func invalidName(param, s, problem string) *toolError {
	what := "a name exactly as schema lists it"
	if param == "connection_id" {
		what = "a connection_id exactly as schema or an error's available_connections lists it"
	}
	return &toolError{Code: CodeInvalidArguments, Param: param,
		Message: fmt.Sprintf("%s %s %s", param, quoteArg(s), problem),
		Next:    "pass " + what}
}

func tooLarge(param, msg string) *toolError {
	return &toolError{Code: CodeArgumentTooLarge, Param: param, Message: msg,
		Next: "shorten " + param + " (the limits are in the tool documentation) and call again"}
}

// quoteArg shows a rejected value in a message, cut to a readable length.
// Characters a person cannot see stay for the visible rule to mark when the
// message is shown (visible.Quote).
func quoteArg(s string) string { return visible.Quote(clip(strings.ToValidUTF8(s, "\uFFFD"), 80)) }
