package jsonw

import (
	"errors"
	"fmt"
)

// Encoded is a JSON value already written as encoding/json's Marshal would
// write it (compact, with <, > and & escaped). A tool result whose
// structuredContent is Encoded is sent as it is, without another scan by
// encoding/json; build one only with AppendRaw, AppendMarshalString and
// literal punctuation. MarshalJSON keeps it usable where an encoder does
// see it (the encoder then checks it again).
type Encoded []byte

// MarshalJSON returns e itself.
func (e Encoded) MarshalJSON() ([]byte, error) {
	if len(e) == 0 {
		return []byte("null"), nil
	}
	return e, nil
}

// maxNesting is encoding/json's own nesting limit, so a value AppendRaw
// accepts is one json.Marshal accepts.
const maxNesting = 10000

// ErrInvalid is wrapped by AppendRaw's errors.
var ErrInvalid = errors.New("invalid JSON")

// rawPlain marks the bytes a string's content copies without a look: not
// the quote, the backslash, a control character, <, > or & (escaped), nor
// 0xE2 (the first byte of U+2028 and U+2029, escaped).
var rawPlain = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' && c != 0xE2
	}
	return t
}()

// AppendRaw appends src, which must be exactly one JSON value (white space
// around it allowed), as json.Marshal writes it when src is a
// json.RawMessage: white space outside strings removed, <, > and & in
// strings written as \u003c, \u003e and \u0026, U+2028 and U+2029 as
// \u2028 and \u2029, every other byte (escape sequences and invalid UTF-8
// included) as it is. An invalid src is an error wrapping ErrInvalid, and
// dst comes back as it was. A nil src is null and an empty one an error,
// as for a json.RawMessage. It is one pass with no allocation beyond dst's
// growth (and a nesting stack past 64 levels).
func AppendRaw(dst, src []byte) ([]byte, error) {
	if src == nil {
		return append(dst, "null"...), nil
	}
	w := rawWriter{src: src, dst: dst}
	w.stack = w.small[:0]
	if err := w.run(); err != nil {
		return dst, err
	}
	return w.dst, nil
}

type rawWriter struct {
	src   []byte
	i     int
	dst   []byte
	stack []byte // '{' or '[' per open container
	small [64]byte
}

func (w *rawWriter) fail(what string) error {
	if w.i >= len(w.src) {
		return fmt.Errorf("%w: unexpected end of input (%s)", ErrInvalid, what)
	}
	return fmt.Errorf("%w: unexpected byte %q at offset %d (%s)", ErrInvalid, w.src[w.i], w.i, what)
}

func (w *rawWriter) space() {
	i := w.i
	for i < len(w.src) {
		switch w.src[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			w.i = i
			return
		}
	}
	w.i = i
}

func (w *rawWriter) run() error {
	const (
		wantValue = iota
		wantKey
		afterValue
	)
	state := wantValue
	for {
		w.space()
		switch state {
		case wantValue:
			if w.i >= len(w.src) {
				return w.fail("a value")
			}
			switch c := w.src[w.i]; {
			case c == '{' || c == '[':
				if len(w.stack) >= maxNesting {
					return fmt.Errorf("%w: nested deeper than %d levels", ErrInvalid, maxNesting)
				}
				w.i++
				w.space()
				closer := byte('}')
				if c == '[' {
					closer = ']'
				}
				if w.i < len(w.src) && w.src[w.i] == closer {
					w.i++
					w.dst = append(w.dst, c, closer)
					state = afterValue
					continue
				}
				w.stack = append(w.stack, c)
				w.dst = append(w.dst, c)
				if c == '{' {
					state = wantKey
				}
				continue
			case c == '"':
				if err := w.str(); err != nil {
					return err
				}
			case c == '-' || (c >= '0' && c <= '9'):
				if err := w.number(); err != nil {
					return err
				}
			case c == 't':
				if err := w.literal("true"); err != nil {
					return err
				}
			case c == 'f':
				if err := w.literal("false"); err != nil {
					return err
				}
			case c == 'n':
				if err := w.literal("null"); err != nil {
					return err
				}
			default:
				return w.fail("a value")
			}
			state = afterValue
		case wantKey:
			if w.i >= len(w.src) || w.src[w.i] != '"' {
				return w.fail("an object key")
			}
			if err := w.str(); err != nil {
				return err
			}
			w.space()
			if w.i >= len(w.src) || w.src[w.i] != ':' {
				return w.fail("a colon after an object key")
			}
			w.i++
			w.dst = append(w.dst, ':')
			state = wantValue
		case afterValue:
			if len(w.stack) == 0 {
				if w.i != len(w.src) {
					return w.fail("the end after the value")
				}
				return nil
			}
			if w.i >= len(w.src) {
				return w.fail("a comma or the end of a container")
			}
			top := w.stack[len(w.stack)-1]
			switch c := w.src[w.i]; {
			case c == ',':
				w.i++
				w.dst = append(w.dst, ',')
				state = wantValue
				if top == '{' {
					state = wantKey
				}
			case (c == '}' && top == '{') || (c == ']' && top == '['):
				w.i++
				w.dst = append(w.dst, c)
				w.stack = w.stack[:len(w.stack)-1]
			default:
				return w.fail("a comma or the end of a container")
			}
		}
	}
}

