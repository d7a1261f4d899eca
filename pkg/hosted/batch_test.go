package hosted

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

// TestBatchIsBoundedPerToken: one POST carrying a JSON-RPC batch of 100
// tool calls (2025-03-26 rules: no MCP-Protocol-Version header) with
// MaxInFlightPerToken 2 never has more than two RS reads of that bearer in
// flight, and still answers every call.
func TestBatchIsBoundedPerToken(t *testing.T) {
	const limit, calls = 2, 100
	d := pdpptest.New(t, pdpptest.Options{})
	var (
		mu       sync.Mutex
		inflight int
		peak     int
	)
	over := make(chan struct{})
	full := make(chan struct{}, 1)
	release := make(chan struct{})
	var closeOnce, releaseOnce sync.Once
	rsProxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inflight++
		peak = max(peak, inflight)
		n := inflight
		mu.Unlock()
		switch {
		case n > limit:
			closeOnce.Do(func() { close(over) })
		case n == limit:
			select {
			case full <- struct{}{}:
			default:
			}
		}
		// Hold every read until the test has seen the bound reached.
		select {
		case <-release:
		case <-r.Context().Done():
		}
		d.ServeHTTP(w, r)
		mu.Lock()
		inflight--
		mu.Unlock()
	}))
	t.Cleanup(rsProxy.Close)
	waiting := make(chan struct{}, calls)
	g := newGateway(t, gatewayOptions{double: d, introspect: true, mutate: func(o *Options) {
		o.ProviderURL = rsProxy.URL
		o.MaxInFlightPerToken = limit
	}})
	// Registered last, so it runs first: the servers' Close waits for the
	// reads this releases.
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	g.h.limiter.waiting = func() {
		select {
		case waiting <- struct{}{}:
		default:
		}
	}

	parts := make([]string, calls)
	for i := range parts {
		parts[i] = rpc(i+1, "tools/call", map[string]any{"name": "aggregate", "arguments": map[string]any{"stream": "messages", "metric": "count"}})
	}
	// One deadline for the whole test, from its context, instead of a
	// fixed wait per step: a gateway that stalls fails it once, and a
	// request that fails (g.do stops its goroutine) closes answer, which
	// fails the test at once.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	answer := make(chan exchange, 1)
	go func() {
		defer close(answer)
		answer <- g.do(t, req{ctx: ctx, token: d.Token(pdpptest.TokenClient), body: "[" + strings.Join(parts, ",") + "]"})
	}()

	// The bound is reached and a further read is waiting for a slot: from
	// then on the gate, not luck, decides. A third read in flight at any
	// point fails at once.
	sawFull, sawWait := false, false
	for !sawFull || !sawWait {
		select {
		case <-over:
			t.Fatalf("more than %d RS reads of one bearer in flight at once", limit)
		case <-full:
			sawFull = true
		case <-waiting:
			sawWait = true
		case _, ok := <-answer:
			if !ok {
				t.Fatal("the batch request failed")
			}
			t.Fatalf("the batch was answered before it reached %d reads in flight with one waiting (full %v, waiting %v)", limit, sawFull, sawWait)
		case <-ctx.Done():
			t.Fatalf("the batch never reached %d reads in flight with one waiting (full %v, waiting %v)", limit, sawFull, sawWait)
		}
	}
	releaseOnce.Do(func() { close(release) })
	var x exchange
	select {
	case a, ok := <-answer:
		if !ok {
			t.Fatal("the batch request failed")
		}
		x = a
	case <-over:
		t.Fatalf("more than %d RS reads of one bearer in flight at once", limit)
	case <-ctx.Done():
		t.Fatal("the batch got no answer")
	}
	if x.status != 200 {
		t.Fatalf("status %d\n%.400s", x.status, x.body)
	}
	var out []map[string]any
	if err := json.Unmarshal(x.body, &out); err != nil || len(out) != calls {
		t.Fatalf("want %d answers: %v\n%.400s", calls, err, x.body)
	}
	for _, o := range out {
		if o["result"] == nil {
			t.Fatalf("a call failed: %v", o)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if peak > limit {
		t.Errorf("peak RS reads in flight %d, want at most %d", peak, limit)
	}
	if n := g.h.limiter.len(); n != 0 {
		t.Errorf("limiter still holds %d bearers after the batch", n)
	}
}
