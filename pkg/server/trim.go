package server

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultIdleTrim is how long a stdio server waits, once no request is in
// flight, before it collects what its calls left behind and returns that
// memory to the operating system.
//
// A stdio server spends most of its life idle between a host's bursts of
// calls. The collector is paced for calls (GOGC=400 in the command: a
// quarter as many collections as the default), so during a burst the heap
// grows to about 16 MB of garbage over a live heap of one or two, and
// without a collection that memory stays resident while the process waits.
// One collection after each burst costs nothing on the call path.
const DefaultIdleTrim = time.Second

// trimMinAlloc is what the calls since the last trim must have allocated
// for an idle spell to trim: a few small calls leave too little behind to
// be worth a collection.
const trimMinAlloc = 4 << 20

// idleTrimmer runs trim once no request has been in flight for after, when
// enough was allocated since it last ran.
type idleTrimmer struct {
	after time.Duration
	trim  func()
	// allocated reads the bytes allocated so far in the process.
	allocated func() uint64

	mu      sync.Mutex
	busy    int
	started uint64 // requests begun
	// armed is started when the timer was last set: a timer outrun by a
	// new request does nothing.
	armed     uint64
	timer     *time.Timer // one for the server's life, reset per idle spell
	lastAlloc uint64
	stopped   bool
}

func newIdleTrimmer(after time.Duration, trim func()) *idleTrimmer {
	t := &idleTrimmer{after: after, trim: trim, allocated: heapAllocated}
	if t.trim == nil {
		t.trim = debug.FreeOSMemory
	}
	t.lastAlloc = t.allocated()
	t.timer = time.AfterFunc(time.Hour, t.fire)
	t.timer.Stop()
	return t
}

// middleware counts the requests in flight.
func (t *idleTrimmer) middleware() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			t.begin()
			defer t.end()
			return next(ctx, method, req)
		}
	}
}

// begin leaves a set timer alone: when it fires, fire sees the request.
func (t *idleTrimmer) begin() {
	t.mu.Lock()
	t.busy++
	t.started++
	t.mu.Unlock()
}

func (t *idleTrimmer) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.busy--
	if t.busy > 0 || t.stopped {
		return
	}
	t.armed = t.started
	t.timer.Reset(t.after)
}

// fire trims unless a request began after the timer was set.
func (t *idleTrimmer) fire() {
	t.mu.Lock()
	if t.busy > 0 || t.started != t.armed || t.stopped {
		t.mu.Unlock()
		return
	}
	now := t.allocated()
	if now-t.lastAlloc < trimMinAlloc {
		t.mu.Unlock()
		return
	}
	t.lastAlloc = now
	t.mu.Unlock()
	t.trim()
}

// stop ends the trimming: a timer that fires after it does nothing.
func (t *idleTrimmer) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	t.timer.Stop()
}

// heapAllocated is the bytes the process has allocated on the heap so far.
func heapAllocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
