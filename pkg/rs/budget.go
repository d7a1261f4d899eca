package rs

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// Process-wide memory budget defaults. 32 MiB holds two maximum-size
// answers at once; ordinary answers (a few KiB) never wait. The wait leaves
// a third of the default per-call timeout for the read itself.
const (
	DefaultBudgetBytes int64 = 32 << 20
	DefaultBudgetWait        = 20 * time.Second
)

// Budget bounds the RS body bytes buffered at once across every client that
// shares it. A read that cannot get room within the wait fails with
// CodeBusy instead of growing the process without bound.
type Budget struct {
	sem  *semaphore.Weighted
	size int64
	wait time.Duration
	held atomic.Int64
}

// Held is the number of bytes reserved now.
func (b *Budget) Held() int64 { return b.held.Load() }

// NewBudget returns a budget of size bytes whose reads queue for at most
// wait.
func NewBudget(size int64, wait time.Duration) *Budget {
	return &Budget{sem: semaphore.NewWeighted(size), size: size, wait: wait}
}

// processBudget is shared by every Client built without Options.Budget.
var processBudget = sync.OnceValue(func() *Budget {
	return NewBudget(DefaultBudgetBytes, DefaultBudgetWait)
})

// errBusy means the budget had no room within its wait.
var errBusy = errors.New("memory budget exhausted")

// acquire reserves n bytes (at most the whole budget). It returns errBusy
// when the wait runs out and ctx's error when ctx ends first.
func (b *Budget) acquire(ctx context.Context, n int64) (int64, error) {
	n = min(n, b.size)
	if n <= 0 {
		return 0, nil
	}
	if b.sem.TryAcquire(n) {
		b.held.Add(n)
		return n, nil
	}
	if background(ctx) {
		return 0, errBusy
	}
	wctx, cancel := context.WithTimeout(ctx, b.wait)
	defer cancel()
	if err := b.sem.Acquire(wctx, n); err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, errBusy
	}
	b.held.Add(n)
	return n, nil
}

func (b *Budget) release(n int64) {
	if n > 0 {
		b.held.Add(-n)
		b.sem.Release(n)
	}
}

// lease holds reservations until the work that uses the bodies is done, so
// the bytes stay counted while a tool renders them and the result is
// encoded, not only while they are read.
type lease struct {
	mu   sync.Mutex
	done bool
	// A call reads through one client, so one budget: first holds it
	// without a map; others holds any further ones.
	first  *Budget
	n      int64
	others map[*Budget]int64
}

type leaseKey struct{}

// WithLease returns a context whose RS reads keep their budget reservations
// until release is called (at most once matters; later calls do nothing).
// Without a lease a reservation ends when Get returns.
func WithLease(ctx context.Context) (context.Context, func()) {
	l := &lease{}
	return context.WithValue(ctx, leaseKey{}, l), l.release
}

type backgroundKey struct{}

// Background returns a context for reads no caller waits on (work done ahead
// of need, such as reading what a later answer could use). Such a read
// never queues for the budget: with no room free it fails at once as busy,
// so it cannot stand ahead of a caller's read in the queue. Its bytes are
// released when Get returns, never held by a lease in ctx.
func Background(ctx context.Context) context.Context {
	return context.WithValue(ctx, backgroundKey{}, true)
}

func background(ctx context.Context) bool {
	v, _ := ctx.Value(backgroundKey{}).(bool)
	return v
}

func (l *lease) add(b *Budget, n int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.done:
		return false
	case l.first == nil || l.first == b:
		l.first = b
		l.n += n
	default:
		if l.others == nil {
			l.others = map[*Budget]int64{}
		}
		l.others[b] += n
	}
	return true
}

func (l *lease) release() {
	l.mu.Lock()
	first, n, others := l.first, l.n, l.others
	l.first, l.n, l.others, l.done = nil, 0, nil, true
	l.mu.Unlock()
	if first != nil {
		first.release(n)
	}
	for b, n := range others {
		b.release(n)
	}
}

// reservation tracks the bytes one Get reserved.
type reservation struct {
	b     *Budget
	n     int64
	limit int64 // the body cap
}

// smallBody is how much of a body of unknown length is reserved step by
// step. Past it the rest of the cap is reserved at once, so a reader never
// holds part of the budget while waiting for more in small steps (which
// would let many partial readers starve each other until the wait ends).
const smallBody = 64 << 10

// grow makes sure the reservation covers a buffer of total bytes.
func (r *reservation) grow(ctx context.Context, total int64) error {
	if total <= r.n {
		return nil
	}
	if total > smallBody {
		total = max(total, r.limit)
	}
	// One body may take the whole budget but not more: a cap above the
	// budget must not make a read wait for room that can never exist.
	total = min(total, r.b.size)
	if total <= r.n {
		return nil
	}
	got, err := r.b.acquire(ctx, total-r.n)
	r.n += got
	return err
}

// shrink gives back what is reserved beyond n bytes.
func (r *reservation) shrink(n int64) {
	if r.n > n {
		r.b.release(r.n - n)
		r.n = n
	}
}

// end hands the reservation to ctx's lease, or releases it.
func (r *reservation) end(ctx context.Context) {
	if background(ctx) {
		r.b.release(r.n)
		return
	}
	if l, ok := ctx.Value(leaseKey{}).(*lease); ok && l.add(r.b, r.n) {
		return
	}
	r.b.release(r.n)
}
