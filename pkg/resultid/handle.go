package resultid

import (
	"bytes"
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonkeys"
	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
)

// Resource URI prefixes of the other two resource templates.
const (
	FieldWindowScheme = "pdpp://field-window/"
	StreamScheme      = "pdpp://stream/"
)

// handleVersion is the only handle version there is.
const handleVersion = "1"

// Handle returns the pdpp://record/ form of id: base64url (no padding) of
// {"v":1,"kind":"record","connection_id":…,"stream":…,"record_id":…} with the
// keys in that order. connection_id is left out for a legacy id.
func (id ID) Handle() string {
	var b bytes.Buffer
	b.WriteString(`{"v":1,"kind":"record"`)
	if id.connection != "" {
		writeMember(&b, "connection_id", id.connection)
	}
	writeMember(&b, "stream", id.stream)
	writeMember(&b, "record_id", id.record)
	b.WriteByte('}')
	return RecordScheme + base64.RawURLEncoding.EncodeToString(b.Bytes())
}

// parseRecordURI reads what follows pdpp://record/. A base64url-only rest is a
// JSON handle; anything else is a URI-encoded textual id. The two cannot be
// confused: every textual id contains ":" and an encoded one "%", neither of
// which is in the base64url alphabet.
func parseRecordURI(input, rest string) (ID, error) {
	if rest == "" {
		return ID{}, invalidID(input, PartHandle, "nothing follows "+RecordScheme)
	}
	if isBase64URL(rest) {
		raw, err := base64.RawURLEncoding.DecodeString(rest)
		if err != nil {
			return ID{}, invalidID(input, PartHandle, "the handle is not valid unpadded base64url")
		}
		f, reason := decodeHandle(raw, "record", recordKeys)
		if reason != "" {
			return ID{}, invalidID(input, PartHandle, reason)
		}
		id, part, reason := buildID(f)
		if reason != "" {
			return ID{}, invalidID(input, part, reason)
		}
		return id, nil
	}
	if trimmed := strings.TrimRight(rest, "="); trimmed != rest && trimmed != "" && isBase64URL(trimmed) {
		return ID{}, invalidID(input, PartHandle, "the handle ends in \"=\" padding; handles are unpadded base64url")
	}
	text, err := url.PathUnescape(rest)
	if err != nil {
		return ID{}, invalidID(input, PartHandle, "what follows "+RecordScheme+" is neither a base64url handle nor a URI-encoded id")
	}
	if strings.HasPrefix(text, RecordScheme) {
		return ID{}, invalidID(input, PartHandle, "it nests one pdpp://record/ URI inside another")
	}
	return parseText(input, text)
}

var recordKeys = map[string]bool{"v": true, "kind": true, "connection_id": true, "stream": true, "record_id": true}

// buildID validates the identity members of a decoded handle. On failure it
// returns the part at fault and why.
func buildID(f map[string]gjson.Result) (ID, Part, string) {
	var id ID
	if c, ok := f["connection_id"]; ok {
		if c.Type != gjson.String {
			return ID{}, PartConnection, "the handle's connection_id is not a string"
		}
		if p := checkSegment(c.Str, false); p != "" {
			return ID{}, PartConnection, "the handle's connection_id " + p
		}
		id.connection = c.Str
	}
	s, ok := f["stream"]
	if !ok || s.Type != gjson.String {
		return ID{}, PartStream, "the handle has no stream string"
	}
	if p := checkSegment(s.Str, false); p != "" {
		return ID{}, PartStream, "the handle's stream " + p
	}
	r, ok := f["record_id"]
	if !ok || r.Type != gjson.String {
		return ID{}, PartRecord, "the handle has no record_id string"
	}
	if p := checkSegment(r.Str, true); p != "" {
		return ID{}, PartRecord, "the handle's record_id " + p
	}
	id.stream, id.record = s.Str, r.Str
	return id, "", ""
}

// decodeHandle checks that raw is one JSON object of version 1 and the wanted
// kind with only allowed, non-repeated keys. It returns the members, or a reason.
func decodeHandle(raw []byte, kind string, allowed map[string]bool) (map[string]gjson.Result, string) {
	if !gjson.ValidBytes(raw) {
		return nil, "the handle does not decode to JSON"
	}
	doc := gjson.ParseBytes(raw)
	if !doc.IsObject() {
		return nil, "the handle does not decode to a JSON object"
	}
	f := map[string]gjson.Result{}
	if dup, repeated := jsonkeys.Each(doc, func(k string, v gjson.Result) { f[k] = v }); repeated {
		return nil, "the handle repeats the key " + quote(dup)
	}
	if v := f["v"]; v.Type != gjson.Number || v.Raw != handleVersion {
		return nil, "the handle has the wrong version (want v 1)"
	}
	if k := f["kind"]; k.Type != gjson.String || k.Str != kind {
		return nil, "the handle has the wrong kind (want " + strconv.Quote(kind) + ")"
	}
	for k := range f {
		if !allowed[k] {
			return nil, "the handle has the unknown key " + quote(k)
		}
	}
	return f, ""
}

