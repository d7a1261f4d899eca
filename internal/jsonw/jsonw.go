// Package jsonw holds the JSON text helpers several packages need to write
// JSON by hand (to keep a source document's key order, or to build handles
// and results byte for byte): one string escaper, in two modes (the
// project's, which leaves HTML characters alone, and encoding/json's exact
// rules for output that must match it), one compact encoder and one array
// joiner, so every writer escapes and joins the same way.
package jsonw

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// AppendString appends s as a JSON string. Unlike encoding/json it leaves <,
// > and & alone (the text is read by models and people, not embedded in
// HTML), as JavaScript's JSON.stringify does; control characters are escaped
// and invalid UTF-8 becomes U+FFFD.
func AppendString(b []byte, s string) []byte { return appendString(b, s, false) }

// AppendMarshalString appends s exactly as encoding/json's Marshal writes a
// string, for output that must match that encoder byte for byte: <, > and &
// become \u003c, \u003e and \u0026, \b and \f are escaped by name, U+2028
// and U+2029 are escaped, and invalid UTF-8 becomes U+FFFD.
func AppendMarshalString(b []byte, s string) []byte { return appendString(b, s, true) }

// escapeASCII says which ASCII bytes each mode escapes: [0] for AppendString,
// [1] for AppendMarshalString.
var escapeASCII = func() (t [2][utf8.RuneSelf]bool) {
	for c := range utf8.RuneSelf {
		plain := c < 0x20 || c == '"' || c == '\\'
		t[0][c] = plain
		t[1][c] = plain || c == '<' || c == '>' || c == '&'
	}
	return t
}()

func appendString(b []byte, s string, marshal bool) []byte {
	esc := &escapeASCII[0]
	if marshal {
		esc = &escapeASCII[1]
	}
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if !esc[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case marshal && c == '\b':
				b = append(b, '\\', 'b')
			case marshal && c == '\f':
				b = append(b, '\\', 'f')
			default: // other control characters, and <, > and & when marshalling
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if marshal && (r == '\u2028' || r == '\u2029') {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// String is s as a JSON string literal (see AppendString).
func String(s string) string { return string(AppendString(nil, s)) }

// MarshalNoEscape encodes v as the SDK's JSON-RPC layer writes messages:
// encoding/json's Encoder without HTML escaping, without its newline.
func MarshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}

// Compact is v encoded as one line of JSON without HTML escaping, for values
// shown in text; a value that cannot be encoded is "null".
func Compact(v any) string {
	b, err := MarshalNoEscape(v)
	if err != nil {
		return "null"
	}
	return string(b)
}

// Twice encodes v once and returns it both ways: as Compact writes it (the
// text shown to models and people) and as json.Marshal writes it (the
// structured copy). The second is derived from the first by AppendRaw,
// which escapes exactly what SetEscapeHTML(false) leaves alone: <, > and &
// in strings, and U+2028/U+2029 that a MarshalJSON method wrote raw.
func Twice(v any) (string, Encoded, error) {
	text, err := MarshalNoEscape(v)
	if err != nil {
		return "", nil, err
	}
	m, err := AppendRaw(make([]byte, 0, len(text)+len(text)/16), text)
	if err != nil {
		return "", nil, err
	}
	return string(text), Encoded(m), nil
}

// AppendSlice appends items as a JSON array, each element written by each
// (a method expression such as (*T).AppendJSON fits); a nil slice is null,
// as encoding/json writes it.
func AppendSlice[T any](b []byte, items []T, each func(*T, []byte) []byte) []byte {
	if items == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = each(&items[i], b)
	}
	return append(b, ']')
}

// Array joins already-encoded JSON values into one JSON array, byte for
// byte, so callers that keep each element's exact encoding do not each
// write the brackets and commas.
func Array[T ~[]byte | ~string](items []T) []byte {
	n := 2
	for _, it := range items {
		n += len(it) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	return append(b, ']')
}
