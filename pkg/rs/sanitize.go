package rs

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
	"github.com/pdpp-mcp/pdpp-mcp/internal/outbound"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// view returns b as a string without copying it. gjson parses strings, and
// gjson.ParseBytes copies the whole body first; with 16 MiB answers that copy
// is a large share of a call's memory. b must not change while the string or
// anything sliced from it is in use: RS bodies are never modified after
// they are read.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// MaxDepth bounds how deeply an RS body may nest arrays and objects. Real
// read envelopes nest fewer than 20 levels; the JSON parsers used downstream
// (and the SDK's encoder, which stops at 10,000) recurse per level, so a
// deeper body is refused before any of them sees it.
const MaxDepth = 64

// Bounds on strings taken from an error envelope. They keep a hostile or
// broken RS from filling the model's context with one message.
const (
	MaxMessageBytes    = 2048
	MaxIdentifierBytes = 128
	// MaxConnections bounds the available_connections kept from an error;
	// the rest are counted in Error.OmittedConnections.
	MaxConnections = 50
	// maxErrorObject bounds the raw error object kept in Error.Object.
	maxErrorObject = 16 << 10
)

// Bounds on what a read answer hands a client to pass back: every one must
// fit the argument a client sends it in, so an answer whose identifiers or
// continuation handles are longer is refused as rs_invalid_response rather
// than cut (a cut cursor or id is unusable) or shown whole (one of them could
// fill the model's context). A record id built from the longest parts still
// fits MaxHandleBytes, even as a pdpp://record/ handle.
const (
	// MaxNameBytes bounds a connection_id or stream name in an answer.
	MaxNameBytes = 256
	// MaxRecordKeyBytes bounds a record's key (a record's id, a search
	// hit's record_key).
	MaxRecordKeyBytes = 512
	// MaxHandleBytes bounds next_cursor and next_changes_since.
	MaxHandleBytes = 4096
)

// ErrTooDeep is returned by CheckDepth for a body nested deeper than allowed.
var ErrTooDeep = errors.New("JSON nested too deeply")

