package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
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
}

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
// status. The goroutine reading in is left behind blocked when in stays
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
	lines := make(chan read)
	done := make(chan struct{})
	defer close(done)
	go func() {
		lr := lineReader{r: bufio.NewReaderSize(in, 64<<10), max: o.MaxLineBytes}
		for {
			line, tooLong, err := lr.next()
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

	timer := time.NewTimer(o.Wait)
	defer timer.Stop()
	answered := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
			if !answered {
				log.Debug("no request came before the refusal wait ended", "wait", o.Wait)
			}
			return nil
		case rd := <-lines:
			if rd.err != nil {
				return nil // stdin ended (or failed): nobody is left to answer
			}
			var reply []byte
			requests := 0
			if rd.tooLong {
				reply = errorAnswer(jsonrpc.CodeInvalidRequest, "Invalid request: line longer than "+strconv.Itoa(o.MaxLineBytes)+" bytes")
			} else {
				reply, requests = r.answer(rd.line)
			}
			if reply != nil {
				if _, err := out.Write(append(reply, '\n')); err != nil {
					return err
				}
			}
			if requests > 0 && !answered {
				answered = true
				timer.Reset(o.Linger)
			}
		}
	}
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
