package fanout

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// The composite cursor carries, per child, where its next hits start: the
// child cursor of the page they are on (re-read on the next call), how many
// hits of that page were already returned, the rank of the page's first hit
// (so fusion scores stay comparable across pages) and whether the child is
// exhausted. It is bound to what it pages (the package, the principal, each
// member and where it reads, the path and the query) and signed, so a
// changed or forged cursor, or one made for another package or person, is
// refused rather than skipping or repeating hits.
//
// Every cursor handed out must be accepted back, and the tools take cursors
// of at most MaxCursorBytes. The positions travel in the cursor itself while
// they fit, so any replica that shares the signing key continues the search.
// When they do not (many members with long cursors of their own), they are
// kept in this process for StoredCursorTTL and the cursor names them: a
// bounded store, and a cursor only the process that made it can continue
// (another replica refuses it as expired, and a fresh search starts over).

// MaxCursorBytes is the longest cursor the fan-out hands out, and the longest
// child cursor it accepts from a member: the bound the RS client puts on
// handles, which the tools accept as a cursor argument. A member whose
// next_cursor is longer answers rs_invalid_response: a cut cursor could not
// be used, and one the tools refuse could never be passed back.
const MaxCursorBytes = rs.MaxHandleBytes

// Bounds of the store of positions too long to travel in the cursor: the
// whole store, and the share of one principal in it.
const (
	StoredCursorTTL          = 30 * time.Minute
	storedCursorMaxEntries   = 4096
	storedCursorMaxBytes     = 32 << 20
	storedCursorShareEntries = storedCursorMaxEntries / 8
	storedCursorShareBytes   = storedCursorMaxBytes / 8
)

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
	// Q binds the cursor to what it pages (see queryHash).
	Q        string       `json:"q"`
	Children []childState `json:"k"`
}

const (
	cursorVersion = 2
	// cursorPrefix starts a cursor that carries its positions;
	// storedPrefix one that names positions kept by the process.
	cursorPrefix = "fo2."
	storedPrefix = "fo2s."
)

var (
	errBadCursor     = errors.New("fanout: cursor was not made by this package for this query")
	errExpiredCursor = errors.New("fanout: cursor positions are no longer held")
)

func (c *Client) sign(prefix string, payload []byte) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(prefix))
	m.Write(payload)
	return m.Sum(nil)[:16]
}

func (c *Client) encodeCursor(st *cursorState) (string, error) {
	payload, _ := json.Marshal(st) // strings, ints and bools always encode
	enc := base64.RawURLEncoding
	if s := cursorPrefix + enc.EncodeToString(payload) + "." + enc.EncodeToString(c.sign(cursorPrefix, payload)); len(s) <= MaxCursorBytes {
		return s, nil
	}
	id, err := c.store.put(c.principal, payload, c.now())
	if err != nil {
		return "", err
	}
	return storedPrefix + id + "." + enc.EncodeToString(c.sign(storedPrefix, storedName(st.Q, id))), nil
}

// storedName is what a stored cursor's signature covers: the id of the
// positions and what they page, so an id is refused for another query,
// package or principal before the store is asked.
func storedName(queryHash, id string) []byte { return []byte(queryHash + "." + id) }

func (c *Client) decodeCursor(s, queryHash string) (*cursorState, error) {
	stored := strings.HasPrefix(s, storedPrefix)
	prefix := cursorPrefix
	if stored {
		prefix = storedPrefix
	}
	body, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return nil, errBadCursor
	}
	p, sig, ok := strings.Cut(body, ".")
	if !ok {
		return nil, errBadCursor
	}
	// Strict: a non-canonical spelling of the same bytes is not this cursor.
	enc := base64.RawURLEncoding.Strict()
	mac, err := enc.DecodeString(sig)
	if err != nil {
		return nil, errBadCursor
	}
	var payload []byte
	if stored {
		if !hmac.Equal(mac, c.sign(storedPrefix, storedName(queryHash, p))) {
			return nil, errBadCursor
		}
		if payload = c.store.get(c.principal, p, c.now()); payload == nil {
			return nil, errExpiredCursor
		}
	} else {
		payload, err = enc.DecodeString(p)
		if err != nil || !hmac.Equal(mac, c.sign(cursorPrefix, payload)) {
			return nil, errBadCursor
		}
	}
	var st cursorState
	if err := json.Unmarshal(payload, &st); err != nil || st.V != cursorVersion || st.Q != queryHash {
		return nil, errBadCursor
	}
	return &st, nil
}

