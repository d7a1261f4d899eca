package cputime

import (
	"runtime"
	"testing"
)

// TestSelfGrows: where the system says, the CPU time of a process that has
// been computing is positive and does not go back.
func TestSelfGrows(t *testing.T) {
	d0, ok := Self()
	if !ok {
		if runtime.GOOS == "linux" || runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
			t.Fatalf("no CPU time on %s", runtime.GOOS)
		}
		t.Skipf("no CPU time on %s", runtime.GOOS)
	}
	// Spin until the clock the system keeps moves (it may tick coarsely),
	// for a bounded amount of work.
	x := 0
	for i := 1; i <= 1<<32; i++ {
		x += i * i
		if i%(1<<16) != 0 {
			continue
		}
		d1, _ := Self()
		if d1 < d0 {
			t.Fatalf("CPU time went back: %v then %v", d0, d1)
		}
		if d1 > d0 {
			return
		}
	}
	t.Fatalf("CPU time did not move from %v while computing (%d)", d0, x)
}
