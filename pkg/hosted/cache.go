package hosted

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"
)

// Cache defaults.
const (
	DefaultPositiveTTL   = 60 * time.Second
	DefaultNegativeTTL   = 5 * time.Second
	DefaultCacheEntries  = 10_000
	DefaultVerifyWorkers = 16

	// flightTimeout bounds one shared verification, waiting included.
	flightTimeout = 30 * time.Second
)

// CacheOptions configures NewCachedVerifier.
type CacheOptions struct {
	// PositiveTTL bounds how long an accepted bearer is trusted without
	// asking again; a principal's own Expires shortens it. 0 means
	// DefaultPositiveTTL.
	PositiveTTL time.Duration
	// NegativeTTL is how long a refusal is remembered, so that a client
	// repeating a bad token does not turn into one upstream call per request.
	// 0 means DefaultNegativeTTL.
	NegativeTTL time.Duration
	// MaxEntries bounds the verdicts kept; 0 means DefaultCacheEntries.
	MaxEntries int
	// MaxConcurrent bounds verifications in flight at once (distinct tokens
	// not in the cache); 0 means DefaultVerifyWorkers.
	MaxConcurrent int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// CachedVerifier remembers verdicts of an inner Verifier by token hash (the
// token itself is never kept), collapses concurrent checks of one token into
// one upstream call, and bounds how many distinct tokens are checked at
// once. Failures to decide (upstream unreachable) are not remembered.
type CachedVerifier struct {
	inner Verifier
	opts  CacheOptions
	sem   chan struct{}
	group singleflight.Group

	mu      sync.Mutex
	entries map[string]verdictEntry

	hits, misses, calls atomic.Int64
}

type verdictEntry struct {
	p       *Principal
	err     *AuthError
	expires time.Time
}

// NewCachedVerifier wraps inner.
func NewCachedVerifier(inner Verifier, o CacheOptions) *CachedVerifier {
	if o.PositiveTTL <= 0 {
		o.PositiveTTL = DefaultPositiveTTL
	}
	if o.NegativeTTL <= 0 {
		o.NegativeTTL = DefaultNegativeTTL
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultCacheEntries
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = DefaultVerifyWorkers
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &CachedVerifier{inner: inner, opts: o, sem: make(chan struct{}, o.MaxConcurrent), entries: map[string]verdictEntry{}}
}

// CacheStats counts lookups answered from the cache, lookups that were not,
// and calls made to the inner verifier.
type CacheStats struct{ Hits, Misses, Calls int64 }

// Stats reports the counters so far.
func (c *CachedVerifier) Stats() CacheStats {
	return CacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Calls: c.calls.Load()}
}

// Verify answers from the cache or asks the inner verifier once for all
// concurrent callers with the same token.
func (c *CachedVerifier) Verify(ctx context.Context, token string) (*Principal, error) {
	key := TokenHash(token)
	if p, err, ok := c.lookup(key); ok {
		c.hits.Add(1)
		return p, err
	}
	c.misses.Add(1)
	ch := c.group.DoChan(key, func() (any, error) {
		// Another flight may have just stored the verdict.
		if p, err, ok := c.lookup(key); ok {
			return p, err
		}
		// The flight is shared, so no one caller's cancellation may end it;
		// it is bounded by flightTimeout and the verifier's own timeouts.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flightTimeout)
		defer cancel()
		select {
		case c.sem <- struct{}{}:
		case <-fctx.Done():
			return nil, fctx.Err()
		}
		defer func() { <-c.sem }()
		c.calls.Add(1)
		p, err := c.inner.Verify(fctx, token)
		c.store(key, p, err)
		return p, err
	})
	select {
	case r := <-ch:
		p, _ := r.Val.(*Principal)
		if p != nil {
			p = withHash(p, key)
		}
		return p, r.Err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func withHash(p *Principal, key string) *Principal {
	if p.TokenHash == key {
		return p
	}
	cp := *p
	cp.TokenHash = key
	return &cp
}

func (c *CachedVerifier) lookup(key string) (*Principal, error, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return nil, nil, false
	}
	if !c.opts.Now().Before(e.expires) {
		delete(c.entries, key)
		return nil, nil, false
	}
	if e.err != nil {
		return nil, e.err, true
	}
	return e.p, nil, true
}

func (c *CachedVerifier) store(key string, p *Principal, err error) {
	now := c.opts.Now()
	var e verdictEntry
	var ae *AuthError
	switch {
	case err == nil && p != nil:
		e.p = withHash(p, key)
		e.expires = now.Add(c.opts.PositiveTTL)
		if !p.Expires.IsZero() && p.Expires.Before(e.expires) {
			e.expires = p.Expires
		}
		if !now.Before(e.expires) {
			return
		}
	case errors.As(err, &ae):
		e.err = ae
		e.expires = now.Add(c.opts.NegativeTTL)
	default:
		return // undecided: ask again next time
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok && len(c.entries) >= c.opts.MaxEntries {
		c.evict(now)
	}
	c.entries[key] = e
}

// evict drops expired verdicts, and when none had expired, an arbitrary
// eighth of the rest: cheap, and a verdict dropped early only costs one more
// upstream call. c.mu is held.
func (c *CachedVerifier) evict(now time.Time) {
	n := len(c.entries)
	for k, e := range c.entries {
		if !now.Before(e.expires) {
			delete(c.entries, k)
		}
	}
	if len(c.entries) < n {
		return
	}
	drop := max(1, n/8)
	for k := range c.entries {
		delete(c.entries, k)
		if drop--; drop == 0 {
			return
		}
	}
}

// Len reports how many verdicts are held.
func (c *CachedVerifier) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
