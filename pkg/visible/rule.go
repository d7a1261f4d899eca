package visible

import (
	"unicode"
	"unicode/utf8"
)

const (
	// Open and Close delimit every mark.
	Open  = "⟦"
	Close = "⟧"
	// hiddenPrefix starts a mark of hidden characters; the escape of a
	// literal Open is a mark without it.
	hiddenPrefix = Open + "hidden "
	// openRune is Open as a rune; a literal one in the source is escaped.
	openRune = '⟦'
	zwnj     = '\u200C'
	zwj      = '\u200D'
)

// bmp holds, per code point of the Basic Multilingual Plane, whether the rule
// may change it: format characters, C1 controls, variation selectors and the
// mark bracket. Context (what surrounds it) decides the joiners and variation
// selectors. 8 KiB, built once from the standard library's Unicode tables so
// the set follows the Unicode version Go ships.
var bmp [1 << 16 / 64]uint64

// lead says, per byte, whether a scan must look closer: an ASCII control or
// DEL, or the first byte of a UTF-8 sequence that can encode a code point of
// interest. Other bytes (printable ASCII, continuation bytes, leads of
// ranges without one) are skipped at one table load each.
var lead [256]bool

func init() {
	set := func(r rune) {
		if r < 1<<16 {
			bmp[r>>6] |= 1 << (r & 63)
		}
		var buf [utf8.UTFMax]byte
		utf8.EncodeRune(buf[:], r)
		lead[buf[0]] = true
	}
	for _, rg := range unicode.Cf.R16 {
		for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
			set(r)
		}
	}
	for _, rg := range unicode.Cf.R32 {
		for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
			set(r)
		}
	}
	for r := rune(0x80); r <= 0x9f; r++ {
		set(r)
	}
	for r := rune(0xFE00); r <= 0xFE0F; r++ {
		set(r)
	}
	for r := rune(0xE0100); r <= 0xE01EF; r++ {
		set(r)
	}
	set(openRune)
	for c := 0; c < 0x20; c++ {
		lead[c] = c != '\t' && c != '\n'
	}
	lead[0x7f] = true
}

// candidate reports whether r >= 0x80 is in the set bmp describes (or its
// supplementary part).
func candidate(r rune) bool {
	if r < 1<<16 {
		return bmp[r>>6]&(1<<(r&63)) != 0
	}
	return isVS(r) || r >= 0x10000 && unicode.Is(unicode.Cf, r)
}

func isVS(r rune) bool {
	return r >= 0xFE00 && r <= 0xFE0F || r >= 0xE0100 && r <= 0xE01EF
}

// isControl is the C0 and C1 controls and DEL.
func isControl(r rune) bool { return r < 0x20 || r >= 0x7f && r <= 0x9f }

