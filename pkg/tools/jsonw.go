package tools

import (
	"bytes"
	"encoding/json"
)

// jsonWriter builds JSON by copying raw members of an existing document in
// their original order, so a projection keeps the RS's key order and value
// bytes without a decode/re-encode round trip.
type jsonWriter struct {
	buf bytes.Buffer
	// empty tracks, per open container, whether nothing was written yet.
	empty []bool
	// keyed is true between a key and its value.
	keyed bool
}

// sep writes the comma before a member that is not its container's first.
func (w *jsonWriter) sep() {
	if n := len(w.empty); n > 0 {
		if !w.empty[n-1] {
			w.buf.WriteByte(',')
		}
		w.empty[n-1] = false
	}
}

// startValue prepares for a value: a value after a key needs no separator,
// an array element does.
func (w *jsonWriter) startValue() {
	if w.keyed {
		w.keyed = false
		return
	}
	w.sep()
}

func (w *jsonWriter) open(c byte) {
	w.startValue()
	w.buf.WriteByte(c)
	w.empty = append(w.empty, true)
}

func (w *jsonWriter) close(c byte) {
	w.buf.WriteByte(c)
	w.empty = w.empty[:len(w.empty)-1]
}

func (w *jsonWriter) beginObject() { w.open('{') }
func (w *jsonWriter) endObject()   { w.close('}') }
func (w *jsonWriter) beginArray()  { w.open('[') }
func (w *jsonWriter) endArray()    { w.close(']') }

// key writes a member name; the next value written belongs to it.
func (w *jsonWriter) key(k string) {
	w.sep()
	b, _ := json.Marshal(k) // a string always encodes
	w.buf.Write(b)
	w.buf.WriteByte(':')
	w.keyed = true
}

// raw writes an already-encoded value.
func (w *jsonWriter) raw(v string) {
	w.startValue()
	w.buf.WriteString(v)
}

// str writes a string value.
func (w *jsonWriter) str(s string) {
	w.startValue()
	b, _ := json.Marshal(s)
	w.buf.Write(b)
}

// member writes "k": rawValue.
func (w *jsonWriter) member(k, rawValue string) {
	w.key(k)
	w.raw(rawValue)
}

func (w *jsonWriter) bytes() []byte { return w.buf.Bytes() }
