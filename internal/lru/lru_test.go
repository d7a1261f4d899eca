package lru

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// op is one step of a scenario: put (size, ttl), get, delete or advance.
type op struct {
	do   string
	key  string
	size int64
	ttl  time.Duration
	// stored is what put must report.
	stored bool
}

func TestCache(t *testing.T) {
	const min = time.Minute
	for _, tc := range []struct {
		name      string
		entries   int
		bytes     int64
		ops       []op
		want      []string // live keys after ops, most recently used first
		wantBytes int64
	}{
		{
			name: "entry bound drops the least recently used", entries: 2, bytes: 100,
			ops:  []op{{do: "put", key: "a", size: 1, ttl: min, stored: true}, {do: "put", key: "b", size: 1, ttl: min, stored: true}, {do: "get", key: "a"}, {do: "put", key: "c", size: 1, ttl: min, stored: true}},
			want: []string{"c", "a"}, wantBytes: 2,
		},
		{
			name: "byte bound drops as many as it takes", entries: 10, bytes: 10,
			ops:  []op{{do: "put", key: "a", size: 4, ttl: min, stored: true}, {do: "put", key: "b", size: 4, ttl: min, stored: true}, {do: "put", key: "c", size: 2, ttl: min, stored: true}, {do: "put", key: "d", size: 9, ttl: min, stored: true}},
			want: []string{"d"}, wantBytes: 9,
		},
		{
			name: "an entry of exactly the bound is kept", entries: 10, bytes: 10,
			ops:  []op{{do: "put", key: "a", size: 10, ttl: min, stored: true}},
			want: []string{"a"}, wantBytes: 10,
		},
		{
			name: "an entry over the whole bound is not stored and drops its stale value", entries: 10, bytes: 10,
			ops:  []op{{do: "put", key: "a", size: 3, ttl: min, stored: true}, {do: "put", key: "b", size: 3, ttl: min, stored: true}, {do: "put", key: "a", size: 11, ttl: min, stored: false}},
			want: []string{"b"}, wantBytes: 3,
		},
		{
			name: "replacing an entry counts its new size only", entries: 10, bytes: 10,
			ops:  []op{{do: "put", key: "a", size: 6, ttl: min, stored: true}, {do: "put", key: "a", size: 8, ttl: min, stored: true}},
			want: []string{"a"}, wantBytes: 8,
		},
		{
			name: "expired entries are dropped before live ones", entries: 3, bytes: 100,
			ops: []op{{do: "put", key: "old", size: 1, ttl: time.Second, stored: true}, {do: "put", key: "a", size: 1, ttl: min, stored: true},
				{do: "put", key: "b", size: 1, ttl: min, stored: true}, {do: "get", key: "old"}, {do: "advance", ttl: 2 * time.Second},
				{do: "put", key: "c", size: 1, ttl: min, stored: true}},
			want: []string{"c", "b", "a"}, wantBytes: 3,
		},
		{
			name: "an expired entry is a miss and is dropped", entries: 3, bytes: 100,
			ops:  []op{{do: "put", key: "a", size: 5, ttl: time.Second, stored: true}, {do: "advance", ttl: time.Second}, {do: "get", key: "a"}},
			want: nil, wantBytes: 0,
		},
		{
			name: "delete", entries: 3, bytes: 100,
			ops:  []op{{do: "put", key: "a", size: 5, ttl: min, stored: true}, {do: "put", key: "b", size: 5, ttl: min, stored: true}, {do: "delete", key: "a"}},
			want: []string{"b"}, wantBytes: 5,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &clock{t: time.Unix(0, 0)}
			c := New[string, string](tc.entries, tc.bytes, clk.now)
			for i, o := range tc.ops {
				switch o.do {
				case "put":
					if got := c.Put(o.key, "v"+o.key, o.size, o.ttl); got != o.stored {
						t.Fatalf("op %d: Put(%s) = %v, want %v", i, o.key, got, o.stored)
					}
				case "get":
					c.Get(o.key)
				case "delete":
					c.Delete(o.key)
				case "advance":
					clk.t = clk.t.Add(o.ttl)
				}
			}
			if got := c.order(); !slices.Equal(got, tc.want) {
				t.Errorf("live keys %q, want %q", got, tc.want)
			}
			if c.Bytes() != tc.wantBytes || c.Len() != len(tc.want) {
				t.Errorf("%d bytes in %d entries, want %d in %d", c.Bytes(), c.Len(), tc.wantBytes, len(tc.want))
			}
			for _, k := range tc.want {
				if v, ok := c.Get(k); !ok || v != "v"+k {
					t.Errorf("Get(%s) = %q, %v", k, v, ok)
				}
			}
		})
	}
}

// order lists the keys from most to least recently used.
func (c *Cache[K, V]) order() []K {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []K
	for n := c.root.next; n != &c.root; n = n.next {
		out = append(out, n.key)
	}
	return out
}

// The bounds hold under concurrent use (run with -race).
func TestCacheConcurrent(t *testing.T) {
	c := New[string, int](16, 1000, nil)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				k := fmt.Sprint((g*7 + i) % 40)
				if i%3 == 0 {
					c.Put(k, i, int64(i%200), time.Minute)
				} else {
					c.Get(k)
				}
			}
		}()
	}
	wg.Wait()
	if c.Len() > 16 || c.Bytes() > 1000 {
		t.Fatalf("%d entries, %d bytes: over the bounds", c.Len(), c.Bytes())
	}
	var sum int64
	c.mu.Lock()
	for _, n := range c.m {
		sum += n.size
	}
	c.mu.Unlock()
	if sum != c.Bytes() {
		t.Fatalf("entries hold %d bytes, the count says %d", sum, c.Bytes())
	}
}
