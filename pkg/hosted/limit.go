package hosted

import (
	"sync"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

// limiter bounds in-flight requests per token hash. Entries exist only
// while requests are in flight, so it holds no more than the live load.
type limiter struct {
	max int
	mu  sync.Mutex
	n   map[string]int
}

func newLimiter(max int) *limiter { return &limiter{max: max, n: map[string]int{}} }

func (l *limiter) acquire(key string) (func(), bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n[key] >= l.max {
		return nil, false
	}
	l.n[key]++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.n[key]--; l.n[key] <= 0 {
			delete(l.n, key)
		}
	}, true
}

// capCaches keeps one expand-check cache per credential (token hash),
// bounded: the least recently used is dropped when full.
type capCaches struct {
	max  int
	mu   sync.Mutex
	tick uint64
	m    map[string]*capEntry
}

type capEntry struct {
	c    *tools.CapabilityCache
	used uint64
}

func newCapCaches(max int) *capCaches { return &capCaches{max: max, m: map[string]*capEntry{}} }

func (cc *capCaches) get(key string) *tools.CapabilityCache {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.tick++
	if e, ok := cc.m[key]; ok {
		e.used = cc.tick
		return e.c
	}
	if len(cc.m) >= cc.max {
		var oldK string
		old := ^uint64(0)
		for k, e := range cc.m {
			if e.used < old {
				oldK, old = k, e.used
			}
		}
		delete(cc.m, oldK)
	}
	e := &capEntry{c: tools.NewCapabilityCache(), used: cc.tick}
	cc.m[key] = e
	return e.c
}
