package server

import (
	"context"
	"testing"
	"time"
)

// The trimmer trims only when no request is in flight, no request began
// since it was armed, it is not stopped, and the calls since the last trim
// allocated enough.
func TestIdleTrimmerRules(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps func(tr *idleTrimmer, alloc *uint64)
		want  int
	}{
		{"idle after calls that allocated enough", func(tr *idleTrimmer, alloc *uint64) {
			tr.begin()
			*alloc += trimMinAlloc
			tr.end()
		}, 1},
		{"idle after calls that allocated little", func(tr *idleTrimmer, alloc *uint64) {
			tr.begin()
			*alloc += trimMinAlloc - 1
			tr.end()
		}, 0},
		{"a request in flight", func(tr *idleTrimmer, alloc *uint64) {
			tr.begin()
			*alloc += trimMinAlloc
			tr.end()
			tr.begin()
		}, 0},
		{"a request began and ended since the timer was set", func(tr *idleTrimmer, alloc *uint64) {
			tr.begin()
			*alloc += trimMinAlloc
			tr.end()
			armed := tr.armed
			tr.begin()
			tr.end()
			tr.armed = armed // the first timer's firing, late
		}, 0},
		{"stopped", func(tr *idleTrimmer, alloc *uint64) {
			tr.begin()
			*alloc += trimMinAlloc
			tr.end()
			tr.stop()
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			trims := 0
			var alloc uint64 = 1 << 30
			tr := newIdleTrimmer(time.Hour, func() { trims++ })
			tr.allocated = func() uint64 { return alloc }
			tr.lastAlloc = alloc
			tc.steps(tr, &alloc)
			tr.fire() // as the timer would
			tr.stop()
			if trims != tc.want {
				t.Fatalf("%d trims, want %d", trims, tc.want)
			}
		})
	}
	// Allocation is counted from the last trim: a second idle spell right
	// after one needs new allocation.
	trims := 0
	var alloc uint64
	tr := newIdleTrimmer(time.Hour, func() { trims++ })
	tr.allocated = func() uint64 { return alloc }
	tr.lastAlloc = alloc
	defer tr.stop()
	tr.begin()
	alloc += trimMinAlloc
	tr.end()
	tr.fire()
	tr.begin()
	tr.end()
	tr.fire()
	if trims != 1 {
		t.Fatalf("%d trims, want 1", trims)
	}
}

var trimSink []byte

// Over stdio, a burst of calls that allocated enough is followed, once the
// server has been idle for IdleTrim, by one trim, on the SDK path and the
// direct one.
func TestStdioTrimsWhenIdle(t *testing.T) {
	bothPaths(t, func(t *testing.T, start func(*testing.T, context.Context, StdioOptions) *stdio) {
		trimmed := make(chan struct{}, 4)
		st := start(t, context.Background(), StdioOptions{IdleTrim: 20 * time.Millisecond, trim: func() { trimmed <- struct{}{} }})
		st.initialize("2025-11-25")
		trimSink = make([]byte, 2*trimMinAlloc) // what the burst allocated, counted process-wide
		st.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"schema","arguments":{}}}` + "\n")
		if a := st.recv(); len(a) == 0 {
			t.Fatal("no answer")
		}
		select {
		case <-trimmed:
		case <-time.After(answerDeadline):
			t.Fatal("no trim after the server went idle")
		}
		trimSink = nil
	})
}

// BenchmarkIdleTrimmer is what the trimmer adds to one request: its
// middleware's begin and end.
func BenchmarkIdleTrimmer(b *testing.B) {
	tr := newIdleTrimmer(time.Hour, func() {})
	defer tr.stop()
	for b.Loop() {
		tr.begin()
		tr.end()
	}
}
