package dataset

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
)

// The demo generator writes record payloads with this small appender instead of
// encoding/json: the key order is the order of the calls (records keep their
// authored order on the wire), and skipping reflection keeps Demo() well inside
// the --demo cold-start budget.

// jsonObj appends one JSON object to a scratch buffer.
type jsonObj struct {
	b []byte
	n int // members written so far
}

// begin resets the scratch buffer and opens the object.
func (o *jsonObj) begin() {
	o.b = append(o.b[:0], '{')
	o.n = 0
}

func (o *jsonObj) key(k string) {
	if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.n++
	o.b = jsonw.AppendString(o.b, k)
	o.b = append(o.b, ':')
}

func (o *jsonObj) str(k, v string) {
	o.key(k)
	o.b = jsonw.AppendString(o.b, v)
}

// optStr writes v, or null when v is empty.
func (o *jsonObj) optStr(k, v string) {
	if v == "" {
		o.null(k)
		return
	}
	o.str(k, v)
}

func (o *jsonObj) int(k string, v int) {
	o.key(k)
	o.b = strconv.AppendInt(o.b, int64(v), 10)
}

// time writes t as a timestamp string.
func (o *jsonObj) time(k string, t time.Time) {
	o.key(k)
	o.b = append(o.b, '"')
	o.b = appendTS(o.b, t)
	o.b = append(o.b, '"')
}

// money writes an amount held in minor units (cents) as a JSON number with the
// shortest exact decimal form, the way a JSON encoder prints a float64.
func (o *jsonObj) money(k string, cents int64) {
	o.key(k)
	o.b = appendMoney(o.b, cents)
}

func (o *jsonObj) bool(k string, v bool) {
	o.key(k)
	o.b = strconv.AppendBool(o.b, v)
}

func (o *jsonObj) null(k string) {
	o.key(k)
	o.b = append(o.b, "null"...)
}

func (o *jsonObj) strs(k string, vs []string) {
	o.key(k)
	o.b = appendJSONStrings(o.b, vs)
}

// raw writes an already encoded JSON value.
func (o *jsonObj) raw(k string, v []byte) {
	o.key(k)
	o.b = append(o.b, v...)
}

// close closes the object and returns the scratch buffer itself, for one-off
// objects that are embedded in another right away.
func (o *jsonObj) close() []byte {
	o.b = append(o.b, '}')
	return o.b
}

// end closes the object and copies it out of the scratch buffer.
func (o *jsonObj) end(a *arena) json.RawMessage {
	o.b = append(o.b, '}')
	return a.copy(o.b)
}

func appendJSONStrings(b []byte, vs []string) []byte {
	b = append(b, '[')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonw.AppendString(b, v)
	}
	return append(b, ']')
}

func appendMoney(b []byte, cents int64) []byte {
	return strconv.AppendFloat(b, float64(cents)/100, 'f', -1, 64)
}

// arena hands out immutable copies carved from large chunks, so thousands of
// small payloads cost a handful of allocations.
type arena struct {
	chunk []byte
}

const arenaChunk = 256 << 10

func (a *arena) copy(b []byte) []byte {
	if len(b) > arenaChunk/4 {
		return append([]byte(nil), b...)
	}
	if cap(a.chunk)-len(a.chunk) < len(b) {
		a.chunk = make([]byte, 0, arenaChunk)
	}
	start := len(a.chunk)
	a.chunk = append(a.chunk, b...)
	// The three-index slice caps the copy so an append by a caller cannot spill
	// into the next payload.
	return a.chunk[start:len(a.chunk):len(a.chunk)]
}
