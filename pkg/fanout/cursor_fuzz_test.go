package fanout

import (
	"strings"
	"testing"
	"time"
)

// FuzzDecodeCursor: whatever a caller sends as cursor, decoding never
// panics, and only a cursor this client signed for this query is accepted.
func FuzzDecodeCursor(f *testing.F) {
	c := &Client{key: []byte("fuzz-key-0123456789abcdef"), store: newCursorStore(), now: time.Now}
	encode := func(t testing.TB, st *cursorState) string {
		s, err := c.encodeCursor(st)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	good := encode(f, &cursorState{V: cursorVersion, Q: "qh", Children: []childState{{I: 0, Cursor: "abc", Skip: 2, Base: 25}, {I: 1}}})
	stored := encode(f, &cursorState{V: cursorVersion, Q: "qh", Children: []childState{{I: 0, Cursor: strings.Repeat("c", MaxCursorBytes)}}})
	f.Add(good)
	f.Add(stored)
	f.Add("fo2.")
	f.Add("fo2s.")
	f.Add("fo2.e30.AAAA")
	f.Add(strings.Replace(good, "fo2.", "fo1.", 1))
	f.Add(strings.Replace(stored, "fo2s.", "fo2.", 1))
	f.Fuzz(func(t *testing.T, s string) {
		st, err := c.decodeCursor(s, "qh")
		if err != nil {
			return
		}
		// Accepted: it must be a cursor this client made.
		if s != good && s != stored && encode(t, st) != s {
			t.Fatalf("accepted a cursor this client did not make: %q", s)
		}
		if st.Q != "qh" || st.V != cursorVersion {
			t.Fatalf("accepted %+v", st)
		}
	})
}