// FieldWindow is the decoded payload of a pdpp://field-window/ handle: one
// record field plus the read_record_field selector. Optional numbers are nil
// when absent. The selector rules (cursor exclusive with offset_chars, q with
// both, before/after only with q) belong to read_record_field, which applies
// them to handles and tool arguments alike; this package checks types only.
type FieldWindow struct {
	Record      ID
	FieldPath   string
	Cursor      string
	OffsetChars *int
	LimitChars  *int
	Q           string
	BeforeChars *int
	AfterChars  *int
}

var fieldWindowKeys = map[string]bool{
	"v": true, "kind": true, "connection_id": true, "stream": true, "record_id": true,
	"field_path": true, "cursor": true, "offset_chars": true, "limit_chars": true,
	"q": true, "before_chars": true, "after_chars": true,
}

// URI encodes w as pdpp://field-window/{handle}: base64url (no padding) of
// {"v":1,"kind":"field-window","connection_id","stream","record_id","field_path",
// "cursor","offset_chars","limit_chars","q","before_chars","after_chars"} in that
// key order, absent members left out.
func (w FieldWindow) URI() (string, error) {
	if err := w.validate(""); err != nil {
		return "", err
	}
	var b bytes.Buffer
	b.WriteString(`{"v":1,"kind":"field-window"`)
	if w.Record.connection != "" {
		writeMember(&b, "connection_id", w.Record.connection)
	}
	writeMember(&b, "stream", w.Record.stream)
	writeMember(&b, "record_id", w.Record.record)
	writeMember(&b, "field_path", w.FieldPath)
	if w.Cursor != "" {
		writeMember(&b, "cursor", w.Cursor)
	}
	writeInt(&b, "offset_chars", w.OffsetChars)
	writeInt(&b, "limit_chars", w.LimitChars)
	if w.Q != "" {
		writeMember(&b, "q", w.Q)
	}
	writeInt(&b, "before_chars", w.BeforeChars)
	writeInt(&b, "after_chars", w.AfterChars)
	b.WriteByte('}')
	return FieldWindowScheme + base64.RawURLEncoding.EncodeToString(b.Bytes()), nil
}

const expectedFieldWindow = "pdpp://field-window/<handle>, the handle being unpadded base64url of " +
	`{"v":1,"kind":"field-window","connection_id":…,"stream":…,"record_id":…,"field_path":…}`

// ParseFieldWindowURI decodes a pdpp://field-window/{handle} URI.
func ParseFieldWindowURI(uri string) (FieldWindow, error) {
	rest, ok := strings.CutPrefix(uri, FieldWindowScheme)
	if !ok || rest == "" || !isBase64URL(rest) {
		return FieldWindow{}, invalidURI(uri, PartHandle, "it does not match pdpp://field-window/{handle}", expectedFieldWindow)
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return FieldWindow{}, invalidURI(uri, PartHandle, "the handle is not valid unpadded base64url", expectedFieldWindow)
	}
	f, reason := decodeHandle(raw, "field-window", fieldWindowKeys)
	if reason != "" {
		return FieldWindow{}, invalidURI(uri, PartHandle, reason, expectedFieldWindow)
	}
	id, part, reason := buildID(f)
	if reason != "" {
		return FieldWindow{}, invalidURI(uri, part, reason, expectedFieldWindow)
	}
	m := members{f: f}
	w := FieldWindow{
		Record:      id,
		FieldPath:   m.str("field_path"),
		Cursor:      m.str("cursor"),
		OffsetChars: m.int("offset_chars"),
		LimitChars:  m.int("limit_chars"),
		Q:           m.str("q"),
		BeforeChars: m.int("before_chars"),
		AfterChars:  m.int("after_chars"),
	}
	if m.bad != "" {
		return FieldWindow{}, invalidURI(uri, PartHandle, m.bad, expectedFieldWindow)
	}
	if err := w.validate(uri); err != nil {
		return FieldWindow{}, err
	}
	return w, nil
}

