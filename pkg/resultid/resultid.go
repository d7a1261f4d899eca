// Package resultid is the one parser and formatter for PDPP record ids.
//
// Every tool and resource that names a record goes through Parse, so a string
// either means exactly one (connection, stream, record) triple everywhere or is
// rejected everywhere, before any resource-server call. Three input forms are
// accepted:
//
//	cin_a/messages:m1              self-contained {connection_id}/{stream}:{record_id}
//	messages:m1                    legacy {stream}:{record_id} (no connection)
//	pdpp://record/{handle}         base64url JSON handle, or a URI-encoded textual id
//
// The textual grammar splits the connection at the first "/" and the stream at
// the first ":" after it; the record id is the remainder and may contain further
// ":". Segments may not be empty, equal "." or "..", contain "/" or "\", contain
// control characters or be invalid UTF-8. ".." inside a longer key ("john..doe")
// is an ordinary key.
//
// Record keys that contain "/" or "\" (URLs, file paths) and stream names that
// contain ":" cannot be written textually; the base64url handle carries them.
// ID.String picks the textual form when it parses back to the same value and
// can be copied out of text as one token (no whitespace, quotes, commas,
// brackets, no trailing punctuation), and the handle otherwise, so every valid
// record has a working id that survives extraction. Such keys reach the
// RS safely because callers escape every path segment (rs.Path does).
package resultid

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// RecordScheme prefixes record handles and URI-encoded ids.
const RecordScheme = "pdpp://record/"

// ID names one record: an optional connection, a stream and a record key.
// The zero ID is not a valid record id (IsZero reports it). Values obtained from
// Parse or New are always valid, so their String form always parses back.
type ID struct {
	connection string
	stream     string
	record     string
}

// New builds an ID from its parts. connectionID may be empty (a legacy id).
// The stream and connection follow the segment rules; the record key may
// contain "/" and "\" (it is then formatted as a handle).
func New(connectionID, stream, recordID string) (ID, error) {
	input := describeParts(connectionID, stream, recordID)
	if connectionID != "" {
		if p := checkSegment(connectionID, false); p != "" {
			return ID{}, invalidID(input, PartConnection, "the connection_id "+p)
		}
	}
	if p := checkSegment(stream, false); p != "" {
		return ID{}, invalidID(input, PartStream, "the stream "+p)
	}
	if p := checkSegment(recordID, true); p != "" {
		return ID{}, invalidID(input, PartRecord, "the record_id "+p)
	}
	return ID{connection: connectionID, stream: stream, record: recordID}, nil
}

// ConnectionID returns the embedded connection id ("" for a legacy id).
func (id ID) ConnectionID() string { return id.connection }

// Stream returns the stream name.
func (id ID) Stream() string { return id.stream }

// RecordID returns the record key, exactly as the RS spells it.
func (id ID) RecordID() string { return id.record }

// HasConnection reports whether the id embeds a connection.
func (id ID) HasConnection() bool { return id.connection != "" }

// IsZero reports whether id is the zero ID.
func (id ID) IsZero() bool { return id == ID{} }

// String returns the id a model should be shown and pass back: the textual form
// when it parses back to id and can be copied as one token, otherwise the
// pdpp://record/ handle. The zero ID formats as "".
func (id ID) String() string {
	if id.IsZero() {
		return ""
	}
	if t, ok := id.Text(); ok && copyable(t) {
		return t
	}
	return id.Handle()
}

// copyable reports whether a textual id survives being taken out of running
// text by a naive extractor: no whitespace (a tokenizer would split it), no
// quotes, commas, brackets, braces or other separators that surrounding text
// uses, and no trailing sentence punctuation a regex would leave behind. It
// must also show as it is: an id with a character a person cannot see would
// be shown with a mark (package visible), so it takes the handle, which
// spells every character.
func copyable(t string) bool {
	if !visible.Clean(t) {
		return false
	}
	for _, r := range t {
		if unicode.IsSpace(r) || strings.ContainsRune("\"'`,;|[](){}<>", r) {
			return false
		}
	}
	last, _ := utf8.DecodeLastRuneInString(t)
	return !strings.ContainsRune(".,;:!?", last)
}

