package hosted

import (
	"sync"
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
