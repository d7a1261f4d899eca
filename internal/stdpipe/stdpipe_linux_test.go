package stdpipe

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// pair is a blocking stdin as a host hands it over: in is the end given
// to the process (the test keeps it, as a parent sharing it would), out
// the end the host writes.
type pair struct {
	in, out int
	inFile  *os.File // in as a file, which owns (and closes) it
	outFile *os.File // likewise out
}

func newPair(t testing.TB, kind string) pair {
	t.Helper()
	var fds [2]int
	var err error
	switch kind {
	case "pipe":
		err = syscall.Pipe2(fds[:], syscall.O_CLOEXEC)
	case "socket":
		fds, err = syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	default:
		t.Fatalf("kind %q", kind)
	}
	if err != nil {
		t.Fatal(err)
	}
	p := pair{in: fds[0], out: fds[1], inFile: os.NewFile(uintptr(fds[0]), "stdin"), outFile: os.NewFile(uintptr(fds[1]), "host")}
	t.Cleanup(func() { p.inFile.Close(); p.outFile.Close() })
	if nonblocking(t, p.in) {
		t.Fatal("the test needs a blocking stdin to start from")
	}
	return p
}

func (p pair) write(t testing.TB, s string) {
	t.Helper()
	if _, err := syscall.Write(p.out, []byte(s)); err != nil {
		t.Fatal(err)
	}
}

// TestReaderLeavesDescriptionAlone: a pipe and a socket are read through
// the poller (Close releases a Read waiting for data, which a blocking
// read would not) while the descriptor shared with the parent stays
// blocking, before, during and after; the data and the end of input come
// through, and closing the reader leaves the shared descriptor open.
func TestReaderLeavesDescriptionAlone(t *testing.T) {
	for _, kind := range []string{"pipe", "socket"} {
		t.Run(kind, func(t *testing.T) {
			p := newPair(t, kind)
			r := reader(p.in, p.inFile)
			if r == io.Reader(p.inFile) {
				t.Fatalf("a %s was not put in the poller", kind)
			}
			c, ok := r.(io.Closer)
			if !ok {
				t.Fatalf("%T cannot be closed", r)
			}

			p.write(t, "line one\n")
			buf := make([]byte, 9)
			if _, err := io.ReadFull(r, buf); err != nil || string(buf) != "line one\n" {
				t.Fatalf("read %q, %v", buf, err)
			}
			if nonblocking(t, p.in) {
				t.Fatal("the shared descriptor was made non-blocking")
			}

			// A Read waiting for data: the writer's next line reaches it.
			got := make(chan string, 1)
			go func() {
				b := make([]byte, 16)
				n, err := r.Read(b)
				if err != nil {
					got <- "error: " + err.Error()
					return
				}
				got <- string(b[:n])
			}()
			p.write(t, "two\n")
			if s := <-got; s != "two\n" {
				t.Fatalf("waiting read got %q", s)
			}

			// A Read waiting for data is released by Close.
			done := make(chan error, 1)
			go func() {
				_, err := r.Read(make([]byte, 16))
				done <- err
			}()
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if err == nil {
					t.Error("a read after Close succeeded")
				}
			case <-time.After(10 * time.Second): // bounds a failure, not a synchronisation
				t.Fatal("Close did not release a waiting read: it is not in the poller")
			}
			if nonblocking(t, p.in) {
				t.Error("the shared descriptor is non-blocking after Close")
			}
			// The shared descriptor is still open and reads what comes next.
			p.write(t, "three\n")
			b := make([]byte, 6)
			if n, err := syscall.Read(p.in, b); err != nil || string(b[:n]) != "three\n" {
				t.Errorf("the shared descriptor after Close: %q, %v", b[:n], err)
			}
		})
	}
}

// TestReaderEndOfInput: the host closing its end is the end of input,
// after what it wrote, also when it closed before stdin was opened.
func TestReaderEndOfInput(t *testing.T) {
	for _, kind := range []string{"pipe", "socket"} {
		for _, early := range []bool{false, true} {
			name := kind
			if early {
				name += ", closed before"
			}
			t.Run(name, func(t *testing.T) {
				p := newPair(t, kind)
				p.write(t, "last\n")
				if early {
					p.outFile.Close()
				}
				r := reader(p.in, p.inFile)
				defer r.(io.Closer).Close()
				if !early {
					p.outFile.Close()
				}
				b, err := io.ReadAll(r)
				if err != nil || string(b) != "last\n" {
					t.Errorf("read %q, %v", b, err)
				}
			})
		}
	}
}

// TestReaderFallsBack: a regular file is read as it is, and so is a pipe
// that cannot be reopened (no /proc).
func TestReaderFallsBack(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "in"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if r := reader(int(f.Fd()), f); r != io.Reader(f) {
		t.Error("a regular file was replaced")
	}

	p := newPair(t, "pipe")
	old := procFD
	procFD = filepath.Join(t.TempDir(), "nothing") + "/"
	defer func() { procFD = old }()
	if r := reader(p.in, p.inFile); r != io.Reader(p.inFile) {
		t.Errorf("a pipe that cannot be reopened gave %T", r)
	}
	if nonblocking(t, p.in) {
		t.Error("the fallback made the pipe non-blocking")
	}
}

func nonblocking(t testing.TB, fd int) bool {
	t.Helper()
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	return int(r)&syscall.O_NONBLOCK != 0
}

// BenchmarkLineRoundTrip is one line written by the host and read by the
// process, whose reading goroutine then hands it on, as lineConn does:
// stdin read as it is (blocking), through a non-blocking duplicate (the
// shared flag this package no longer sets; for comparison), and as Stdin
// reads it now.
//
//	go test -run '^$' -bench LineRoundTrip ./internal/stdpipe
func BenchmarkLineRoundTrip(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"aggregate","arguments":{"stream":"messages","metric":"count"}}}` + "\n")
	for _, kind := range []string{"pipe", "socket"} {
		for _, mode := range []string{"blocking", "shared-flag", "stdpipe"} {
			b.Run(kind+"/"+mode, func(b *testing.B) {
				p := newPair(b, kind)
				var r io.Reader
				switch mode {
				case "blocking":
					r = p.inFile
				case "shared-flag":
					dup, err := syscall.Dup(p.in)
					if err != nil {
						b.Fatal(err)
					}
					syscall.SetNonblock(dup, true)
					f := os.NewFile(uintptr(dup), "dup")
					b.Cleanup(func() { f.Close(); syscall.SetNonblock(p.in, false) })
					r = f
				case "stdpipe":
					r = reader(p.in, p.inFile)
					if r == io.Reader(p.inFile) {
						b.Fatal("not in the poller")
					}
					b.Cleanup(func() { r.(io.Closer).Close() })
				}
				got := make(chan int)
				go func() {
					buf := make([]byte, 64<<10)
					for {
						n, err := r.Read(buf)
						if err != nil {
							close(got)
							return
						}
						got <- n
					}
				}()
				for b.Loop() {
					if _, err := p.outFile.Write(line); err != nil {
						b.Fatal(err)
					}
					for n := 0; n < len(line); {
						m, ok := <-got
						if !ok {
							b.Fatal("stdin ended")
						}
						n += m
					}
				}
				p.outFile.Close()
				for range got {
				}
			})
		}
	}
}
