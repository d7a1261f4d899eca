package credential

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
	"golang.org/x/sync/singleflight"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// Verdict is what the resource server says about a bearer token.
type Verdict struct {
	// Owner is true when the RS reports an owner token; such a token must
	// never be used to serve data.
	Owner bool
	// Reported is false when the RS did not say (no bearer.token_kind);
	// the token is then not known to be an owner token.
	Reported bool
	// Kind is bearer.token_kind as reported (trimmed), "" when absent.
	Kind string
	// GrantID and ClientID are bearer.grant_id and bearer.client_id, when
	// the RS names them.
	GrantID, ClientID string
}

// ProbeKind asks the resource server what kind of token get sends:
// GET /v1/schema?view=compact, field bearer.token_kind. It needs no
// credential file, so it serves any bearer. An RS or transport failure is
// returned wrapped (the *rs.Error stays reachable with errors.As); a token
// the RS refuses (see Rejection) is such an error.
func ProbeKind(ctx context.Context, get Getter) (Verdict, error) {
	resp, err := get.Get(ctx, "/v1/schema", rs.Query{{Key: "view", Value: "compact"}})
	if err != nil {
		if Rejection(err) != nil {
			return Verdict{}, fmt.Errorf("check token kind (GET /v1/schema): %w", err)
		}
		return Verdict{}, &ProbeError{Err: err}
	}
	// The RS client already refuses deep bodies; a Getter that is not that
	// client must not be able to crash the check either, so look again
	// before gjson's recursive walk.
	if err := rs.CheckDepth(resp.Body, rs.MaxDepth); err != nil {
		return Verdict{}, &ProbeError{Err: &rs.TransportError{
			Code: rs.CodeInvalidResponse, Status: resp.Status, RequestID: resp.RequestID, BaseURL: resp.BaseURL, Err: err}}
	}
	if !gjson.ValidBytes(resp.Body) { // gjson reads broken JSON leniently
		return Verdict{}, &ProbeError{Err: &rs.TransportError{Code: rs.CodeInvalidResponse, Status: resp.Status,
			RequestID: resp.RequestID, BaseURL: resp.BaseURL, Err: errors.New("the answer is not JSON")}}
	}
	b := gjson.GetBytes(resp.Body, "bearer")
	kind := b.Get("token_kind")
	return Verdict{
		Owner:    kind.Type == gjson.String && strings.EqualFold(strings.TrimSpace(kind.Str), "owner"),
		Reported: kind.Type == gjson.String,
		Kind:     strings.TrimSpace(kind.Str),
		GrantID:  b.Get("grant_id").Str,
		ClientID: b.Get("client_id").Str,
	}, nil
}

// Rejection returns the RS error when it says the token itself is no longer
// accepted: a 401 that is not a scope refusal, or a 403 for a revoked,
// expired or invalid grant.
func Rejection(err error) *rs.Error { return rejection(err) }

// KindChecker answers "what kind of token is this?" for any bearer, with a
// bounded cache of verdicts keyed by the SHA-256 of the token (the token
// itself is never kept). Concurrent checks of one token share one request.
// It is safe for concurrent use.
type KindChecker struct {
	o       KindCheckerOptions
	mu      sync.Mutex
	entries map[[sha256.Size]byte]kindEntry
	group   singleflight.Group
}

// KindCheckerOptions configures NewKindChecker.
type KindCheckerOptions struct {
	// Client returns the RS client that sends token. Required.
	Client func(token string) Getter
	// VerdictTTL is how long a verdict is reused; 0 means 30 s.
	VerdictTTL time.Duration
	// RejectedTTL is how long a token the RS refused stays refused
	// without asking again; 0 means 5 s. Other failures are not cached.
	RejectedTTL time.Duration
	// MaxEntries bounds the cache; 0 means 4096.
	MaxEntries int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

type kindEntry struct {
	v       Verdict
	err     error
	expires time.Time
}

// NewKindChecker returns a checker with an empty cache.
func NewKindChecker(o KindCheckerOptions) *KindChecker {
	if o.VerdictTTL <= 0 {
		o.VerdictTTL = 30 * time.Second
	}
	if o.RejectedTTL <= 0 {
		o.RejectedTTL = 5 * time.Second
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = 4096
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &KindChecker{o: o, entries: map[[sha256.Size]byte]kindEntry{}}
}

// Check returns the verdict for token, from the cache when it is fresh.
func (k *KindChecker) Check(ctx context.Context, token string) (Verdict, error) {
	key := sha256.Sum256([]byte(token))
	if e, ok := k.fresh(key); ok {
		return e.v, e.err
	}
	ch := k.group.DoChan(string(key[:]), func() (any, error) {
		if e, ok := k.fresh(key); ok { // a flight that just ended stored it
			return e.v, e.err
		}
		// The shared request must not end because the first caller left.
		v, err := ProbeKind(context.WithoutCancel(ctx), k.o.Client(token))
		k.store(key, v, err)
		return v, err
	})
	select {
	case r := <-ch:
		v, _ := r.Val.(Verdict)
		return v, r.Err
	case <-ctx.Done():
		return Verdict{}, context.Cause(ctx)
	}
}

func (k *KindChecker) fresh(key [sha256.Size]byte) (kindEntry, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	e, ok := k.entries[key]
	return e, ok && k.o.Now().Before(e.expires)
}

func (k *KindChecker) store(key [sha256.Size]byte, v Verdict, err error) {
	ttl := k.o.VerdictTTL
	if err != nil {
		if Rejection(err) == nil {
			return // the RS could not answer: ask again next time
		}
		ttl = k.o.RejectedTTL
	}
	now := k.o.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.entries[key]; !ok && len(k.entries) >= k.o.MaxEntries {
		for kk, e := range k.entries {
			if !now.Before(e.expires) {
				delete(k.entries, kk)
			}
		}
		for kk := range k.entries { // still full: drop any one
			if len(k.entries) < k.o.MaxEntries {
				break
			}
			delete(k.entries, kk)
		}
	}
	k.entries[key] = kindEntry{v: v, err: err, expires: now.Add(ttl)}
}

// Len reports how many verdicts are cached.
func (k *KindChecker) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.entries)
}