// CheckDepth reports ErrTooDeep when the JSON text b opens more than max
// arrays or objects without closing them. It does not validate b otherwise;
// it scans once, without recursion and without allocating, so it can run on
// any body before a recursive parser does.
func CheckDepth(b []byte, max int) error {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			// Skip the string: only an unescaped quote ends it.
			for i++; i < len(b); i++ {
				if b[i] == '\\' {
					i++
				} else if b[i] == '"' {
					break
				}
			}
		case '[', '{':
			depth++
			if depth > max {
				return ErrTooDeep
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}

// scanJSON reads b once, without recursion, and reports what
// gjson.ValidBytes(b) and CheckDepth(b, limit) != nil would: whether b is one
// valid JSON text, and whether it nests deeper than max (max <= MaxDepth).
// valid is false whenever tooDeep is true. A body is read by both on every
// call; one pass instead of two halves that work.
//
// longest is the length of the longest string literal in a valid b (keys
// included, quotes counted), so a check for over-long strings can be skipped
// when none can be.
func scanJSON(b []byte, limit int) (valid, tooDeep bool, longest int) {
	valid, tooDeep, ok, longest := scanValid(b, limit)
	if !ok {
		// Invalid JSON: the depth is CheckDepth's count of brackets outside
		// strings, which may go on past where the text stops being JSON.
		return false, CheckDepth(b, limit) != nil, 0
	}
	return valid, tooDeep, longest
}

// scanValid is scanJSON for the common case. ok is false when b is not
// valid JSON and nesting is left to CheckDepth; tooDeep is reported as soon
// as a valid prefix of b opens more than limit containers, where CheckDepth
// (which counts the same brackets) stops too.
func scanValid(b []byte, limit int) (valid, tooDeep, ok bool, longest int) {
	if limit > MaxDepth {
		return false, false, false, 0
	}
	var open [MaxDepth]byte // the open containers, '{' or '['
	depth := 0
	i := skipSpace(b, 0)
value:
	if i >= len(b) {
		return false, false, false, 0
	}
	switch c := b[i]; c {
	case '{', '[':
		if depth == limit {
			return false, true, true, 0
		}
		open[depth] = c
		depth++
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == c+2 { // '}' is '{'+2, ']' is '['+2
			depth--
			i++
			goto next
		}
		if c == '{' {
			goto member
		}
		goto value
	case '"':
		j := skipString(b, i+1)
		if j < 0 {
			return false, false, false, 0
		}
		longest, i = max(longest, j-i), j
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if i = skipNumber(b, i); i < 0 {
			return false, false, false, 0
		}
	case 't':
		if i = skipWord(b, i, "true"); i < 0 {
			return false, false, false, 0
		}
	case 'f':
		if i = skipWord(b, i, "false"); i < 0 {
			return false, false, false, 0
		}
	case 'n':
		if i = skipWord(b, i, "null"); i < 0 {
			return false, false, false, 0
		}
	default:
		return false, false, false, 0
	}
next:
	i = skipSpace(b, i)
	if depth == 0 {
		return i == len(b), false, i == len(b), longest
	}
	if i >= len(b) {
		return false, false, false, 0
	}
	switch b[i] {
	case ',':
		i = skipSpace(b, i+1)
		if open[depth-1] == '{' {
			goto member
		}
		goto value
	case open[depth-1] + 2:
		depth--
		i++
		goto next
	}
	return false, false, false, 0
member:
	if i >= len(b) || b[i] != '"' {
		return false, false, false, 0
	}
	j := skipString(b, i+1)
	if j < 0 {
		return false, false, false, 0
	}
	longest = max(longest, j-i)
	i = skipSpace(b, j)
	if i >= len(b) || b[i] != ':' {
		return false, false, false, 0
	}
	i = skipSpace(b, i+1)
	goto value
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the closing quote of the string whose
// contents start at b[i], or -1 when it is not a valid JSON string (a control
// character, a bad escape, no closing quote). Bytes from 0x80 up pass as
// they are: the body was made valid UTF-8 before.
func skipString(b []byte, i int) int {
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c < ' ':
			return -1
		case c == '\\':
			i++
			if i == len(b) {
				return -1
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
					return -1
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// skipNumber returns the index after the number starting at b[i], or -1.
func skipNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i == len(b) || b[i] < '0' || b[i] > '9':
		return -1
	case b[i] == '0':
		i++
	default:
		i = skipDigits(b, i)
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i == len(b) || b[i] < '0' || b[i] > '9' {
			return -1
		}
		i = skipDigits(b, i)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i == len(b) || b[i] < '0' || b[i] > '9' {
			return -1
		}
		i = skipDigits(b, i)
	}
	return i
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func skipWord(b []byte, i int, w string) int {
	if len(b)-i < len(w) || string(b[i:i+len(w)]) != w {
		return -1
	}
	return i + len(w)
}

const redacted = "[redacted]"

// redactedBody stands for a body that spells the token where it cannot be
// cut out: text that is not valid JSON.
const redactedBody = "[redacted: the answer spelled the bearer token]"

// redact removes the bearer from a body that can reach a result. The rule,
// for every string and byte that leaves the process from an RS answer:
//
//   - What is checked: the token as sent and URL-escaped, in the text as it
//     is and as a reader decodes it: JSON escapes, percent-encoding, both
//     (bearer.in). A header value is also read with its quoted-pairs undone,
//     and a blob's Content-Type with its parameters decoded as
//     mime.ParseMediaType decodes them (bearer.inMediaType).
//   - JSON answers: every JSON string whose decoded value spells the token
//     is rewritten (so the body stays valid JSON): its literal forms become
//     [redacted], and a string that still spells it once decoded (a
//     percent-encoded or doubly escaped echo) is replaced whole. A literal
//     occurrence left anywhere else (which only a token that looks like a
//     number or an escape sequence can produce) is replaced too, even if that
//     breaks the JSON: the answer is then refused as invalid rather than leak
//     the token.
//   - Other text (an HTML error page, JSON that is not valid): the literal
//     forms become [redacted]; text that still spells the token once decoded
//     is replaced whole by redactedBody (Client.get), as there is no string
//     to cut it from.
//   - Error strings and redirect targets: the same, per string (cleanString).
//   - Headers: a header whose name or value spells it is dropped from
//     Response.Header (bearer.scrubHeader).
//   - Blobs are refused, never altered: their bytes are the answer and its
//     sha256, and their Content-Type says what the bytes are. A blob whose
//     bytes or Content-Type spell the token is rs_invalid_response, whatever
//     its type: text is shown, JSON is decoded by whoever reads it, and any
//     other bytes reach the client base64-encoded, which the host decodes.
//
// The body is returned unchanged (not copied) when it holds none.
func redact(body []byte, tok string) []byte { return newBearer(tok).redact(body) }

func (k *bearer) redact(body []byte) []byte {
	if k == nil {
		return body
	}
	if looksJSON(body) {
		// Without a backslash, a string's value is its raw text: when the
		// body holds no form, only a percent-encoded one is left to find,
		// and without one either the passes below would find nothing.
		if bytes.IndexByte(body, '\\') < 0 && !containsAny(body, k.forms) &&
			!k.decodedIn(body) {
			return body
		}
		body = k.redactStrings(body)
	}
	for _, form := range k.forms {
		if bytes.Contains(body, form) {
			body = bytes.ReplaceAll(body, form, []byte(redacted))
		}
	}
	return body
}

// redactStrings rewrites every JSON string of body whose decoded value
// spells the token. It copies body only when it rewrites.
func (k *bearer) redactStrings(body []byte) []byte {
	var out []byte // nil until the first rewrite
	var scratch []byte
	last := 0 // body[:last] is already in out
	for i := 0; i < len(body); i++ {
		if body[i] != '"' {
			continue
		}
		start, escaped := i, false
		for i++; i < len(body); i++ {
			if body[i] == '\\' {
				escaped = true
				i++
			} else if body[i] == '"' {
				break
			}
		}
		if i >= len(body) {
			break // unterminated: the literal pass and Client.get cover it
		}
		raw := body[start+1 : i]
		decoded := raw
		if escaped {
			scratch = unescapeJSON(scratch[:0], raw)
			decoded = scratch
		}
		if !k.in(decoded) {
			continue
		}
		s := string(decoded)
		for _, f := range k.forms {
			s = strings.ReplaceAll(s, string(f), redacted)
		}
		if k.inString(s) {
			s = redacted
		}
		if out == nil {
			out = make([]byte, 0, len(body))
		}
		out = append(out, body[last:start]...)
		out = jsonw.AppendString(out, s)
		last = i + 1
	}
	if out == nil {
		return body
	}
	return append(out, body[last:]...)
}

// unescapeJSON appends the decoded form of the inside of a JSON string. It
// is lenient: a malformed escape is kept as written (unescapeOne).
func unescapeJSON(dst, s []byte) []byte {
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:i]...)
		var n int
		dst, n = unescapeOne(dst, s[i:])
		s = s[i+n:]
	}
	return dst
}

