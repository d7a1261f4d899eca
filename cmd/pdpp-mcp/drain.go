package main

import (
	"bytes"
	"context"
	"io"
	"sync"
	"time"

	"github.com/tidwall/gjson"
)

// drain holds back stdin's end until every request read from it has been
// answered on stdout. Without it the MCP session ends as soon as stdin closes
// and drops answers still in flight, so `pdpp-mcp < requests.jsonl` (or a
// client that closes stdin right after its last request) would lose them.
//
// It watches the newline-delimited JSON-RPC bytes passing through: a request
// (method and id) read from stdin is pending until a response with that id
// is written to stdout or the client cancels it (notifications/cancelled).
// The wait is bounded by limit and by ctx.
type drain struct {
	ctx   context.Context
	limit time.Duration

	mu      sync.Mutex
	pending map[string]struct{}
	empty   chan struct{} // closed while nothing is pending
}

func newDrain(ctx context.Context, limit time.Duration) *drain {
	d := &drain{ctx: ctx, limit: limit, pending: map[string]struct{}{}, empty: make(chan struct{})}
	close(d.empty)
	return d
}

// maxTrackedLine matches the SDK's default frame limit; a longer line is
// rejected by the SDK anyway, so it is not tracked.
const maxTrackedLine = 16 << 20

// idKey identifies a JSON-RPC id independent of its spelling (1 and 1.0).
func idKey(id gjson.Result) string {
	if id.Type == gjson.String {
		return "s:" + id.Str
	}
	return "n:" + id.String()
}

func (d *drain) add(id gjson.Result) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.pending) == 0 {
		d.empty = make(chan struct{})
	}
	d.pending[idKey(id)] = struct{}{}
}

func (d *drain) done(id gjson.Result) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.pending[idKey(id)]; !ok {
		return
	}
	delete(d.pending, idKey(id))
	if len(d.pending) == 0 {
		close(d.empty)
	}
}

// wait blocks until nothing is pending, the limit passes or ctx ends.
func (d *drain) wait() {
	d.mu.Lock()
	ch := d.empty
	d.mu.Unlock()
	t := time.NewTimer(d.limit)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-d.ctx.Done():
	}
}

// inbound records requests and cancellations read from the client.
func (d *drain) inbound(line []byte) {
	each(line, func(m gjson.Result) {
		method, id := m.Get("method"), m.Get("id")
		switch {
		case method.Exists() && id.Exists() && id.Type != gjson.Null:
			d.add(id)
		case method.Str == "notifications/cancelled":
			// A cancelled request may legitimately never be answered.
			d.done(m.Get("params.requestId"))
		}
	})
}

// outbound records responses written to the client.
func (d *drain) outbound(line []byte) {
	each(line, func(m gjson.Result) {
		if !m.Get("method").Exists() {
			d.done(m.Get("id"))
		}
	})
}

// each calls f for the message on line, or for every element of a batch.
func each(line []byte, f func(gjson.Result)) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || !gjson.ValidBytes(line) {
		return
	}
	r := gjson.ParseBytes(line)
	if r.IsArray() {
		r.ForEach(func(_, m gjson.Result) bool { f(m); return true })
		return
	}
	f(r)
}

// lines splits a byte stream into lines for fn.
type lines struct {
	buf  []byte
	skip bool // the current line is too long to track
	fn   func([]byte)
}

func (l *lines) feed(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if !l.skip && len(l.buf)+len(p) <= maxTrackedLine {
				l.buf = append(l.buf, p...)
			} else {
				l.skip, l.buf = true, l.buf[:0]
			}
			return
		}
		if !l.skip {
			l.fn(append(l.buf, p[:i]...))
		}
		l.buf, l.skip, p = l.buf[:0], false, p[i+1:]
	}
}

func (l *lines) flush() {
	if !l.skip && len(l.buf) > 0 {
		l.fn(l.buf)
	}
	l.buf, l.skip = l.buf[:0], false
}

// reader wraps stdin. It hands every byte to the SDK before waiting, so the
// last request is read, then delays io.EOF until the drain is done.
func (d *drain) reader(r io.Reader) io.ReadCloser {
	return &drainReader{d: d, r: r, in: lines{fn: d.inbound}}
}

type drainReader struct {
	d   *drain
	r   io.Reader
	in  lines
	eof bool
}

func (dr *drainReader) Read(p []byte) (int, error) {
	if dr.eof {
		dr.d.wait()
		return 0, io.EOF
	}
	n, err := dr.r.Read(p)
	dr.in.feed(p[:n])
	if err == io.EOF {
		dr.in.flush()
		dr.eof = true
		if n > 0 {
			return n, nil // deliver the bytes first; the next Read waits
		}
		dr.d.wait()
	}
	return n, err
}

// Close closes stdin when it can be closed, which unblocks a pending Read
// when the session ends for another reason.
func (dr *drainReader) Close() error {
	if c, ok := dr.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// writer wraps stdout; it never closes it.
func (d *drain) writer(w io.Writer) io.WriteCloser {
	return &drainWriter{w: w, out: lines{fn: d.outbound}}
}

type drainWriter struct {
	mu  sync.Mutex
	w   io.Writer
	out lines
}

func (dw *drainWriter) Write(p []byte) (int, error) {
	dw.mu.Lock()
	defer dw.mu.Unlock()
	n, err := dw.w.Write(p)
	dw.out.feed(p[:n])
	return n, err
}

func (dw *drainWriter) Close() error { return nil }
