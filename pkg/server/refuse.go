package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
)

// CodeRefused is the JSON-RPC error code of Refuse's answers: a server
// error (the -32000 to -32099 range JSON-RPC leaves to implementations)
// clear of the codes MCP and its SDKs give meanings to.
const CodeRefused = -32050

// Defaults of RefuseOptions.
const (
	// DefaultRefuseWait bounds how long Refuse waits for a first request.
	// A host writes initialize as soon as it has started the process, so
	// the request is normally waiting in the pipe already.
	DefaultRefuseWait = 10 * time.Second
	// DefaultRefuseLinger bounds how long, after its first answer, Refuse
	// keeps answering while the client has not closed stdin.
	DefaultRefuseLinger = 2 * time.Second
)

// RefuseOptions configures Refuse.
type RefuseOptions struct {
	// Wait bounds the wait for the first request; 0 means
	// DefaultRefuseWait.
	Wait time.Duration
	// Linger bounds how long later requests are still answered once one
	// has been; 0 means DefaultRefuseLinger.
	Linger time.Duration
	// MaxLineBytes bounds one inbound line, as in StdioOptions; 0 means
	// DefaultMaxLineBytes.
	MaxLineBytes int
	// Data, when set, is sent as the error's data member; it must be one
	// JSON value.
	Data json.RawMessage
	// Logger receives transport diagnostics; nil discards.
	Logger *slog.Logger

	// newTimer makes the Wait and Linger timer; nil means time.NewTimer.
	// Tests fire it when they choose.
	newTimer func(time.Duration) refuseTimer
}

// refuseTimer is the part of *time.Timer Refuse uses.
type refuseTimer interface {
	C() <-chan time.Time
	Reset(time.Duration)
	Stop()
}

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Reset(d time.Duration)      { r.t.Reset(d) }
func (r realTimer) Stop()                      { r.t.Stop() }
func newRealTimer(d time.Duration) refuseTimer { return realTimer{time.NewTimer(d)} }

