package fanout

import (
	"bytes"
	"strconv"
	"testing"
	"time"
)

// putAll stores payloads under the principals named, in order, and returns
// the ids.
func putAll(t *testing.T, s *cursorStore, now time.Time, principal func(i int) string, payload []byte, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		id, err := s.put(principal(i), payload, now)
		if err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
		ids[i] = id
	}
	return ids
}

func each(i int) string { return "principal-" + strconv.Itoa(i) }

// The store's bounds hold whoever fills it: 41 positions of 1 MiB (each for
// another principal, so no share bound is reached first) leave at most
// 32 MiB, the oldest gone and the newest kept; 4,106 small ones leave at most
// 4,096 entries.
func TestCursorStoreBounds(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	t.Run("bytes", func(t *testing.T) {
		s := newCursorStore()
		mib := bytes.Repeat([]byte{'x'}, 1<<20)
		ids := putAll(t, s, now, each, mib, 41)
		if _, n := s.len(); n > storedCursorMaxBytes {
			t.Errorf("store holds %d bytes after 41 positions of 1 MiB, over its %d", n, storedCursorMaxBytes)
		}
		if s.get(each(0), ids[0], now) != nil {
			t.Error("the oldest position is still held")
		}
		if s.get(each(40), ids[40], now) == nil {
			t.Error("the newest position is gone")
		}
	})
	t.Run("entries", func(t *testing.T) {
		s := newCursorStore()
		ids := putAll(t, s, now, each, []byte("{}"), storedCursorMaxEntries+10)
		if n, _ := s.len(); n > storedCursorMaxEntries {
			t.Errorf("store holds %d entries after %d puts, over its %d", n, storedCursorMaxEntries+10, storedCursorMaxEntries)
		}
		if s.get(each(0), ids[0], now) != nil {
			t.Error("the oldest position is still held")
		}
		last := len(ids) - 1
		if s.get(each(last), ids[last], now) == nil {
			t.Error("the newest position is gone")
		}
	})
}

// One principal gets a share of the store: filling it, in entries or in
// bytes, drops its own oldest positions and never another principal's.
func TestCursorStoreSharePerPrincipal(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	victim := func(int) string { return "victim" }
	attacker := func(int) string { return "attacker" }
	for _, tc := range []struct {
		name    string
		payload []byte
		n       int
	}{
		{"entries", []byte("{}"), storedCursorMaxEntries + 10},
		{"bytes", bytes.Repeat([]byte{'x'}, 1<<20), 41},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newCursorStore()
			kept := putAll(t, s, now, victim, []byte(`{"v":1}`), 10)
			ids := putAll(t, s, now, attacker, tc.payload, tc.n)
			for i, id := range kept {
				if s.get("victim", id, now) == nil {
					t.Fatalf("the victim's position %d was evicted by another principal's %d puts", i, tc.n)
				}
			}
			if s.get("attacker", ids[0], now) != nil {
				t.Error("the attacker's oldest position is still held past its share")
			}
			if s.get("attacker", ids[len(ids)-1], now) == nil {
				t.Error("the attacker's newest position is gone")
			}
			sh := s.shares["attacker"]
			if len(sh.entries) > storedCursorShareEntries || sh.bytes > storedCursorShareBytes {
				t.Errorf("one principal holds %d entries and %d bytes, over its share of %d and %d",
					len(sh.entries), sh.bytes, storedCursorShareEntries, storedCursorShareBytes)
			}
		})
	}
}

// When many principals fill the whole store, the entry dropped is the
// oldest of the one holding the most: a principal holding a little keeps it.
func TestCursorStoreFullDropsFromTheLargestShare(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := newCursorStore()
	kept := putAll(t, s, now, func(int) string { return "victim" }, []byte(`{"v":1}`), 10)
	// Sixteen principals, each up to its share: twice the store.
	putAll(t, s, now, func(i int) string { return each(i % 16) }, []byte("{}"), 2*storedCursorMaxEntries)
	if n, _ := s.len(); n > storedCursorMaxEntries {
		t.Fatalf("store holds %d entries, over its %d", n, storedCursorMaxEntries)
	}
	for i, id := range kept {
		if s.get("victim", id, now) == nil {
			t.Fatalf("the victim's position %d was evicted while others held more", i)
		}
	}
}

// Positions larger than a principal's share are refused, not kept over the
// bound.
func TestCursorStoreRefusesPositionsOverAShare(t *testing.T) {
	s := newCursorStore()
	if _, err := s.put("p", make([]byte, storedCursorShareBytes+1), time.Now()); err == nil {
		t.Error("positions over a share were kept")
	}
	if n, b := s.len(); n != 0 || b != 0 {
		t.Errorf("store holds %d entries, %d bytes", n, b)
	}
}
