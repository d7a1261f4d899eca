package main

import (
	"bytes"
	"context"
	"io"
	"slices"
	"sort"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func pendingKeys(d *drain) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var ks []string
	for k := range d.pending {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func TestDrainTracksRequests(t *testing.T) {
	for _, tt := range []struct {
		name    string
		in, out []string // chunks read from stdin, written to stdout
		want    []string
	}{
		{"answered", []string{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n"}, []string{`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"}, nil},
		{"error answer", []string{`{"jsonrpc":"2.0","id":"a","method":"x"}` + "\n"}, []string{`{"jsonrpc":"2.0","id":"a","error":{"code":-32601}}` + "\n"}, nil},
		{"unanswered", []string{`{"jsonrpc":"2.0","id":7,"method":"tools/call"}` + "\n"}, nil, []string{"n:7"}},
		{"notification", []string{`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"}, nil, nil},
		{"null id", []string{`{"jsonrpc":"2.0","id":null,"method":"x"}` + "\n"}, nil, nil},
		{"split request without final newline", []string{`{"jsonrpc":"2.0","id":`, `3,"method":"x"}`}, nil, []string{"n:3"}},
		{"string and number ids differ", []string{`{"id":"1","method":"x"}` + "\n" + `{"id":1,"method":"x"}` + "\n"},
			[]string{`{"id":1,"result":{}}` + "\n"}, []string{"s:1"}},
		{"1.0 answers 1", []string{`{"id":1.0,"method":"x"}` + "\n"}, []string{`{"id":1,"result":{}}` + "\n"}, nil},
		{"batch", []string{`[{"id":1,"method":"x"},{"id":2,"method":"y"},{"method":"n"}]` + "\n"},
			[]string{`[{"id":2,"result":{}}]` + "\n"}, []string{"n:1"}},
		{"cancelled", []string{`{"id":4,"method":"tools/call"}` + "\n" + `{"method":"notifications/cancelled","params":{"requestId":4}}` + "\n"}, nil, nil},
		{"server request is not an answer", []string{`{"id":5,"method":"x"}` + "\n"}, []string{`{"id":5,"method":"ping"}` + "\n"}, []string{"n:5"}},
		{"answer split across writes", []string{`{"id":6,"method":"x"}` + "\n"}, []string{`{"id":6,"res`, `ult":{}}` + "\n"}, nil},
		{"garbage", []string{"not json\n{\n"}, []string{"]]\n"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := newDrain(context.Background(), time.Hour)
			r := d.reader(io.MultiReader(readers(tt.in)...))
			if _, err := io.ReadAll(io.LimitReader(r, int64(len(strings.Join(tt.in, ""))))); err != nil {
				t.Fatal(err)
			}
			// The reader has not seen io.EOF yet; a final line without a
			// newline is flushed when it does, which Read would wait on, so
			// flush it directly here.
			r.(*drainReader).in.flush()
			w := d.writer(io.Discard)
			for _, c := range tt.out {
				w.Write([]byte(c))
			}
			if got := pendingKeys(d); !slices.Equal(got, tt.want) {
				t.Errorf("pending = %q, want %q", got, tt.want)
			}
		})
	}
}

func readers(chunks []string) []io.Reader {
	var rs []io.Reader
	for _, c := range chunks {
		rs = append(rs, strings.NewReader(c))
	}
	return rs
}

func TestDrainReaderHoldsEOF(t *testing.T) {
	// synctest.Wait tells when the reading goroutine is blocked for good, so
	// the test knows io.EOF is being held without sleeping.
	synctest.Test(t, func(t *testing.T) {
		const req = `{"jsonrpc":"2.0","id":1,"method":"tools/call"}` + "\n"
		d := newDrain(context.Background(), time.Hour)
		r := d.reader(strings.NewReader(req))
		w := d.writer(io.Discard)

		// The first Read delivers the request (and registers it) without EOF.
		buf := make([]byte, 1024)
		n, err := r.Read(buf)
		if err != nil || string(buf[:n]) != req {
			t.Fatalf("first Read = %q, %v", buf[:n], err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := r.Read(buf)
			done <- err
		}()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Read returned %v before the request was answered", err)
		default:
		}
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"))
		if err := <-done; err != io.EOF {
			t.Errorf("second Read error = %v, want io.EOF", err)
		}
	})
}

func TestDrainReaderLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDrain(context.Background(), time.Minute)
		r := d.reader(strings.NewReader(`{"id":1,"method":"x"}` + "\n"))
		start := time.Now()
		if _, err := io.ReadAll(r); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != time.Minute {
			t.Errorf("waited %s for an unanswered request, want the 1m limit", waited)
		}
	})
}

// TestDrainReaderGivesUp: a zero limit or an ended context releases io.EOF
// although a request is unanswered.
func TestDrainReaderGivesUp(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, d := range []*drain{newDrain(context.Background(), 0), newDrain(ctx, time.Hour)} {
		r := d.reader(strings.NewReader(`{"id":1,"method":"x"}` + "\n"))
		if _, err := io.ReadAll(r); err != nil {
			t.Fatal(err)
		}
		if len(pendingKeys(d)) != 1 {
			t.Errorf("pending = %q", pendingKeys(d))
		}
	}
}

// FuzzLines checks that splitting a stream into chunks never changes the
// lines seen.
func FuzzLines(f *testing.F) {
	f.Add([]byte("a\nb\n"), 1)
	f.Add([]byte(`{"id":1}`+"\n"+`{"id":2}`), 5)
	f.Add([]byte("\n\n\n"), 0)
	f.Fuzz(func(t *testing.T, data []byte, cut int) {
		collect := func(chunks ...[]byte) []string {
			var out []string
			l := lines{fn: func(b []byte) { out = append(out, string(b)) }}
			for _, c := range chunks {
				l.feed(c)
			}
			l.flush()
			return out
		}
		whole := collect(data)
		if cut < 0 {
			cut = -cut
		}
		if len(data) > 0 {
			cut %= len(data) + 1
		} else {
			cut = 0
		}
		split := collect(data[:cut], data[cut:])
		if !slices.Equal(whole, split) {
			t.Errorf("lines differ when cut at %d: %q vs %q", cut, whole, split)
		}
		if want := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n"); len(data) > 0 && !slices.Equal(whole, dropEmptyLast(want, data)) {
			t.Errorf("lines = %q, want %q", whole, want)
		}
	})
}

// dropEmptyLast mirrors lines: a trailing segment is reported only when it
// is not empty.
func dropEmptyLast(want []string, data []byte) []string {
	if !bytes.HasSuffix(data, []byte("\n")) && len(want) > 0 && want[len(want)-1] == "" {
		return want[:len(want)-1]
	}
	return want
}
