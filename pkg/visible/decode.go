package visible

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrShortened is returned by Decode for a mark that lists only part of what
// it stands for: the characters it counts are not in the text, so no string
// can be rebuilt from it.
var ErrShortened = errors.New("the value holds a shortened ⟦hidden …⟧ mark (it ends in “…+N more”), which does not say every character it stands for")

// Decode turns text holding marks back into the original: each mark becomes
// the characters it names. Anything else, a "⟦" that starts no well-formed
// mark included, is kept as it is, so a value typed by hand passes through.
// A shortened mark is an error (ErrShortened). Decode(String(s)) == s for
// every s of at most ExactBytes bytes.
func Decode(s string) (string, error) {
	i := strings.Index(s, Open)
	if i < 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	for i >= 0 {
		b.WriteString(s[:i])
		s = s[i:]
		orig, n, err := decodeMark(s)
		switch {
		case err != nil:
			return "", err
		case n == 0:
			b.WriteString(Open)
			n = len(Open)
		default:
			b.WriteString(orig)
		}
		s = s[n:]
		i = strings.Index(s, Open)
	}
	b.WriteString(s)
	return b.String(), nil
}

// decodeMark reads the mark at the start of s and returns what it stands for
// and its length; n = 0 when s does not start with a well-formed mark.
func decodeMark(s string) (orig string, n int, err error) {
	if strings.HasPrefix(s, escapedOpen) {
		return Open, len(escapedOpen), nil
	}
	if !strings.HasPrefix(s, hiddenPrefix) {
		return "", 0, nil
	}
	end := strings.Index(s, Close)
	if end < 0 {
		return "", 0, nil
	}
	body := s[len(hiddenPrefix):end]
	if i := strings.LastIndex(body, cutNote[1:]); i >= 0 && shortenedTail(body[i+len(cutNote)-1:]) {
		return "", 0, ErrShortened
	}
	var b strings.Builder
	for first := true; body != ""; first = false {
		if !first {
			if body[0] != ' ' {
				return "", 0, nil
			}
			body = body[1:]
		}
		switch {
		case strings.HasPrefix(body, "tags “"):
			rest := body[len("tags “"):]
			q := strings.Index(rest, "”")
			if q <= 0 {
				return "", 0, nil
			}
			for _, c := range []byte(rest[:q]) {
				if c < 0x20 || c > 0x7e {
					return "", 0, nil
				}
				b.WriteRune(rune(c) - 0x20 + tagLo)
			}
			body = rest[q+len("”"):]
		default:
			r, reps, k, ok := codeItem(body)
			if !ok {
				return "", 0, nil
			}
			for range reps {
				b.WriteRune(r)
			}
			body = body[k:]
		}
	}
	if b.Len() == 0 {
		return "", 0, nil
	}
	return b.String(), end + len(Close), nil
}

// shortenedTail reports whether s is "N more" with N a positive count: the end
// of a shortened mark.
func shortenedTail(s string) bool {
	digits, ok := strings.CutSuffix(s, " more")
	if !ok || digits == "" {
		return false
	}
	n, err := strconv.Atoi(digits)
	return err == nil && n > 0
}

// maxRepeat bounds the ×N of one item Decode accepts, so a hand-typed mark
// cannot make it build a huge string.
const maxRepeat = ExactBytes

// codeItem reads U+XXXX[×N] at the start of s: a code point the rule marks
// (a format character, a control, a variation selector), written with four to
// six upper-case hex digits and no leading zero beyond four.
func codeItem(s string) (r rune, reps, n int, ok bool) {
	if !strings.HasPrefix(s, "U+") {
		return 0, 0, 0, false
	}
	k := 2
	for k < len(s) && k < 8 && (s[k] >= '0' && s[k] <= '9' || s[k] >= 'A' && s[k] <= 'F') {
		k++
	}
	hex := s[2:k]
	if len(hex) < 4 || len(hex) > 4 && hex[0] == '0' {
		return 0, 0, 0, false
	}
	v, err := strconv.ParseUint(hex, 16, 32)
	if err != nil || v > utf8.MaxRune || !utf8.ValidRune(rune(v)) {
		return 0, 0, 0, false
	}
	r = rune(v)
	if !isControl(r) && !candidate(r) || r == openRune {
		return 0, 0, 0, false
	}
	reps = 1
	if rest := s[k:]; strings.HasPrefix(rest, "×") {
		j := len("×")
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		c, err := strconv.Atoi(rest[len("×"):j])
		if err != nil || c < 2 || c > maxRepeat || rest[len("×")] == '0' {
			return 0, 0, 0, false
		}
		reps, k = c, k+j
	}
	return r, reps, k, true
}