// baseURLer is an RS client that says where it reads (*rs.Client does).
type baseURLer interface{ BaseURL() string }

// queryHash identifies what a cursor pages: the package and the principal,
// each member (its grant and, when known, the RS it reads) and every
// parameter except cursor. A package elsewhere whose members have the same
// grant ids, or another person's package, hashes differently.
func (c *Client) queryHash(path string, q rs.Query) string {
	h := sha256.New()
	field := func(s string) {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	field("pdpp-mcp fanout cursor 2")
	field(c.pkgID)
	field(c.principal)
	for i := range c.members {
		field(c.members[i].GrantID)
		if b, ok := c.members[i].RS.(baseURLer); ok {
			field(b.BaseURL())
		} else {
			field("")
		}
	}
	field(path)
	for _, p := range q {
		if p.Key == "cursor" {
			continue
		}
		field(p.Key)
		field(p.Value)
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:12])
}

// cursorStore keeps positions too long for a cursor, bounded in entries,
// bytes and age, in one share per principal: a principal never holds more
// than its share, and when the whole store is full the entry dropped is the
// oldest of the principal holding the most. So one principal filling the
// store drops its own positions, never those of another that holds less.
// Entries all live StoredCursorTTL, so the oldest is always the first to
// expire, and within a share eviction is first in, first out.
type cursorStore struct {
	mu sync.Mutex
	// Bounds of the whole store and of one principal's share.
	maxEntries, maxBytes     int
	shareEntries, shareBytes int
	shares                   map[string]*cursorShare
	entries, bytes           int
	// order is every entry in insertion order, for expiry; entries evicted
	// from their share are left in it until it is compacted.
	order []storedRef
	seq   uint64 // entries put so far
}

// cursorShare is one principal's positions.
type cursorShare struct {
	entries map[string]storedCursor
	order   []string // insertion order
	bytes   int
	// first is the sequence number of its oldest entry.
	first uint64
}

type storedCursor struct {
	payload []byte
	expires time.Time
	seq     uint64
}

type storedRef struct{ principal, id string }

func newCursorStore() *cursorStore {
	return newBoundedStore(storedCursorMaxEntries, storedCursorMaxBytes, storedCursorShareEntries, storedCursorShareBytes)
}

func newBoundedStore(maxEntries, maxBytes, shareEntries, shareBytes int) *cursorStore {
	return &cursorStore{maxEntries: maxEntries, maxBytes: maxBytes, shareEntries: shareEntries, shareBytes: shareBytes,
		shares: map[string]*cursorShare{}}
}

var processStore = newCursorStore()

// errCursorTooLarge: positions over a principal's whole share cannot be
// kept.
var errCursorTooLarge = errors.New("fanout: cursor positions are larger than the store keeps for one principal")

