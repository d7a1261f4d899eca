package fanout

import (
	"strings"
	"testing"
)

// FuzzDecodeCursor: whatever a caller sends as cursor, decoding never
// panics, and only a cursor this client signed for this query is accepted.
func FuzzDecodeCursor(f *testing.F) {
	c := &Client{key: []byte("fuzz-key-0123456789abcdef")}
	good := c.encodeCursor(&cursorState{V: 1, Q: "qh", Children: []childState{{I: 0, Cursor: "abc", Skip: 2, Base: 25}, {I: 1}}})
	f.Add(good)
	f.Add("fo1.")
	f.Add("fo1.e30.AAAA")
	f.Add(strings.Replace(good, "fo1.", "fo2.", 1))
	f.Fuzz(func(t *testing.T, s string) {
		st, err := c.decodeCursor(s, "qh")
		if err != nil {
			return
		}
		// Accepted: it must be the signed cursor, re-encoding to itself.
		if s != good && c.encodeCursor(st) != s {
			t.Fatalf("accepted a cursor this client did not make: %q", s)
		}
		if st.Q != "qh" || st.V != 1 {
			t.Fatalf("accepted %+v", st)
		}
	})
}
