package credential

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// Holder keeps the credential the process currently uses. A reload replaces
// it as a whole; every replacement gets a new generation number, which is how
// the Guard knows whether a token has been checked.
type Holder struct {
	cache Cache
	now   func() time.Time
	cur   atomic.Pointer[held]
}

type held struct {
	cred *Credential
	gen  uint64
}

// NewHolder starts with cred, loaded from cache.
func NewHolder(cache Cache, cred *Credential) *Holder {
	h := &Holder{cache: cache, now: time.Now}
	h.cur.Store(&held{cred: cred})
	return h
}

// Token returns the current bearer token; pass it as rs.Options.Token.
func (h *Holder) Token() string { return h.cur.Load().cred.token }

// Credential returns the current credential.
func (h *Holder) Credential() *Credential { return h.cur.Load().cred }

func (h *Holder) load() *held { return h.cur.Load() }

// swap replaces old with cred unless another swap got there first.
func (h *Holder) swap(old *held, cred *Credential) bool {
	return h.cur.CompareAndSwap(old, &held{cred: cred, gen: old.gen + 1})
}

// Getter is the resource-server read the Guard wraps (pkg/rs.Client).
type Getter interface {
	Get(ctx context.Context, path string, q rs.Query) (*rs.Response, error)
}

// Guard serves RS reads only with a token the RS has confirmed is not an owner
// token, and reloads the cached credential when the RS rejects the current one.
//
// Before the first read with a token it asks GET /v1/schema?view=compact and
// reads bearer.token_kind. When the RS cannot be asked, the read fails with
// that error and the next read asks again: data is never served with a token
// whose kind is unknown. An owner verdict makes every read fail with
// owner_token_refused. The Guard never uses any credential other than the
// cached one.
//
// Reads may run concurrently.
type Guard struct {
	rs Getter
	h  *Holder
	// swapMu keeps the token from changing while a request is in flight:
	// the RS client reads the token when it sends, so a swap in between
	// would send a token whose kind was never asked. Requests hold it
	// shared; a swap holds it exclusively.
	swapMu  sync.RWMutex
	log     *slog.Logger
	verdict atomic.Pointer[verdict]
	warned  atomic.Bool
}

// verdict is the probe outcome for one credential generation.
type verdict struct {
	gen   uint64
	owner bool
}

// NewGuard wraps client, whose token must come from h.Token. log may be nil.
func NewGuard(client Getter, h *Holder, log *slog.Logger) *Guard {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Guard{rs: client, h: h, log: log}
}

// maxAttempts bounds how often one read restarts because the credential was
// replaced while it was in flight.
const maxAttempts = 4

// BaseURL is the base URL of the resource server the guard reads, as its
// client says it (an *rs.Client does); "" when the client does not say.
func (g *Guard) BaseURL() string {
	if b, ok := g.rs.(interface{ BaseURL() string }); ok {
		return b.BaseURL()
	}
	return ""
}

// Get performs one RS read after the owner check. When the RS rejects the
// token it re-reads the cache, swaps in a changed credential for the next read
// and returns a *RejectedError saying which of those happened; the words a
// caller is shown are the tool layer's to choose.
func (g *Guard) Get(ctx context.Context, path string, q rs.Query) (*rs.Response, error) {
	for range maxAttempts {
		s := g.h.load()
		if v := g.verdict.Load(); v == nil || v.gen != s.gen {
			if err := g.probe(ctx, s, true); err != nil {
				return nil, err
			}
			continue
		} else if v.owner {
			return nil, errOwnerProbe(s.cred.ProviderURL, s.cred.File)
		}
		resp, stale, err := g.send(ctx, s, path, q)
		if stale || g.h.load().gen != s.gen {
			// The token changed during the call, so the answer may come from
			// a token that has not been checked yet. Start over.
			continue
		}
		if rsErr := rejection(err); rsErr != nil {
			return resp, g.reload(s, rsErr)
		}
		return resp, err
	}
	return nil, errors.New("the cached credential changed repeatedly during the call; repeat the call")
}

// send makes one RS request with the token of generation s; stale reports
// that the credential changed before it could be sent.
func (g *Guard) send(ctx context.Context, s *held, path string, q rs.Query) (resp *rs.Response, stale bool, err error) {
	g.swapMu.RLock()
	defer g.swapMu.RUnlock()
	if g.h.load() != s {
		return nil, true, nil
	}
	resp, err = g.rs.Get(ctx, path, q)
	return resp, false, err
}

