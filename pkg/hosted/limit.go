package hosted

import (
	"context"
	"sync"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

// limiter bounds, per token hash, the requests in flight and the RS reads
// they make. One request may carry many calls (a JSON-RPC batch runs its
// calls at once), so counting requests alone would not bound the work a
// bearer puts on the RS: every RS read of a bearer also takes one of max
// read slots, and waits for one when all are taken. Entries exist only
// while requests or reads are in flight, so it holds no more than the live
// load.
type limiter struct {
	max int
	mu  sync.Mutex
	n   map[string]*load
	// waiting, when set, is called each time a read starts waiting for a
	// slot (for tests).
	waiting func()
}

type load struct {
	requests int           // requests in flight
	readers  int           // RS reads holding or waiting for a slot
	slots    chan struct{} // RS read slots
}

func newLimiter(max int) *limiter { return &limiter{max: max, n: map[string]*load{}} }

// entry returns key's load, creating it. l.mu is held.
func (l *limiter) entry(key string) *load {
	e := l.n[key]
	if e == nil {
		e = &load{slots: make(chan struct{}, l.max)}
		l.n[key] = e
	}
	return e
}

// drop forgets key's load when nothing of it is in flight. l.mu is held.
func (l *limiter) drop(key string, e *load) {
	if e.requests <= 0 && e.readers <= 0 && l.n[key] == e {
		delete(l.n, key)
	}
}

// acquire admits one request of key, or reports that max are in flight.
func (l *limiter) acquire(key string) (func(), bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entry(key)
	if e.requests >= l.max {
		l.drop(key, e)
		return nil, false
	}
	e.requests++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		e.requests--
		l.drop(key, e)
	}, true
}

// read waits for one of key's RS read slots, or for ctx to end.
func (l *limiter) read(ctx context.Context, key string) (func(), error) {
	l.mu.Lock()
	e := l.entry(key)
	e.readers++
	l.mu.Unlock()
	done := func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		e.readers--
		l.drop(key, e)
	}
	select {
	case e.slots <- struct{}{}:
		return func() { <-e.slots; done() }, nil
	default:
	}
	if l.waiting != nil {
		l.waiting()
	}
	select {
	case e.slots <- struct{}{}:
		return func() { <-e.slots; done() }, nil
	case <-ctx.Done():
		done()
		return nil, ctx.Err()
	}
}

// boundedRS makes every read of one bearer take one of its read slots.
type boundedRS struct {
	next tools.RS
	l    *limiter
	key  string
}

func (b boundedRS) Get(ctx context.Context, path string, q rs.Query) (*rs.Response, error) {
	release, err := b.l.read(ctx, b.key)
	if err != nil {
		return nil, err
	}
	defer release()
	return b.next.Get(ctx, path, q)
}