// hiddenAt reports whether the code point at s[i] is one a person cannot see
// (a mark replaces it), and its size in bytes. Tab, line feed and a carriage
// return before a line feed are kept; so are joiners and variation
// selectors in the contexts that give them a visible effect. Invalid UTF-8
// bytes are not hidden: encoders show them as U+FFFD.
func hiddenAt(s string, i int) (bool, int) {
	c := s[i]
	if c < utf8.RuneSelf {
		switch {
		case c == '\r':
			return i+1 >= len(s) || s[i+1] != '\n', 1
		case c < 0x20:
			return c != '\t' && c != '\n', 1
		}
		return c == 0x7f, 1
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && size == 1 || r == openRune || !candidate(r) {
		return false, size
	}
	switch {
	case r == zwj:
		return !joinsPictographs(s, i, size) && !joinsLetters(s, i, size), size
	case r == zwnj:
		return !joinsLetters(s, i, size), size
	case isVS(r):
		return !afterBase(s, i), size
	}
	return true, size
}

// afterBase reports whether the code point before s[i] is one a variation
// selector can modify: a visible character, not itself a selector, a format
// character or a control.
func afterBase(s string, i int) bool {
	if i == 0 {
		return false
	}
	p, _ := utf8.DecodeLastRuneInString(s[:i])
	return p != utf8.RuneError && !isVS(p) && !isControl(p) && !unicode.Is(unicode.Cf, p) && !unicode.IsSpace(p)
}

// joinsPictographs reports a zero-width joiner inside an emoji sequence: a
// pictograph (possibly followed by a presentation selector or a skin-tone
// modifier) before it, a pictograph after it.
func joinsPictographs(s string, i, size int) bool {
	j := i
	var p rune
	for j > 0 {
		var n int
		p, n = utf8.DecodeLastRuneInString(s[:j])
		if p != 0xFE0F && !(p >= 0x1F3FB && p <= 0x1F3FF) {
			break
		}
		j -= n
	}
	if j == 0 || !pictograph(p) {
		return false
	}
	n, _ := utf8.DecodeRuneInString(s[i+size:])
	return pictograph(n)
}

// pictograph approximates Unicode's Extended_Pictographic property, which
// the standard library does not carry: the blocks emoji sequences are built
// from.
func pictograph(r rune) bool {
	switch {
	case r >= 0x1F000 && r <= 0x1FAFF,
		r >= 0x2600 && r <= 0x27BF,
		r >= 0x2300 && r <= 0x23FF,
		r >= 0x2B00 && r <= 0x2BFF,
		r >= 0x2190 && r <= 0x21FF,
		r >= 0x2100 && r <= 0x214F,
		r == 0x00A9, r == 0x00AE, r == 0x203C, r == 0x2049,
		r == 0x3030, r == 0x303D, r == 0x3297, r == 0x3299:
		return true
	}
	return false
}

// joiningScripts are the scripts whose spelling uses the zero-width joiner
// and non-joiner between letters (cursive joining, conjuncts and half forms).
var joiningScripts = []*unicode.RangeTable{
	unicode.Arabic, unicode.Syriac, unicode.Nko, unicode.Devanagari, unicode.Bengali, unicode.Gurmukhi,
	unicode.Gujarati, unicode.Oriya, unicode.Tamil, unicode.Telugu, unicode.Kannada, unicode.Malayalam, unicode.Sinhala,
}

// joinsLetters reports a joiner between two letters (or a letter's marks) of
// one of the joining scripts.
func joinsLetters(s string, i, size int) bool {
	if i == 0 || i+size >= len(s) {
		return false
	}
	p, _ := utf8.DecodeLastRuneInString(s[:i])
	n, _ := utf8.DecodeRuneInString(s[i+size:])
	return p >= 0x600 && n >= 0x600 && unicode.IsOneOf(joiningScripts, p) && unicode.IsOneOf(joiningScripts, n) &&
		(unicode.IsLetter(p) || unicode.IsMark(p)) && (unicode.IsLetter(n) || unicode.IsMark(n))
}

// scan returns the byte offset of the first code point at or after from
// that the rule changes (a hidden character, or a literal Open when open
// says it counts: MarkHidden leaves it alone), or -1. The two branches that
// read a candidate each test it in place: a shared helper, inlined, made
// the loop measurably slower on text full of candidates.
func scan(s string, from int, open bool) int {
	for i := from; i < len(s); {
		c := s[i]
		switch {
		case c < utf8.RuneSelf && !lead[c]:
			// Printable ASCII, most text: then eight bytes at a time.
			i++
			for i+8 <= len(s) && plainWord(s[i:i+8]) {
				i += 8
			}
		case c < utf8.RuneSelf:
			if h, _ := hiddenAt(s, i); h {
				return i
			}
			i++
		case !lead[c]:
			// A sequence that encodes nothing of interest: skipped whole.
			i += seqLen(s, i)
		case c < 0xF0 && i+2 < len(s) && s[i+1]&0xC0 == 0x80 && (c < 0xE0 || s[i+2]&0xC0 == 0x80):
			// Two or three bytes, read here rather than by the decoder:
			// most such code points are no candidate.
			r, size := rune(c&0x1F)<<6|rune(s[i+1]&0x3F), 2
			if c >= 0xE0 {
				r, size = rune(c&0x0F)<<12|rune(s[i+1]&0x3F)<<6|rune(s[i+2]&0x3F), 3
			}
			if bmp[r>>6]&(1<<(r&63)) != 0 {
				if r == openRune {
					if open {
						return i
					}
				} else if h, _ := hiddenAt(s, i); h {
					return i
				}
			}
			i += size
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if candidate(r) {
				if r == openRune {
					if open {
						return i
					}
				} else if h, _ := hiddenAt(s, i); h {
					return i
				}
			}
			i += size
		}
	}
	return -1
}

// seqLen is the length of the UTF-8 sequence at s[i], by its lead byte,
// when the bytes after it are continuation bytes; otherwise 1, so a byte
// that breaks the sequence (an ESC after a lone lead byte) is still looked
// at.
func seqLen(s string, i int) int {
	n := 1
	switch c := s[i]; {
	case c >= 0xF0:
		n = 4
	case c >= 0xE0:
		n = 3
	case c >= 0xC0:
		n = 2
	}
	if i+n > len(s) {
		return 1
	}
	for k := 1; k < n; k++ {
		if s[i+k]&0xC0 != 0x80 {
			return 1
		}
	}
	return n
}

// plainWord reports whether the eight bytes of w are all printable ASCII
// (0x20..0x7E), testing them in one 64-bit word.
func plainWord(w string) bool {
	_ = w[7]
	x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// A byte >= 0x80, a byte < 0x20, or a byte equal to 0x7F.
	return (x|(x-0x20*ones)|((x^0x7f*ones)-ones))&highs == 0
}

// Clean reports whether s renders unchanged: nothing hidden, no literal "⟦".
func Clean(s string) bool { return scan(s, 0, true) < 0 }

// Hidden reports whether the code point at byte offset i of s is one the rule
// replaces with a mark, and its size in bytes. It is the rule's predicate,
// for callers that mark text their own way (a terminal viewer).
func Hidden(s string, i int) (bool, int) { return hiddenAt(s, i) }