// Refuse answers an MCP client over stdio that cannot be served: a process
// that fails before it can serve (no usable credential, a bad flag) would
// otherwise just exit, and a host then shows only that the connection
// closed. Refuse reads newline-delimited JSON-RPC from in and answers every
// request, initialize included, with a JSON-RPC error whose message is
// message (say what is wrong and what to do), so the host can show it to
// the person. Notifications and responses are not answered; lines that are
// not JSON-RPC are answered as RunStdio answers them.
//
// It returns nil when stdin ends, when ctx ends, when no request has come
// within Wait, or once Linger has passed since the first answer; and the
// error when out cannot be written. The caller then exits with its failure
// status. However it stops, every request of a line already read from in
// is answered first: in is not read again, and the lines left in what was
// read are answered (a last line still missing its end is not a request
// yet). A Read of in that is waiting when Refuse stops has read nothing
// then; the goroutine making it is left behind blocked while in stays
// open: Refuse is meant to be the last thing a process does.
func Refuse(ctx context.Context, in io.Reader, out io.Writer, message string, o RefuseOptions) error {
	if o.Wait <= 0 {
		o.Wait = DefaultRefuseWait
	}
	if o.Linger <= 0 {
		o.Linger = DefaultRefuseLinger
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	if o.newTimer == nil {
		o.newTimer = newRealTimer
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := refuser{filter: lineFilter{maxDepth: maxDepth}, errBody: refusalBody(message, o.Data)}

	type read struct {
		line    []byte
		tooLong bool
		err     error
	}
	src := &stoppable{r: in}
	lines := make(chan read)
	done := make(chan struct{})
	defer close(done)
	go func() {
		lr := lineReader{r: bufio.NewReaderSize(src, 64<<10), max: o.MaxLineBytes}
		for {
			line, tooLong, err := lr.next()
			if src.wasStopped() {
				// What next returned is the rest of the input read before
				// the stop, cut short by it: not a whole line.
				line, tooLong, err = nil, false, errStopped
			}
			rd := read{line: append([]byte(nil), line...), tooLong: tooLong, err: err}
			select {
			case lines <- rd:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	}()

	// answer writes the reply to one line; it reports whether the line held
	// a request.
	answer := func(rd read) (bool, error) {
		var reply []byte
		requests := 0
		if rd.tooLong {
			reply = errorAnswer(jsonrpc.CodeInvalidRequest, "Invalid request: line longer than "+strconv.Itoa(o.MaxLineBytes)+" bytes")
		} else {
			reply, requests = r.answer(rd.line)
		}
		if reply != nil {
			if _, err := out.Write(append(reply, '\n')); err != nil {
				return false, err
			}
		}
		return requests > 0, nil
	}
	// stop answers the lines already read, then returns.
	stop := func() error {
		if src.stop() {
			// in is being read: every line read before has been answered.
			return nil
		}
		for {
			rd := <-lines
			if rd.err != nil {
				return nil
			}
			if _, err := answer(rd); err != nil {
				return err
			}
		}
	}

	timer := o.newTimer(o.Wait)
	defer timer.Stop()
	answered := false
	expired := func() error {
		if !answered {
			log.Debug("no request came before the refusal wait ended", "wait", o.Wait)
		}
		return stop()
	}
	for {
		// A passed deadline, or ctx's end, is seen before another line is
		// taken.
		select {
		case <-ctx.Done():
			return stop()
		case <-timer.C():
			return expired()
		default:
		}
		var rd read
		select {
		case <-ctx.Done():
			return stop()
		case <-timer.C():
			return expired()
		case rd = <-lines:
		}
		if rd.err != nil {
			return nil // stdin ended (or failed): nobody is left to answer
		}
		req, err := answer(rd)
		if err != nil {
			return err
		}
		if req && !answered {
			answered = true
			timer.Reset(o.Linger)
		}
	}
}

// errStopped ends the reads of a stopped Refuse.
var errStopped = errors.New("server: refusal stopped")

// stoppable is Refuse's input: once stopped it is not read again, and it
// tells whether a Read was under way at the stop.
type stoppable struct {
	r  io.Reader
	mu sync.Mutex
	// reading: a Read of r is under way; stopped: stop was called; hit: a
	// Read came after the stop and was refused.
	reading, stopped, hit bool
}

func (s *stoppable) Read(p []byte) (int, error) {
	s.mu.Lock()
	if s.stopped {
		s.hit = true
		s.mu.Unlock()
		return 0, errStopped
	}
	s.reading = true
	s.mu.Unlock()
	n, err := s.r.Read(p)
	s.mu.Lock()
	s.reading = false
	s.mu.Unlock()
	return n, err
}

// stop ends the reads of r. It reports whether a Read was under way: the
// reader is then waiting for input, and whatever that Read returns comes
// after the stop.
func (s *stoppable) stop() (reading bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	return s.reading
}

// wasStopped reports whether a Read was refused because of the stop.
func (s *stoppable) wasStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hit
}

// refuser builds Refuse's answers.
type refuser struct {
	filter  lineFilter
	errBody string // the "error" member of every refusal
}

// refusalBody is the JSON-RPC error object every refusal carries.
func refusalBody(message string, data json.RawMessage) string {
	// Hosts show the message as it comes: < and > stay readable.
	body := `{"code":` + strconv.Itoa(CodeRefused) + `,"message":` + jsonw.String(message)
	if len(data) > 0 && json.Valid(data) {
		body += `,"data":` + string(data)
	}
	return body + "}"
}

// answer is the reply to one line (nil for none) and how many requests it
// refused.
func (r refuser) answer(line []byte) ([]byte, int) {
	doc, fail := r.filter.check(line)
	switch {
	case fail != nil:
		return errorAnswer(fail.code, fail.msg), 0
	case !doc.Exists():
		return nil, 0
	case doc.IsArray():
		var parts []byte
		n := 0
		for _, e := range doc.Array() {
			if a := r.one(e); a != nil {
				if n > 0 {
					parts = append(parts, ',')
				}
				parts = append(parts, a...)
				n++
			}
		}
		if n == 0 {
			return nil, 0
		}
		return append(append([]byte{'['}, parts...), ']'), n
	}
	if a := r.one(doc); a != nil {
		return a, 1
	}
	return nil, 0
}

// one is the refusal of one request, with its id echoed byte for byte, or
// nil for anything that is not a request with a usable id.
func (r refuser) one(m gjson.Result) []byte {
	if !m.IsObject() || !m.Get("method").Exists() {
		return nil
	}
	id := m.Get("id")
	if id.Type != gjson.String && id.Type != gjson.Number {
		return nil
	}
	return []byte(`{"jsonrpc":"2.0","id":` + id.Raw + `,"error":` + r.errBody + `}`)
}