// validUTF8 replaces invalid UTF-8 with U+FFFD so no raw invalid byte from
// the RS reaches a result or the stdout frame. It copies only when needed.
func validUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	return bytes.ToValidUTF8(b, []byte("\uFFFD"))
}

// cleanString makes one string taken from the RS safe to repeat: token
// removed (its literal forms cut out, the whole string replaced when only a
// decoding spells it), valid UTF-8, and at most limit bytes with the cut
// stated.
func cleanString(s string, k *bearer, limit int) string {
	if k.inString(s) {
		for _, f := range k.forms {
			s = strings.ReplaceAll(s, string(f), redacted)
		}
		if k.inString(s) {
			s = redacted
		}
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return bound(s, limit)
}

// bound cuts s to at most limit bytes on a rune boundary and says so.
func bound(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + " … [cut at " + strconv.Itoa(cut) + " of " + strconv.Itoa(len(s)) + " bytes]"
}

// maxRequestID bounds a Request-Id worth repeating.
const maxRequestID = 128

// cleanRequestID keeps a request id only when it looks like one: short, of
// [A-Za-z0-9._:-], and not holding the token. Anything else is dropped, not
// cut, because a partial id helps nobody and a long one may carry data.
func cleanRequestID(s string, k *bearer) string {
	if s == "" || len(s) > maxRequestID || k.inString(s) {
		return ""
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '.' || c == '_' || c == ':' || c == '-'
		if !ok {
			return ""
		}
	}
	return s
}

// describeLocation renders a redirect target for an error message as every
// client of the process does (outbound.Location: no query, bounded), with
// the token taken out should it sit in the path.
func describeLocation(loc string, k *bearer) string {
	return visible.Quote(cleanString(outbound.Location(loc), k, 200))
}
