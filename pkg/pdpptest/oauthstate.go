package pdpptest

import (
	"container/list"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
)

// What the authorization server keeps, and what it does not.
//
// Everything it hands out carries its own content, sealed (AES-256-GCM)
// under a key derived from Options.TokenSeed (random without one): client
// ids carry their registration, codes and tokens carry the approval they
// come from. A double started again with the same seed therefore knows
// every client, code and token the previous one issued, and keeps no
// per-client state at all.
//
// What cannot be sealed is what changes after issue: whether a code has been
// exchanged, which refresh token of an approval is the current one, and
// whether the approval was revoked because a spent one was replayed. That is
// one small entry per approval (a "family"), in a map bounded in entries and
// bytes whose expired entries are swept on every access; when it is full the
// approval whose code was exchanged or token refreshed longest ago is
// dropped. A family the map does not hold is refused when it was born in
// this process (dropped, so possibly revoked: its host authorizes again) and
// adopted when it is older than the process (issued before a restart), so a
// restart keeps hosts signed in; what a restart forgets is which spent codes
// and refresh tokens were already replayed.

// sealer seals and opens the values the authorization server issues.
type sealer struct {
	aead     cipher.AEAD
	nonceKey []byte
}

// newSealer derives the keys from seed, or draws them when seed is nil.
func newSealer(seed []byte) *sealer {
	key := make([]byte, 32)
	if seed == nil {
		_, _ = rand.Read(key) // crypto/rand never fails on supported platforms
	} else {
		m := hmac.New(sha256.New, seed)
		m.Write([]byte("pdpptest authorization server sealing key v1"))
		key = m.Sum(nil)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		panic(err) // a 32-byte key is always valid
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("nonce"))
	return &sealer{aead: aead, nonceKey: m.Sum(nil)}
}

// maxSealedLen bounds a sealed value accepted from a client, before any
// decoding.
const maxSealedLen = 8 << 10

// seal encodes v as prefix followed by its sealed JSON. The nonce is a MAC
// of the content (as in SIV), so one content always seals to one string:
// a package's child tokens are the same on every resolution. The prefix is
// the additional data, so a value sealed as one kind never opens as
// another.
func (s *sealer) seal(prefix string, v any) string {
	pt, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain structs are sealed
	}
	m := hmac.New(sha256.New, s.nonceKey)
	m.Write([]byte(prefix))
	m.Write(pt)
	nonce := m.Sum(nil)[:s.aead.NonceSize()]
	return prefix + base64.RawURLEncoding.EncodeToString(s.aead.Seal(nonce, nonce, pt, []byte(prefix)))
}

// open reverses seal into v; false for anything seal did not make with
// this key and prefix.
func (s *sealer) open(prefix, sealed string, v any) bool {
	rest, ok := strings.CutPrefix(sealed, prefix)
	if !ok || len(sealed) > maxSealedLen {
		return false
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || len(raw) < s.aead.NonceSize()+s.aead.Overhead() {
		return false
	}
	n := s.aead.NonceSize()
	pt, err := s.aead.Open(nil, raw[:n], raw[n:], []byte(prefix))
	return err == nil && json.Unmarshal(pt, v) == nil
}

// Prefixes of the sealed values: each kind has its own.
const (
	prefixClient  = "dcr_"
	prefixCode    = "code_"
	prefixRefresh = "rt_"
	prefixAccess  = "pdpp_oa_"
)

// registration is what a client id carries. ID tells apart two clients
// that register the same metadata at once, so that nothing bound to one
// client is honoured for another.
type registration struct {
	ID           string   `json:"i"`
	RedirectURIs []string `json:"r"`
	Name         string   `json:"n,omitempty"`
	IssuedAt     int64    `json:"t"`
}

// approval is what the person approved, carried by the code and every token
// issued from it.
type approval struct {
	Family string `json:"f"` // random id of this approval
	Born   int64  `json:"b"` // when it was approved, Unix seconds
	// Client is a digest of the client id it was approved for.
	Client      string   `json:"c"`
	Connections []string `json:"s"`
	Audience    string   `json:"a"`
}

// codeClaims is an authorization code.
type codeClaims struct {
	approval
	Redirect  string `json:"r"` // digest of the redirect URI
	Challenge string `json:"p"` // PKCE S256 challenge
	Expires   int64  `json:"x"`
}

// tokenClaims is a refresh token, an access token or (Child set) the
// token of one child of a package access token. Gen is the approval's
// refresh generation it belongs to: 1 for the code's tokens, one more on
// every refresh.
type tokenClaims struct {
	approval
	Gen     uint32 `json:"g"`
	Expires int64  `json:"x"`
	Child   string `json:"o,omitempty"`
}

// digest is a short one-way name for a value a sealed claim must match.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:12])
}

