package resultid

import (
	"strconv"
	"unicode/utf8"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// Stable error codes. Tools put them in the typed error result unchanged.
const (
	// CodeInvalidID: a record id (textual or pdpp://record/) was rejected.
	CodeInvalidID = "invalid_id"
	// CodeInvalidResourceURI: a pdpp://field-window/ or pdpp://stream/ URI was rejected.
	CodeInvalidResourceURI = "invalid_resource_uri"
	// CodeConflictingConnection: an id embeds one connection and the
	// connection_id argument names another.
	CodeConflictingConnection = "conflicting_connection_id"
)

// Part names the piece of an id an error is about.
type Part string

// Parts of an id.
const (
	PartNone       Part = ""
	PartConnection Part = "connection_id"
	PartStream     Part = "stream"
	PartRecord     Part = "record_id"
	PartHandle     Part = "handle"
	PartField      Part = "field_path"
)

// expectedID is the sentence every invalid_id error ends with.
const expectedID = "Expected connection_id/stream:record_id (for example cin_a/messages:m1), " +
	"the legacy stream:record_id, or pdpp://record/<handle> exactly as a tool returned it."

// Error is a rejected id, handle or resource URI. Callers turn it into a typed
// isError tool result (Code, Message) before any RS call.
type Error struct {
	// Code is one of the Code* constants.
	Code string
	// Input is the rejected input, verbatim.
	Input string
	// Part is the segment at fault (PartNone when the shape is wrong).
	Part Part
	// Message is the complete, model-facing explanation: the input quoted, what
	// is wrong and what form is expected. A character of the input a person
	// cannot see is quoted as it is, for the visible rule to mark when the
	// message is shown (package visible).
	Message string
}

func (e *Error) Error() string { return e.Message }

func invalidID(input string, part Part, reason string) *Error {
	return &Error{
		Code:    CodeInvalidID,
		Input:   input,
		Part:    part,
		Message: "id " + quote(input) + " is not a valid record id: " + reason + ". " + expectedID,
	}
}

func invalidURI(input string, part Part, reason, expected string) *Error {
	return &Error{
		Code:    CodeInvalidResourceURI,
		Input:   input,
		Part:    part,
		Message: "resource URI " + quote(input) + " is not valid: " + reason + ". Expected " + expected + ".",
	}
}

// quoteLimit bounds how much of a rejected input an error message repeats.
const quoteLimit = 200

// quote renders s in double quotes (visible.Quote: a character a person
// cannot see is left for the visible rule to mark when the message is
// shown, never written as an escape a model would read). Inputs longer than
// quoteLimit characters are shortened, and the message says so.
func quote(s string) string {
	n := utf8.RuneCountInString(s)
	if n <= quoteLimit {
		return visible.Quote(s)
	}
	cut := 0
	for i := range s {
		if cut == quoteLimit-1 {
			return visible.Quote(s[:i]+"…") + " (first " + strconv.Itoa(quoteLimit-1) + " of " + strconv.Itoa(n) + " characters)"
		}
		cut++
	}
	return visible.Quote(s)
}