// put keeps payload for principal and returns its id.
func (s *cursorStore) put(principal string, payload []byte, now time.Time) (string, error) {
	if len(payload) > s.shareBytes || len(payload) > s.maxBytes {
		return "", errCursorTooLarge
	}
	var raw [16]byte
	_, _ = rand.Read(raw[:]) // crypto/rand does not fail on supported platforms
	id := base64.RawURLEncoding.EncodeToString(raw[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(now)
	if own := s.shares[principal]; own != nil {
		for len(own.order) > 0 && (len(own.entries) >= s.shareEntries || own.bytes+len(payload) > s.shareBytes) {
			s.drop(principal, own)
		}
	}
	for s.entries >= s.maxEntries || s.bytes+len(payload) > s.maxBytes {
		p, sh := s.largest(s.bytes+len(payload) > s.maxBytes)
		if sh == nil {
			break
		}
		s.drop(p, sh)
	}
	own := s.shares[principal]
	if own == nil {
		own = &cursorShare{entries: map[string]storedCursor{}}
		s.shares[principal] = own
	}
	s.seq++
	if len(own.order) == 0 {
		own.first = s.seq
	}
	own.entries[id] = storedCursor{payload: payload, expires: now.Add(StoredCursorTTL), seq: s.seq}
	own.order = append(own.order, id)
	own.bytes += len(payload)
	s.entries++
	s.bytes += len(payload)
	if len(s.order) >= 2*s.maxEntries {
		s.compact()
	}
	s.order = append(s.order, storedRef{principal, id})
	return id, nil
}

// largest is the share holding the most bytes (byBytes) or entries; among
// equals, the one whose oldest entry is oldest.
func (s *cursorStore) largest(byBytes bool) (string, *cursorShare) {
	var bp string
	var best *cursorShare
	size := func(sh *cursorShare) int {
		if byBytes {
			return sh.bytes
		}
		return len(sh.entries)
	}
	for p, sh := range s.shares {
		if best == nil || size(sh) > size(best) || size(sh) == size(best) && sh.first < best.first {
			bp, best = p, sh
		}
	}
	return bp, best
}

func (s *cursorStore) get(principal, id string, now time.Time) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(now)
	if sh := s.shares[principal]; sh != nil {
		return sh.entries[id].payload
	}
	return nil
}

// held reports whether ref's entry is still in its share.
func (s *cursorStore) held(ref storedRef) (*cursorShare, bool) {
	sh := s.shares[ref.principal]
	if sh == nil {
		return nil, false
	}
	_, ok := sh.entries[ref.id]
	return sh, ok
}

// expire drops the entries that have lived StoredCursorTTL. The oldest
// entry held is also the oldest of its share.
func (s *cursorStore) expire(now time.Time) {
	for len(s.order) > 0 {
		ref := s.order[0]
		if sh, ok := s.held(ref); ok {
			if now.Before(sh.entries[ref.id].expires) {
				return
			}
			s.drop(ref.principal, sh)
		}
		s.order[0] = storedRef{}
		s.order = s.order[1:]
	}
	s.order = nil // let the backing array go
}

// compact forgets the references to entries no longer held.
func (s *cursorStore) compact() {
	kept := make([]storedRef, 0, s.entries+1)
	for _, ref := range s.order {
		if _, ok := s.held(ref); ok {
			kept = append(kept, ref)
		}
	}
	s.order = kept
}

// drop forgets the share's oldest entry, and the share when it is empty.
func (s *cursorStore) drop(principal string, sh *cursorShare) {
	id := sh.order[0]
	sh.order[0] = ""
	sh.order = sh.order[1:]
	e := sh.entries[id]
	sh.bytes -= len(e.payload)
	s.bytes -= len(e.payload)
	s.entries--
	delete(sh.entries, id)
	if len(sh.order) == 0 {
		delete(s.shares, principal)
		return
	}
	sh.first = sh.entries[sh.order[0]].seq
}

// len is the number of entries and bytes held.
func (s *cursorStore) len() (entries, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.entries, s.bytes
}

// MinCursorKeyBytes is the shortest cursor signing key ReadCursorKey accepts.
const MinCursorKeyBytes = 32

// ReadCursorKey reads a cursor signing key shared by replicas: the bytes of
// file without surrounding white space. A key anyone on the machine may read
// or change, or one shorter than MinCursorKeyBytes, or made of fewer than 8
// distinct bytes (a placeholder, a repeated character), is refused: whoever
// holds the key can make cursors the gateway believes. Group access is
// allowed, as Kubernetes mounts a Secret for a non-root pod.
func ReadCursorKey(file string) ([]byte, error) {
	fi, err := os.Stat(file)
	if err != nil {
		return nil, fmt.Errorf("cursor key: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("cursor key %s is not a regular file", file)
	}
	if perm := fi.Mode().Perm(); perm&0o007 != 0 {
		return nil, fmt.Errorf("cursor key %s has mode %04o: other users may read or change it; chmod o-rwx it (0600 or 0640)", file, perm)
	}
	if fi.Size() > 64<<10 {
		return nil, fmt.Errorf("cursor key %s is %d bytes; a key is at most 64 KiB", file, fi.Size())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("cursor key: %w", err)
	}
	key := bytes.TrimSpace(b)
	distinct := map[byte]bool{}
	for _, c := range key {
		distinct[c] = true
	}
	if len(key) < MinCursorKeyBytes || len(distinct) < 8 {
		return nil, fmt.Errorf("cursor key %s is too weak (%d bytes, %d distinct): use at least %d random bytes, e.g. openssl rand -base64 48",
			file, len(key), len(distinct), MinCursorKeyBytes)
	}
	return key, nil
}
