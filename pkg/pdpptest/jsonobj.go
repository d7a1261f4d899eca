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
	if o == nil {
		return []byte("null"), nil
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range o.members {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := encodeTo(&buf, m.key); err != nil {
			return nil, err
		}
		buf.WriteByte(':')
		if err := encodeTo(&buf, m.val); err != nil {
			return nil, err
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func encodeTo(buf *bytes.Buffer, v any) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1) // Encode appends a newline
	return nil
}

// marshal encodes v without HTML escaping.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := encodeTo(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
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
