package fanout

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// The composite cursor carries, per child, where its next hits start: the
// child cursor of the page they are on (re-read on the next call), how many
// hits of that page were already returned, the rank of the page's first hit
// (so fusion scores stay comparable across pages) and whether the child is
// exhausted. It is bound to the query it pages and signed, so a changed or
// forged cursor is refused rather than skipping or repeating hits.

// childState is one child's position.
type childState struct {
	// Grant names the member in memory; the cursor holds its index I in
	// the package (the query hash covers the member list, so the index
	// cannot point at another member).
	Grant string `json:"-"`
	I     int    `json:"i"`
	// Cursor reads the page the child's next hit is on; "" is the first page.
	Cursor string `json:"c,omitempty"`
	// Skip counts the hits of that page already returned.
	Skip int `json:"s,omitempty"`
	// Base is the child-wide rank of the page's first hit.
	Base int `json:"b,omitempty"`
	// Done: the child has no more hits.
	Done bool `json:"d,omitempty"`
}

type cursorState struct {
	V int `json:"v"`
	// Q binds the cursor to the query it pages (hash of q, streams, mode,
	// limit and filters).
	Q        string       `json:"q"`
	Children []childState `json:"k"`
}

const cursorPrefix = "fo1."

var errBadCursor = errors.New("fanout: cursor was not made by this package for this query")

func (c *Client) sign(payload []byte) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(cursorPrefix))
	m.Write(payload)
	return m.Sum(nil)[:16]
}

func (c *Client) encodeCursor(st *cursorState) string {
	payload, _ := json.Marshal(st) // strings, ints and bools always encode
	enc := base64.RawURLEncoding
	return cursorPrefix + enc.EncodeToString(payload) + "." + enc.EncodeToString(c.sign(payload))
}

func (c *Client) decodeCursor(s, queryHash string) (*cursorState, error) {
	body, ok := strings.CutPrefix(s, cursorPrefix)
	if !ok {
		return nil, errBadCursor
	}
	p, sig, ok := strings.Cut(body, ".")
	if !ok {
		return nil, errBadCursor
	}
	// Strict: a non-canonical spelling of the same bytes is not this cursor.
	enc := base64.RawURLEncoding.Strict()
	payload, err1 := enc.DecodeString(p)
	mac, err2 := enc.DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, c.sign(payload)) {
		return nil, errBadCursor
	}
	var st cursorState
	if err := json.Unmarshal(payload, &st); err != nil || st.V != 1 || st.Q != queryHash {
		return nil, errBadCursor
	}
	return &st, nil
}

// queryHash identifies what a cursor pages: the package's members and every
// parameter except cursor.
func (c *Client) queryHash(path string, q rs.Query) string {
	h := sha256.New()
	for i := range c.members {
		h.Write([]byte(c.members[i].GrantID))
		h.Write([]byte{0})
	}
	h.Write([]byte(path))
	for _, p := range q {
		if p.Key == "cursor" {
			continue
		}
		h.Write([]byte{0})
		h.Write([]byte(p.Key))
		h.Write([]byte{1})
		h.Write([]byte(p.Value))
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:12])
}