// Text returns the textual form ({connection}/{stream}:{record} or
// {stream}:{record}) and whether it parses back to id. It does not when the
// record key contains "/" or "\", or the stream contains ":".
func (id ID) Text() (string, bool) {
	if id.IsZero() {
		return "", false
	}
	var t string
	if id.connection != "" {
		t = id.connection + "/" + id.stream + ":" + id.record
	} else {
		t = id.stream + ":" + id.record
	}
	back, err := parseText(t, t)
	return t, err == nil && back == id
}

// WithConnection returns id scoped to connectionID. An empty connectionID
// returns id unchanged. When id already embeds a different connection the
// result is a *Error with CodeConflictingConnection, so a caller never silently
// prefers one of two handles.
func (id ID) WithConnection(connectionID string) (ID, error) {
	switch {
	case connectionID == "" || connectionID == id.connection:
		return id, nil
	case id.connection != "":
		return ID{}, &Error{
			Code:  CodeConflictingConnection,
			Input: id.String(),
			Part:  PartConnection,
			Message: "id embeds connection_id '" + id.connection + "' but the connection_id argument is '" +
				connectionID + "'; pass the self-contained id alone, or make both handles agree",
		}
	}
	if p := checkSegment(connectionID, false); p != "" {
		return ID{}, invalidID(connectionID, PartConnection, "the connection_id argument "+p)
	}
	id.connection = connectionID
	return id, nil
}

// CheckConnectionID reports whether s can be the connection_id of an id (the
// segment rules above). The error is a *Error with CodeInvalidID and
// PartConnection.
func CheckConnectionID(s string) error {
	if p := checkSegment(s, false); p != "" {
		return &Error{Code: CodeInvalidID, Input: s, Part: PartConnection,
			Message: "connection_id " + quote(s) + " is not valid: it " + p + ". Pass a connection_id exactly as schema or an error's available_connections lists it."}
	}
	return nil
}

// Parse reads a record id in any accepted form. Every rejection is a *Error
// with CodeInvalidID that quotes the input and names the expected forms.
func Parse(s string) (ID, error) {
	if s == "" {
		return ID{}, invalidID(s, PartNone, "the id is empty")
	}
	if rest, ok := strings.CutPrefix(s, RecordScheme); ok {
		return parseRecordURI(s, rest)
	}
	return parseText(s, s)
}

// parseText applies the textual grammar to t; input is what the caller passed
// (the full URI for URI-encoded ids) and is only used in errors.
func parseText(input, t string) (ID, error) {
	var id ID
	rest := t
	if conn, after, found := strings.Cut(t, "/"); found {
		if p := checkSegment(conn, false); p != "" {
			return ID{}, invalidID(input, PartConnection, "the connection_id before the first \"/\" "+p)
		}
		if strings.Contains(after, "/") {
			return ID{}, invalidID(input, PartNone, "it has more than one \"/\"; only one separates connection_id from stream, and record keys containing \"/\" need a pdpp://record/ handle")
		}
		id.connection, rest = conn, after
	}
	stream, record, found := strings.Cut(rest, ":")
	if !found {
		return ID{}, invalidID(input, PartNone, "it has no \":\" between stream and record_id")
	}
	if p := checkSegment(stream, false); p != "" {
		return ID{}, invalidID(input, PartStream, "the stream "+p)
	}
	if p := checkSegment(record, false); p != "" {
		return ID{}, invalidID(input, PartRecord, "the record_id "+p)
	}
	id.stream, id.record = stream, record
	return id, nil
}

// checkSegment returns what is wrong with one id segment, or "" when it is
// valid. slashOK relaxes the "/" and "\" ban (record keys inside handles, which
// callers escape as path segments).
func checkSegment(s string, slashOK bool) string {
	switch {
	case s == "":
		return "is empty"
	case s == "." || s == "..":
		return "is " + quote(s) + ", a path traversal segment"
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	}
	for _, r := range s {
		switch {
		case unicode.IsControl(r):
			return "contains a control character"
		case !slashOK && (r == '/' || r == '\\'):
			return "contains " + quote(string(r))
		}
	}
	return ""
}

func describeParts(connection, stream, record string) string {
	if connection == "" {
		return stream + ":" + record
	}
	return connection + "/" + stream + ":" + record
}
