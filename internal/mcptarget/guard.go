package mcptarget

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync"
	"unicode/utf8"
)

// Bounds on what a session reads from a server. A server is as untrusted as
// what it says: one that streams a message without end, or pages forever,
// must end the session with a reason, not fill the memory.
const (
	// DefaultMaxMessage bounds one message: a stdio line, a JSON body, an
	// event-stream line. It is the go-sdk's own line limit for stdio.
	DefaultMaxMessage = 16 << 20
	// DefaultMaxTotal bounds everything read from one server.
	DefaultMaxTotal = 64 << 20
)

// ErrTooLarge is what a bound stops: a message over the per-message limit,
// or a session over the total.
var ErrTooLarge = errors.New("over the size limit")

// ErrNotJSONRPC is a line on a stdio server's stdout that cannot start a
// JSON-RPC message.
var ErrNotJSONRPC = errors.New("not a JSON-RPC message")

// guard counts what a session reads and keeps the first reason it stopped.
type guard struct {
	maxMsg, maxTotal int64

	mu    sync.Mutex
	total int64
	cause error
}

func newGuard(l Limits) *guard {
	g := &guard{maxMsg: l.MaxMessage, maxTotal: l.MaxTotal}
	if g.maxMsg <= 0 {
		g.maxMsg = DefaultMaxMessage
	}
	if g.maxTotal <= 0 {
		g.maxTotal = DefaultMaxTotal
	}
	return g
}

// Cause is why the guard stopped the session, or nil.
func (g *guard) Cause() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cause
}

// fail records the first reason and returns the one recorded.
func (g *guard) fail(err error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cause == nil {
		g.cause = err
	}
	return g.cause
}

func (g *guard) count(n int) error {
	g.mu.Lock()
	g.total += int64(n)
	over := g.total > g.maxTotal
	g.mu.Unlock()
	if over {
		return g.fail(&stopped{fmt.Sprintf("the server sent more than %s in all; reading stopped there", size(g.maxTotal)), ErrTooLarge})
	}
	return nil
}

func (g *guard) tooLarge(what string) error {
	return g.fail(&stopped{fmt.Sprintf("the server sent %s over %s; reading stopped there", what, size(g.maxMsg)), ErrTooLarge})
}

// stopped is why a guard ended a session, in words, and of which kind.
type stopped struct {
	msg  string
	kind error
}

func (e *stopped) Error() string { return e.msg }
func (e *stopped) Unwrap() error { return e.kind }

// size says n bytes in MiB when it is a whole number of them.
func size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// lineReader reads a stdio server's stdout: newline-delimited JSON-RPC,
// each line bounded, and every line starting a JSON object or array (a log
// line on stdout ends the session with the line quoted, rather than as a
// JSON syntax error).
type lineReader struct {
	r     io.Reader
	g     *guard
	line  int64 // bytes since the last newline
	lines int   // newlines seen
	begun bool  // the current line has a non-blank byte
}

func (l *lineReader) Read(p []byte) (int, error) {
	if err := l.g.Cause(); err != nil {
		return 0, err
	}
	n, err := l.r.Read(p)
	if n > 0 {
		if e := l.scan(p[:n]); e != nil {
			return 0, e
		}
		if e := l.g.count(n); e != nil {
			return 0, e
		}
	}
	return n, err
}

func (l *lineReader) scan(b []byte) error {
	for i, c := range b {
		switch {
		case c == '\n':
			l.line, l.begun = 0, false
			l.lines++
			continue
		case l.line >= l.g.maxMsg:
			return l.g.tooLarge("a line")
		}
		l.line++
		if l.begun || c == ' ' || c == '\t' || c == '\r' {
			continue
		}
		l.begun = true
		if c != '{' && c != '[' {
			rest := b[i:]
			if j := bytes.IndexByte(rest, '\n'); j >= 0 {
				rest = rest[:j]
			}
			return l.g.fail(&stopped{fmt.Sprintf("the server wrote %s on line %d of stdout, which is not a JSON-RPC message: stdout carries only protocol messages (logs belong on stderr)",
				quote(rest, 80), l.lines+1), ErrNotJSONRPC})
		}
	}
	return nil
}

// quote shows up to n bytes of untrusted text, valid UTF-8, quoted.
func quote(b []byte, n int) string {
	cut := len(b) > n
	if cut {
		b = b[:n]
		for len(b) > 0 && !utf8.Valid(b) {
			b = b[:len(b)-1]
		}
	}
	s := strconv.Quote(string(bytes.ToValidUTF8(b, []byte("\uFFFD"))))
	if cut {
		s += "…"
	}
	return s
}

// boundedTransport bounds the response bodies of a Streamable HTTP session:
// a JSON body as one message, an event stream line by line, and all of them
// together.
type boundedTransport struct {
	next http.RoundTripper
	g    *guard
}

func (t boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.g.Cause(); err != nil {
		return nil, err
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	resp.Body = &bodyReader{ReadCloser: resp.Body, g: t.g, lines: mt == "text/event-stream"}
	return resp, nil
}

type bodyReader struct {
	io.ReadCloser
	g     *guard
	lines bool  // bound each line (an event stream), not the whole body
	n     int64 // bytes of the body, or of the current line
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if err := b.g.Cause(); err != nil {
		return 0, err
	}
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		if !b.lines {
			b.n += int64(n)
			if b.n > b.g.maxMsg {
				return 0, b.g.tooLarge("a response body")
			}
		}
		for rest := p[:n]; b.lines && len(rest) > 0; {
			i := bytes.IndexByte(rest, '\n')
			if i < 0 {
				i = len(rest)
			}
			if b.n += int64(i); b.n > b.g.maxMsg {
				return 0, b.g.tooLarge("an event-stream line")
			}
			if i < len(rest) {
				b.n, i = 0, i+1
			}
			rest = rest[i:]
		}
		if e := b.g.count(n); e != nil {
			return 0, e
		}
	}
	return n, err
}