func (w FieldWindow) validate(input string) error {
	if input == "" {
		input = FieldWindowScheme + "…"
	}
	if w.Record.IsZero() {
		return invalidURI(input, PartHandle, "the field window names no record", expectedFieldWindow)
	}
	if w.FieldPath == "" {
		return invalidURI(input, PartField, "the field window has no field_path", expectedFieldWindow)
	}
	if p := checkSegment(w.FieldPath, true); p != "" {
		return invalidURI(input, PartField, "the field_path "+p, expectedFieldWindow)
	}
	for _, n := range []struct {
		name string
		v    *int
		min  int
	}{{"offset_chars", w.OffsetChars, 0}, {"limit_chars", w.LimitChars, 1}, {"before_chars", w.BeforeChars, 0}, {"after_chars", w.AfterChars, 0}} {
		if n.v != nil && *n.v < n.min {
			return invalidURI(input, PartHandle, n.name+" is below "+strconv.Itoa(n.min), expectedFieldWindow)
		}
	}
	if !utf8.ValidString(w.Cursor) || !utf8.ValidString(w.Q) {
		return invalidURI(input, PartHandle, "the cursor or q is not valid UTF-8", expectedFieldWindow)
	}
	return nil
}

// members reads optional typed members of a decoded handle, remembering the
// first problem.
type members struct {
	f   map[string]gjson.Result
	bad string
}

func (m *members) str(key string) string {
	v, ok := m.f[key]
	if !ok || m.bad != "" {
		return ""
	}
	if v.Type != gjson.String {
		m.bad = "the handle's " + key + " is not a string"
		return ""
	}
	return v.Str
}

func (m *members) int(key string) *int {
	v, ok := m.f[key]
	if !ok || m.bad != "" {
		return nil
	}
	n, err := strconv.Atoi(v.Raw)
	if v.Type != gjson.Number || !isDigits(v.Raw) || err != nil {
		m.bad = "the handle's " + key + " is not a non-negative integer"
		return nil
	}
	return &n
}

// StreamURI returns pdpp://stream/{name} with the name escaped as a path segment.
func StreamURI(name string) string { return StreamScheme + url.PathEscape(name) }

// StreamRef is the {name} of pdpp://stream/{name} for a stream read under
// one connection: connection_id/name, which the URI carries escaped
// (cin_a%2Fmessages). A grant that holds a stream under several connections
// can only read its metadata for one of them.
func StreamRef(connectionID, name string) string {
	if connectionID == "" {
		return name
	}
	return connectionID + "/" + name
}

// ParseStreamRefURI returns the connection ("" when the URI names none) and
// stream name of a pdpp://stream/{name} URI whose name may be
// connection_id/name.
func ParseStreamRefURI(uri string) (connectionID, name string, err error) {
	const expected = "pdpp://stream/<stream name> or pdpp://stream/<connection_id>%2F<stream name>"
	rest, ok := strings.CutPrefix(uri, StreamScheme)
	if !ok || rest == "" || strings.Contains(rest, "/") {
		return "", "", invalidURI(uri, PartStream, "it does not match pdpp://stream/{name}", expected)
	}
	ref, err := url.PathUnescape(rest)
	if err != nil {
		return "", "", invalidURI(uri, PartStream, "the stream name is not validly URI-encoded", expected)
	}
	if c, n, found := strings.Cut(ref, "/"); found {
		if p := checkSegment(c, false); p != "" {
			return "", "", invalidURI(uri, PartConnection, "the connection_id "+p, expected)
		}
		connectionID, ref = c, n
	}
	if p := checkSegment(ref, false); p != "" {
		return "", "", invalidURI(uri, PartStream, "the stream name "+p, expected)
	}
	return connectionID, ref, nil
}

// ParseStreamURI returns the stream name of a pdpp://stream/{name} URI. The
// name is URI-decoded and follows the segment rules.
func ParseStreamURI(uri string) (string, error) {
	const expected = "pdpp://stream/<stream name>"
	rest, ok := strings.CutPrefix(uri, StreamScheme)
	if !ok || rest == "" {
		return "", invalidURI(uri, PartStream, "it does not match pdpp://stream/{name}", expected)
	}
	name, err := url.PathUnescape(rest)
	if err != nil {
		return "", invalidURI(uri, PartStream, "the stream name is not validly URI-encoded", expected)
	}
	if p := checkSegment(name, false); p != "" {
		return "", invalidURI(uri, PartStream, "the stream name "+p, expected)
	}
	return name, nil
}

func isBase64URL(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// writeMember appends ,"key":"value" with value JSON-escaped (HTML left alone,
// so handles match what a JavaScript JSON.stringify would produce).
func writeMember(b *bytes.Buffer, key, value string) {
	b.WriteString(`,"`)
	b.WriteString(key)
	b.WriteString(`":`)
	b.Write(jsonw.AppendString(nil, value))
}

func writeInt(b *bytes.Buffer, key string, v *int) {
	if v == nil {
		return
	}
	b.WriteString(`,"`)
	b.WriteString(key)
	b.WriteString(`":`)
	b.WriteString(strconv.Itoa(*v))
}
