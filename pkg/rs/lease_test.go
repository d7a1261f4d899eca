package rs

import (
	"context"
	"testing"
	"time"
)

// TestLeaseReleasesEveryBudget: a lease holding reservations of two budgets
// (a call reading through two clients) gives both back, once.
func TestLeaseReleasesEveryBudget(t *testing.T) {
	a, b := NewBudget(100, time.Millisecond), NewBudget(100, time.Millisecond)
	ctx, release := WithLease(context.Background())
	l := ctx.Value(leaseKey{}).(*lease)
	for _, r := range []struct {
		b *Budget
		n int64
	}{{a, 60}, {b, 70}, {a, 40}} {
		if _, err := r.b.acquire(ctx, r.n); err != nil {
			t.Fatal(err)
		}
		if !l.add(r.b, r.n) {
			t.Fatal("the lease refused a reservation before its release")
		}
	}
	if a.Held() != 100 || b.Held() != 70 {
		t.Fatalf("held %d and %d, want 100 and 70", a.Held(), b.Held())
	}
	release()
	release()
	if a.Held() != 0 || b.Held() != 0 || !a.sem.TryAcquire(100) || !b.sem.TryAcquire(100) {
		t.Error("the lease did not give back every budget's bytes")
	}
	if l.add(a, 1) {
		t.Error("a released lease took a reservation")
	}
}