// family is the state of one approval: the refresh generation in use (0
// until its code is exchanged) and whether it was revoked.
type family struct {
	gen     uint32
	revoked bool
}

// expiring is a map bounded in entries and bytes, whose entries expire ttl
// after they were last put. Entries are kept in the order they were put
// (get and update do not move them), so expired ones are swept from the
// old end on every access, and when it is full the one put longest ago is
// dropped. It is not internal/lru: codes and consents are taken (read and
// removed at once), a revocation updates an entry without renewing it, and
// a drop is counted for the log. Not safe for concurrent use.
type expiring[V any] struct {
	ttl                 time.Duration
	maxEntries, maxSize int
	size                int // bytes accounted, keys included
	order               list.List
	byKey               map[string]*list.Element
}

type expiringEntry[V any] struct {
	key     string
	v       V
	expires time.Time
	size    int
}

// entryOverhead approximates the bytes an entry costs besides its key and
// value: the list element, the map slot and the entry struct.
const entryOverhead = 160

func newExpiring[V any](ttl time.Duration, maxEntries, maxSize int) *expiring[V] {
	return &expiring[V]{ttl: ttl, maxEntries: maxEntries, maxSize: maxSize, byKey: map[string]*list.Element{}}
}

// sweep drops the entries expired at now.
func (m *expiring[V]) sweep(now time.Time) {
	for e := m.order.Front(); e != nil; e = m.order.Front() {
		if now.Before(e.Value.(*expiringEntry[V]).expires) {
			return
		}
		m.remove(e)
	}
}

func (m *expiring[V]) remove(e *list.Element) {
	x := m.order.Remove(e).(*expiringEntry[V])
	delete(m.byKey, x.key)
	m.size -= x.size
}

// get returns the live entry for key.
func (m *expiring[V]) get(now time.Time, key string) (V, bool) {
	m.sweep(now)
	if e, ok := m.byKey[key]; ok {
		return e.Value.(*expiringEntry[V]).v, true
	}
	var zero V
	return zero, false
}

// put stores v under key for ttl from now, as the newest entry; valueSize
// is the bytes v holds beyond its fixed size. It drops the oldest entries
// while the map is over either bound and reports how many it dropped.
func (m *expiring[V]) put(now time.Time, key string, v V, valueSize int) (dropped int) {
	m.sweep(now)
	if e, ok := m.byKey[key]; ok {
		m.remove(e)
	}
	x := &expiringEntry[V]{key: key, v: v, expires: now.Add(m.ttl), size: len(key) + valueSize + entryOverhead}
	m.byKey[key] = m.order.PushBack(x)
	m.size += x.size
	for m.order.Len() > m.maxEntries || m.size > m.maxSize {
		m.remove(m.order.Front())
		dropped++
	}
	return dropped
}

// update replaces the value of a live entry without renewing it; false
// when there is none.
func (m *expiring[V]) update(now time.Time, key string, v V) bool {
	m.sweep(now)
	e, ok := m.byKey[key]
	if ok {
		e.Value.(*expiringEntry[V]).v = v
	}
	return ok
}

// take removes and returns the live entry for key.
func (m *expiring[V]) take(now time.Time, key string) (V, bool) {
	m.sweep(now)
	e, ok := m.byKey[key]
	if !ok {
		var zero V
		return zero, false
	}
	v := e.Value.(*expiringEntry[V]).v
	m.remove(e)
	return v, true
}

func (m *expiring[V]) len() int { return m.order.Len() }
