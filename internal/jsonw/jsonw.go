// Package jsonw holds the JSON text helpers several packages need to write
// JSON by hand (to keep a source document's key order, or to build handles
// byte for byte): one string escaper, one compact encoder and one array
// joiner, so every writer escapes and joins the same way.
package jsonw

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// AppendString appends s as a JSON string. Unlike encoding/json it leaves <,
// > and & alone (the text is read by models and people, not embedded in
// HTML), as JavaScript's JSON.stringify does; control characters are escaped
// and invalid UTF-8 becomes U+FFFD.
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
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
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// String is s as a JSON string literal (see AppendString).
func String(s string) string { return string(AppendString(nil, s)) }

// Compact is v encoded as one line of JSON without HTML escaping, for values
// shown in text; a value that cannot be encoded is "null".
func Compact(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "null"
	}
	return strings.TrimSuffix(b.String(), "\n")
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
