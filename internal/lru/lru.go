// Package lru is a cache bounded in entries, in bytes and in age. When a new
// entry does not fit, the least recently used entries are dropped first; an
// expired entry is dropped when it is next looked at or when room is needed.
//
// The caller says what an entry holds (its size in bytes) when it stores
// it, so the byte bound is only as honest as that size: count every byte the
// entry keeps reachable, key included.
package lru

import (
	"sync"
	"time"
)

// EntryOverhead approximates what the cache itself spends per entry (its
// list node, map slot and key headers), for callers sizing their entries.
const EntryOverhead = 128

// Cache maps K to V within its bounds. It is safe for concurrent use.
type Cache[K comparable, V any] struct {
	maxEntries int
	maxBytes   int64
	now        func() time.Time

	mu    sync.Mutex
	m     map[K]*node[K, V]
	root  node[K, V] // root.next is the most recently used, root.prev the least
	bytes int64
}

type node[K comparable, V any] struct {
	key        K
	val        V
	size       int64
	expires    time.Time
	prev, next *node[K, V]
}

// New returns a cache of at most maxEntries entries holding at most maxBytes
// bytes between them. now is the clock expiry is judged by (nil: time.Now).
func New[K comparable, V any](maxEntries int, maxBytes int64, now func() time.Time) *Cache[K, V] {
	if now == nil {
		now = time.Now
	}
	c := &Cache[K, V]{maxEntries: maxEntries, maxBytes: maxBytes, now: now, m: map[K]*node[K, V]{}}
	c.root.next, c.root.prev = &c.root, &c.root
	return c
}

// Get returns the live entry under k and marks it most recently used.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.m[k]
	if !ok {
		var zero V
		return zero, false
	}
	if !c.now().Before(n.expires) {
		c.remove(n)
		var zero V
		return zero, false
	}
	c.unlink(n)
	c.pushFront(n)
	return n.val, true
}

// Put stores v under k for ttl, in place of any entry k had, and drops the
// least recently used entries until the cache is within its bounds. An entry
// of more than the whole byte bound is not stored (and k's old entry is
// dropped, being stale): Put reports whether v was stored.
func (c *Cache[K, V]) Put(k K, v V, size int64, ttl time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[k]; ok {
		c.remove(old)
	}
	if size > c.maxBytes || c.maxEntries <= 0 {
		return false
	}
	now := c.now()
	// Expired entries go first, wherever they are in the list: the list
	// orders by use, not by age.
	if len(c.m) >= c.maxEntries || c.bytes+size > c.maxBytes {
		for n := c.root.prev; n != &c.root; {
			prev := n.prev
			if !now.Before(n.expires) {
				c.remove(n)
			}
			n = prev
		}
	}
	for len(c.m) >= c.maxEntries || c.bytes+size > c.maxBytes {
		c.remove(c.root.prev)
	}
	n := &node[K, V]{key: k, val: v, size: size, expires: now.Add(ttl)}
	c.m[k] = n
	c.bytes += size
	c.pushFront(n)
	return true
}

// Delete drops the entry under k, if any.
func (c *Cache[K, V]) Delete(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n, ok := c.m[k]; ok {
		c.remove(n)
	}
}

// Len is the number of entries stored, expired ones not yet dropped included.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// Bytes is the sum of the sizes of the entries stored.
func (c *Cache[K, V]) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

func (c *Cache[K, V]) remove(n *node[K, V]) {
	c.unlink(n)
	delete(c.m, n.key)
	c.bytes -= n.size
}

func (c *Cache[K, V]) unlink(n *node[K, V]) {
	n.prev.next, n.next.prev = n.next, n.prev
	n.prev, n.next = nil, nil
}

func (c *Cache[K, V]) pushFront(n *node[K, V]) {
	n.prev, n.next = &c.root, c.root.next
	c.root.next.prev = n
	c.root.next = n
}