// Probe checks the current token once, for start-up. It returns nil for a
// non-owner token, an *Error for an owner token (owner_token_refused) or a
// token the RS rejects (credential_rejected), and the RS or transport error
// when the RS could not answer; Get then checks again before the first read.
func (g *Guard) Probe(ctx context.Context) error {
	s := g.h.load()
	err := g.probe(ctx, s, false)
	if rsErr := rejection(err); rsErr != nil {
		return errRejected(s.cred.ProviderURL, s.cred.File, rsErr)
	}
	if err != nil {
		return err
	}
	if v := g.verdict.Load(); v != nil && v.gen == s.gen && v.owner {
		return errOwnerProbe(s.cred.ProviderURL, s.cred.File)
	}
	return nil
}

// probe records the token kind of generation s. It returns nil without a
// verdict when the credential changed meanwhile; the caller then looks again.
// In a session (Get), a rejected token makes it re-read the cache and an owner
// verdict is logged; the start-up Probe reports both to its caller instead.
// errStaleProbe ends a probe whose credential was replaced before it was sent.
var errStaleProbe = errors.New("credential replaced before the probe was sent")

func (g *Guard) probe(ctx context.Context, s *held, inSession bool) error {
	var stale bool
	v, err := ProbeKind(ctx, getterFunc(func(ctx context.Context, path string, q rs.Query) (*rs.Response, error) {
		resp, st, err := g.send(ctx, s, path, q)
		stale = st
		if st {
			// Nothing was sent; ProbeKind must not read a missing answer.
			return nil, errStaleProbe
		}
		return resp, err
	}))
	if stale || g.h.load().gen != s.gen {
		return nil
	}
	if err != nil {
		if rsErr := rejection(err); rsErr != nil && inSession {
			return g.reload(s, rsErr)
		}
		return err
	}
	if !v.Reported && g.warned.CompareAndSwap(false, true) {
		g.log.Warn("resource server did not report bearer.token_kind on /v1/schema; relying on the cache metadata alone to refuse owner tokens",
			"provider_url", s.cred.ProviderURL)
	}
	g.verdict.Store(&verdict{gen: s.gen, owner: v.Owner})
	if v.Owner && inSession {
		g.log.Error("refusing owner token: every tool call fails until pdpp-mcp restarts with a grant-scoped credential",
			"credential", s.cred, "source", "GET /v1/schema bearer.token_kind")
	}
	return nil
}

// getterFunc adapts a function to Getter.
type getterFunc func(ctx context.Context, path string, q rs.Query) (*rs.Response, error)

func (f getterFunc) Get(ctx context.Context, path string, q rs.Query) (*rs.Response, error) {
	return f(ctx, path, q)
}

// rejection returns the RS error when it says the token itself is no longer
// accepted (ClassifyRefusal: the token or its grant is dead).
func rejection(err error) *rs.Error {
	if r, e := ClassifyRefusal(err); r.Dead() {
		return e
	}
	return nil
}

// reload re-reads the cache after the RS rejected generation s and reports
// what it did, so that the caller can say whether repeating the call helps.
func (g *Guard) reload(s *held, rsErr *rs.Error) error {
	rej := &RejectedError{File: s.cred.File, Err: rsErr}
	if cur := g.h.load(); cur.gen != s.gen {
		rej.Outcome, rej.File = OutcomeRaced, cur.cred.File
		return rej
	}
	cred, err := g.h.cache.Load(g.h.now())
	switch {
	case err != nil:
		g.log.Warn("credential rejected and the cache holds no usable replacement", "credential", s.cred, "error", err)
		rej.Outcome, rej.Cause = OutcomeUnusable, err
	case cred.token == s.cred.token:
		g.log.Warn("credential rejected and the cache holds the same token", "credential", s.cred)
		rej.Outcome = OutcomeUnchanged
	default:
		g.swapMu.Lock()
		swapped := g.h.swap(s, cred)
		g.swapMu.Unlock()
		if !swapped && g.h.Token() != cred.token {
			rej.Outcome = OutcomeRaced
			return rej
		}
		g.log.Info("reloaded credential after the resource server rejected the previous token", "credential", cred)
		rej.Outcome = OutcomeReloaded
	}
	return rej
}
