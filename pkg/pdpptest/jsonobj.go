package pdpptest

import (
	"bytes"
	"encoding/json"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// object is a JSON object that keeps its keys in insertion order. The reference
// server's answers have a stable key order (captures compare against it) and
// records keep their authored order, which a Go map would lose.
type object struct {
	members []member
}

type member struct {
	key string
	val any
}

// obj builds an object from alternating keys and values.
func obj(kv ...any) *object {
	o := &object{}
	for i := 0; i+1 < len(kv); i += 2 {
		o.set(kv[i].(string), kv[i+1])
	}
	return o
}

// set replaces the value of an existing key in place, or appends the key. This
// mirrors how a JavaScript object spread keeps the first position of a key.
func (o *object) set(key string, val any) *object {
	for i := range o.members {
		if o.members[i].key == key {
			o.members[i].val = val
			return o
		}
	}
	o.members = append(o.members, member{key, val})
	return o
}

// setIf sets key only when cond holds; it keeps optional keys readable at the
// call site.
func (o *object) setIf(cond bool, key string, val any) *object {
	if cond {
		o.set(key, val)
	}
	return o
}

func (o *object) get(key string) (any, bool) {
	for _, m := range o.members {
		if m.key == key {
			return m.val, true
		}
	}
	return nil, false
}

func (o *object) has(key string) bool {
	_, ok := o.get(key)
	return ok
}

func (o *object) del(key string) {
	for i := range o.members {
		if o.members[i].key == key {
			o.members = append(o.members[:i], o.members[i+1:]...)
			return
		}
	}
}

func (o *object) len() int { return len(o.members) }

// clone copies the member list (values are shared).
func (o *object) clone() *object {
	return &object{members: append([]member(nil), o.members...)}
}

// MarshalJSON writes the members in order without HTML escaping: the reference
// (a JavaScript server) sends "<p>" as is, not "\u003cp\u003e".
func (o *object) MarshalJSON() ([]byte, error) {
	return marshal(o)
}

// jsonWriter encodes a value tree into one buffer with one encoder. Objects
// and lists are walked here rather than through MarshalJSON, which would
// allocate an encoder per member and have encoding/json re-check and copy
// every nested object's bytes once per level.
type jsonWriter struct {
	buf bytes.Buffer
	enc *json.Encoder
}

func (w *jsonWriter) value(v any) error {
	switch v := v.(type) {
	case *object:
		if v == nil {
			w.buf.WriteString("null")
			return nil
		}
		w.buf.WriteByte('{')
		for i, m := range v.members {
			if i > 0 {
				w.buf.WriteByte(',')
			}
			if err := w.value(m.key); err != nil {
				return err
			}
			w.buf.WriteByte(':')
			if err := w.value(m.val); err != nil {
				return err
			}
		}
		w.buf.WriteByte('}')
		return nil
	case []any:
		return writeList(w, v)
	case []*object:
		return writeList(w, v)
	}
	if err := w.enc.Encode(v); err != nil {
		return err
	}
	w.buf.Truncate(w.buf.Len() - 1) // Encode appends a newline
	return nil
}

func writeList[T any](w *jsonWriter, list []T) error {
	if list == nil {
		w.buf.WriteString("null")
		return nil
	}
	w.buf.WriteByte('[')
	for i, e := range list {
		if i > 0 {
			w.buf.WriteByte(',')
		}
		if err := w.value(e); err != nil {
			return err
		}
	}
	w.buf.WriteByte(']')
	return nil
}

// marshal encodes v without HTML escaping.
func marshal(v any) ([]byte, error) {
	w := &jsonWriter{}
	w.enc = json.NewEncoder(&w.buf)
	w.enc.SetEscapeHTML(false)
	if err := w.value(v); err != nil {
		return nil, err
	}
	return w.buf.Bytes(), nil
}

// decodeObject decodes a JSON object into an ordered object whose values are
// json.RawMessage.
func decodeObject(raw []byte) (*object, error) {
	members, err := dataset.ObjectMembers(raw)
	if err != nil {
		return nil, err
	}
	o := &object{members: make([]member, 0, len(members))}
	for _, m := range members {
		o.members = append(o.members, member{m.Key, m.Value})
	}
	return o, nil
}
