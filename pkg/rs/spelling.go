package rs

import (
	"bytes"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// bearer is the token a client sends, in the spellings an answer could echo
// it in. The rule it serves is written out at redact, in sanitize.go.
type bearer struct {
	tok string
	// forms are the token as sent and its query- and path-escaped
	// spellings (a server echoing it in a link escapes it one way or the
	// other).
	forms [][]byte
	// longest is the length of the longest form: how far back a spelling
	// cut by a window's edge can start.
	longest int
	// has marks the bytes the forms are made of.
	has [256]bool
}

// newBearer returns the spellings of tok, or nil when no token is sent.
// Every method of a nil *bearer finds nothing.
func newBearer(tok string) *bearer {
	if tok == "" {
		return nil
	}
	k := &bearer{tok: tok}
	for _, f := range tokenForms(tok) {
		k.forms = append(k.forms, []byte(f))
		k.longest = max(k.longest, len(f))
		for i := 0; i < len(f); i++ {
			k.has[f[i]] = true
		}
	}
	return k
}

// bearer returns the spellings of tok, made once per token: a client sends
// the same one call after call, and its spellings are read on every answer.
func (c *Client) bearer(tok string) *bearer {
	if tok == "" {
		return nil
	}
	if k := c.spellings.Load(); k != nil && k.tok == tok {
		return k
	}
	k := newBearer(tok)
	c.spellings.Store(k)
	return k
}

// in reports whether b spells the token: literally (in any of its forms),
// or once a reader decodes what b holds the way a person or a model would
// read it: JSON string escapes (\u0074, \/), percent-encoding (%74, either
// case), percent-encoding after JSON escapes (\u0025 is a %), and
// percent-encoding of the raw bytes. Decoding is lenient, as a reader's is:
// a malformed escape stays as written. Text in any encoding a reader must
// first recognise as one (base64, quoted-printable) is not decoded: nothing
// in pdpp-mcp decodes it, and an RS set on leaking its bearer can always
// invent a spelling; the rule catches the echoes a server, a proxy or a
// logging layer makes by accident.
//
// b is read once per decoding, through a window of a few KiB, never copied
// whole; a b with no '\' and no percent escape of a byte the token holds
// (percentMay) is searched only as it is.
func (k *bearer) in(b []byte) bool {
	// Every spelling is at least as long as the token: an escape stands
	// for fewer bytes than it takes. Most strings and headers are shorter.
	if k == nil || len(b) < len(k.tok) {
		return false
	}
	return containsAny(b, k.forms) || k.decodedIn(b)
}

// decodedIn is in without the literal search, for a b already searched.
func (k *bearer) decodedIn(b []byte) bool {
	esc, pct := bytes.IndexByte(b, '\\') >= 0, k.percentMay(b)
	if !esc && !pct {
		return false
	}
	s := scans.Get().(*spellScan)
	defer scans.Put(s)
	s.reset(k)
	if pct {
		s.raw.percent(k, b)
		s.raw.end(k)
		if s.raw.out.found {
			return true
		}
	}
	if esc {
		s.unescape(k, b)
		s.json.end(k)
	}
	return s.json.found || s.pct.out.found
}

// percentMay reports whether a percent escape of b decodes to a byte the
// token's forms hold. When none does, every byte of a spelling found by
// percent-decoding b was in b as it is, and the literal search has already
// looked: most text with a % ("50%", "%20", "%C3%A9") is not decoded.
func (k *bearer) percentMay(b []byte) bool {
	for {
		i := bytes.IndexByte(b, '%')
		if i < 0 || i+2 >= len(b) {
			return false
		}
		if isHex(b[i+1]) && isHex(b[i+2]) && k.has[unhex(b[i+1])<<4|unhex(b[i+2])] {
			return true
		}
		b = b[i+1:]
	}
}

// inString is in for a string, without copying it.
func (k *bearer) inString(s string) bool {
	return k.in(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// inHeader reports whether a header value spells the token: as in does, or
// once its quoted-pairs are undone (in a quoted-string, a backslash stands
// for the character after it, whatever it is).
func (k *bearer) inHeader(v string) bool {
	if k.inString(v) {
		return true
	}
	if k == nil || len(v) < len(k.tok) || strings.IndexByte(v, '\\') < 0 {
		return false
	}
	var b strings.Builder
	b.Grow(len(v))
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
		}
		b.WriteByte(v[i])
	}
	return k.inString(b.String())
}

// inMediaType reports whether a Content-Type spells the token: in its raw
// value (inHeader) or in a parameter as mime.ParseMediaType decodes it,
// quoted-strings unquoted and RFC 2231 values (charset'lang'%xx, split
// over name*0*, name*1*, …) joined and decoded. A blob's parameters reach
// results, so what they decode to is what is checked.
func (k *bearer) inMediaType(v string) bool {
	if k.inHeader(v) {
		return true
	}
	if k == nil || len(v) < len(k.tok) || strings.IndexAny(v, `"*\%`) < 0 {
		return false
	}
	_, params, err := mime.ParseMediaType(v)
	if err != nil {
		return false
	}
	for name, val := range params {
		if k.inString(name) || k.inString(val) {
			return true
		}
	}
	return false
}

// scrubHeader deletes from h every header whose name or a value spells the
// token, and reports whether Content-Type was one of them. A value cannot be
// repaired without changing what it says; the headers a result repeats are
// read by name (Content-Type of a blob, Request-Id, Retry-After), and an
// answer whose Content-Type is taken away reads as having none.
func (k *bearer) scrubHeader(h http.Header) (contentType bool) {
	if k == nil {
		return false
	}
	for name, vs := range h {
		drop := k.inString(name)
		for _, v := range vs {
			if drop {
				break
			}
			drop = k.inHeader(v)
		}
		if drop {
			delete(h, name)
			contentType = contentType || name == "Content-Type"
		}
	}
	return contentType
}

// scans reuses the windows of in: one call may check many strings.
var scans = sync.Pool{New: func() any { return new(spellScan) }}

// spellScan is one run of in: each decoding of b fills a window that is
// searched whenever it is full.
type spellScan struct {
	json window         // b with JSON escapes decoded; passed on to pct
	pct  percentDecoder // json, percent-decoded
	raw  percentDecoder // b, percent-decoded
}

func (s *spellScan) reset(k *bearer) {
	s.json.reset(k)
	s.pct.reset(k)
	s.raw.reset(k)
	s.json.next = &s.pct
}

// unescape decodes the JSON escapes of b (leniently, as unescapeJSON does)
// into s.json, escapes straight into its buffer.
func (s *spellScan) unescape(k *bearer, b []byte) {
	w := &s.json
	for len(b) > 0 && !w.found && !s.pct.out.found {
		i := bytes.IndexByte(b, '\\')
		if i < 0 {
			w.write(k, b)
			return
		}
		w.write(k, b[:i])
		if cap(w.buf)-len(w.buf) < utf8.UTFMax {
			if w.search(k); w.found {
				return
			}
		}
		var n int
		w.buf, n = unescapeOne(w.buf, b[i:])
		b = b[i+n:]
	}
}

// windowBytes is the size of a search window; a token longer than half of
// it gets a window twice its length.
const windowBytes = 8 << 10

// window holds the tail of a decoded stream: bytes are searched when the
// window fills, and the last longest-1 of them are kept, since a spelling
// can start there that the next bytes finish.
type window struct {
	buf   []byte
	found bool
	// next, when set, decodes the stream further: buf[fed:] is what it
	// has not been given yet.
	next *percentDecoder
	fed  int
}

func (w *window) reset(k *bearer) {
	if n := max(windowBytes, 2*k.longest); cap(w.buf) < n {
		w.buf = make([]byte, 0, n)
	}
	w.buf, w.found, w.next, w.fed = w.buf[:0], false, nil, 0
}

func (w *window) write(k *bearer, p []byte) {
	for len(p) > 0 && !w.found {
		n := copy(w.buf[len(w.buf):cap(w.buf)], p)
		w.buf, p = w.buf[:len(w.buf)+n], p[n:]
		if len(w.buf) == cap(w.buf) {
			w.search(k)
		}
	}
}

func (w *window) search(k *bearer) {
	if w.next != nil {
		w.next.percent(k, w.buf[w.fed:])
	}
	if containsAny(w.buf, k.forms) {
		w.found = true
		return
	}
	keep := min(k.longest-1, len(w.buf))
	w.buf = w.buf[:copy(w.buf, w.buf[len(w.buf)-keep:])]
	w.fed = len(w.buf)
}

// end searches what is left in the window, and ends the next decoder.
func (w *window) end(k *bearer) {
	if !w.found {
		w.search(k)
	}
	if w.next != nil {
		w.next.end(k)
	}
}

// percentDecoder decodes %XX (either case) into out as bytes arrive; a %
// not followed by two hex digits is passed on as written.
type percentDecoder struct {
	out     window
	pending [3]byte // a % and the hex digits read after it
	n       int
}

func (d *percentDecoder) reset(k *bearer) {
	d.out.reset(k)
	d.n = 0
}

func (d *percentDecoder) percent(k *bearer, p []byte) {
	for len(p) > 0 && !d.out.found {
		if d.n > 0 {
			c := p[0]
			if !isHex(c) {
				d.out.write(k, d.pending[:d.n])
				d.n = 0
				continue // c is read again: it may start an escape
			}
			d.pending[d.n] = c
			d.n++
			p = p[1:]
			if d.n == 3 {
				d.pending[0] = unhex(d.pending[1])<<4 | unhex(d.pending[2])
				d.out.write(k, d.pending[:1])
				d.n = 0
			}
			continue
		}
		i := bytes.IndexByte(p, '%')
		if i < 0 {
			d.out.write(k, p)
			return
		}
		d.out.write(k, p[:i])
		d.pending[0], d.n = '%', 1
		p = p[i+1:]
	}
}

// end passes on an escape left unfinished and searches the rest.
func (d *percentDecoder) end(k *bearer) {
	d.out.write(k, d.pending[:d.n])
	d.n = 0
	d.out.end(k)
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// unescapeOne decodes the JSON escape at the start of s (s[0] is '\'),
// appending what it stands for to dst, and returns how many bytes of s it
// read. It is lenient: a lone backslash at the end is kept, an unknown
// escape stands for its character, a \u without four hex digits stays
// "\u", and a surrogate pair becomes one character.
func unescapeOne(dst, s []byte) ([]byte, int) {
	if len(s) < 2 {
		return append(dst, '\\'), 1
	}
	switch s[1] {
	case 'b':
		return append(dst, '\b'), 2
	case 'f':
		return append(dst, '\f'), 2
	case 'n':
		return append(dst, '\n'), 2
	case 'r':
		return append(dst, '\r'), 2
	case 't':
		return append(dst, '\t'), 2
	case 'u':
		r, ok := decodeU(s[2:])
		if !ok {
			return append(dst, '\\', 'u'), 2
		}
		n := 6
		if utf16.IsSurrogate(r) && len(s) >= n+2 && s[n] == '\\' && s[n+1] == 'u' {
			if r2, ok := decodeU(s[n+2:]); ok {
				if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
					r, n = pair, n+6
				}
			}
		}
		return utf8.AppendRune(dst, r), n
	}
	return append(dst, s[1]), 2 // " \ / and anything unknown
}

// decodeU reads the four hex digits after \u.
func decodeU(s []byte) (rune, bool) {
	if len(s) < 4 || !isHex(s[0]) || !isHex(s[1]) || !isHex(s[2]) || !isHex(s[3]) {
		return 0, false
	}
	return rune(unhex(s[0]))<<12 | rune(unhex(s[1]))<<8 | rune(unhex(s[2]))<<4 | rune(unhex(s[3])), true
}

// tokenForms is the token as sent and in the URL-escaped spellings a server
// might echo it in a link.
func tokenForms(tok string) []string {
	forms := []string{tok}
	for _, f := range []string{url.QueryEscape(tok), url.PathEscape(tok)} {
		if f != tok && (len(forms) < 2 || forms[1] != f) {
			forms = append(forms, f)
		}
	}
	return forms
}

func containsAny(b []byte, forms [][]byte) bool {
	for _, f := range forms {
		if bytes.Contains(b, f) {
			return true
		}
	}
	return false
}
