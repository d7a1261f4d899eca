package testlog

import (
	"strings"
	"sync"
	"testing"
)

// Run under -race: concurrent writers and a reader must not race.
func TestBufferConcurrent(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				_, _ = b.Write([]byte("x"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := b.String(); got != strings.Repeat("x", 800) {
		t.Errorf("len = %d, want 800", len(got))
	}
}
