package server

import (
	"context"
	"encoding/json"
	"io"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// TestDirectWorkers: direct calls run on reused goroutines, at most
// maxIdleWorkers of them wait after a burst, and they end with the
// connection.
func TestDirectWorkers(t *testing.T) {
	c := &lineConn{jobs: make(chan func()), closed: make(chan struct{})}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s (idle workers %d)", what, c.idleWorkers.Load())
			}
			runtime.Gosched()
		}
	}

	// A burst of concurrent calls: each gets a goroutine.
	const burst = 3 * maxIdleWorkers
	release := make(chan struct{})
	var started, done sync.WaitGroup
	started.Add(burst)
	done.Add(burst)
	for range burst {
		c.run(func() { started.Done(); <-release; done.Done() })
	}
	started.Wait()
	close(release)
	done.Wait()
	waitFor("the burst's workers to settle", func() bool { return c.idleWorkers.Load() == maxIdleWorkers })

	// Calls one after another are taken by waiting workers: without reuse
	// each would start a goroutine.
	before := c.spawned.Load()
	for range 100 {
		ran := make(chan struct{})
		c.run(func() { close(ran) })
		<-ran
	}
	if n := c.spawned.Load() - before; n > 10 {
		t.Errorf("100 calls in a row started %d goroutines: the waiting workers were not reused", n)
	}
	if n := c.idleWorkers.Load(); n > maxIdleWorkers {
		t.Errorf("%d idle workers, want at most %d", n, maxIdleWorkers)
	}

	close(c.closed)
	waitFor("the workers to end with the connection", func() bool { return c.idleWorkers.Load() == 0 })
}

// TestAnswerLineOneAllocation: an encoded result is framed with the
// client's id and its newline in one buffer (the answer is not copied a
// second time to append the newline).
func TestAnswerLineOneAllocation(t *testing.T) {
	c := &lineConn{out: io.Discard}
	resp := &jsonrpc.Response{ID: intID(1), Result: json.RawMessage(`{"content":[{"type":"text","text":"x"}]}`)}
	id := []byte(`"client-7"`)
	allocs := testing.AllocsPerRun(100, func() {
		if err := c.writeLine(c.encodeAnswer(resp, 1, id)); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 1 {
		t.Errorf("%v allocations per answer line, want 1", allocs)
	}
}

// TestAnswerHoldKeepsBytesCounted: a direct call's RS bytes stay counted
// against the budget until the transport says its answer is written, and
// are free right after, without waiting on the request's context.
func TestAnswerHoldKeepsBytesCounted(t *testing.T) {
	budget := rs.NewBudget(1<<20, time.Second)
	c, d := newTestRS(t, rs.Options{Budget: budget})
	_, dir := NewWithDirect(Options{RS: c, ProviderURL: d.URL()})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ctx, answered := WithAnswerHold(ctx)
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "schema", Arguments: json.RawMessage(`{}`)}}
	res, wire, err := dir.Call(ctx, req)
	if err != nil || res.IsError || wire == nil {
		t.Fatalf("call: %v %v %s", err, res, wire)
	}
	if budget.Held() == 0 {
		t.Fatal("the answer's RS bytes were released before the answer was written")
	}
	answered()
	if n := budget.Held(); n != 0 {
		t.Errorf("%d bytes still counted after the answer was written", n)
	}
	answered() // a second call does nothing
}