// str copies the string starting at w.i (its opening quote).
func (w *rawWriter) str() error {
	src := w.src
	w.i++
	start := w.i - 1
	for {
		i := w.i
		for i < len(src) && rawPlain[src[i]] {
			i++
		}
		w.i = i
		if w.i >= len(src) {
			return w.fail("the end of a string")
		}
		switch c := src[w.i]; c {
		case '"':
			w.i++
			w.dst = append(w.dst, src[start:w.i]...)
			return nil
		case '\\':
			if w.i+1 >= len(src) {
				w.i++
				return w.fail("an escape sequence")
			}
			switch src[w.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				w.i += 2
			case 'u':
				for k := 2; k < 6; k++ {
					if w.i+k >= len(src) || !isHex(src[w.i+k]) {
						w.i += k
						return w.fail("four hexadecimal digits")
					}
				}
				w.i += 6
			default:
				w.i++
				return w.fail("an escape sequence")
			}
		case '<', '>', '&':
			w.dst = append(w.dst, src[start:w.i]...)
			w.dst = append(w.dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			w.i++
			start = w.i
		case 0xE2:
			if w.i+2 < len(src) && src[w.i+1] == 0x80 && src[w.i+2]&^1 == 0xA8 {
				w.dst = append(w.dst, src[start:w.i]...)
				w.dst = append(w.dst, '\\', 'u', '2', '0', '2', hexDigits[src[w.i+2]&0xF])
				w.i += 3
				start = w.i
			} else {
				w.i++
			}
		default: // a control character
			return w.fail("a string character")
		}
	}
}

const hexDigits = "0123456789abcdef"

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number copies the number starting at w.i.
func (w *rawWriter) number() error {
	src, start := w.src, w.i
	if src[w.i] == '-' {
		w.i++
	}
	switch {
	case w.i < len(src) && src[w.i] == '0':
		w.i++
	case w.i < len(src) && src[w.i] >= '1' && src[w.i] <= '9':
		for w.i < len(src) && isDigit(src[w.i]) {
			w.i++
		}
	default:
		return w.fail("a digit")
	}
	if w.i < len(src) && src[w.i] == '.' {
		w.i++
		if w.i >= len(src) || !isDigit(src[w.i]) {
			return w.fail("a digit after the decimal point")
		}
		for w.i < len(src) && isDigit(src[w.i]) {
			w.i++
		}
	}
	if w.i < len(src) && (src[w.i] == 'e' || src[w.i] == 'E') {
		w.i++
		if w.i < len(src) && (src[w.i] == '+' || src[w.i] == '-') {
			w.i++
		}
		if w.i >= len(src) || !isDigit(src[w.i]) {
			return w.fail("a digit in the exponent")
		}
		for w.i < len(src) && isDigit(src[w.i]) {
			w.i++
		}
	}
	w.dst = append(w.dst, src[start:w.i]...)
	return nil
}

func (w *rawWriter) literal(lit string) error {
	if len(w.src)-w.i < len(lit) || string(w.src[w.i:w.i+len(lit)]) != lit {
		return w.fail("a literal")
	}
	w.i += len(lit)
	w.dst = append(w.dst, lit...)
	return nil
}
