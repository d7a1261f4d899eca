//go:build unix

package stdpipe

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestPollablePipe: a pipe's read end comes back poller-backed (it honours
// read deadlines, which only such files do), reads what was written, and
// restore leaves the shared pipe end blocking again.
func TestPollablePipe(t *testing.T) {
	// os.Pipe's ends are poller-backed already; a host hands a blocking one.
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	r, w := os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	defer r.Close()
	defer w.Close()
	if err := r.SetReadDeadline(time.Now()); !errors.Is(err, os.ErrNoDeadline) {
		t.Fatalf("the test needs a blocking pipe to start from; deadline: %v", err)
	}
	p, restore := pollable(r)
	if p == r {
		t.Fatal("a pipe was not switched to the poller")
	}
	defer p.Close()
	if err := p.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatalf("not poller-backed: %v", err)
	}
	if _, err := w.WriteString("line\n"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(p, buf); err != nil || string(buf) != "line\n" {
		t.Fatalf("read %q, %v", buf, err)
	}
	if !nonblocking(t, r) {
		t.Error("the pipe end is not non-blocking while served")
	}
	restore()
	if nonblocking(t, r) {
		t.Error("restore left the pipe end non-blocking")
	}
}

// TestRegularFileUnchanged: a file (or a terminal) is read as it is.
func TestRegularFileUnchanged(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "in"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, restore := pollable(f)
	defer restore()
	if p != f {
		t.Error("a regular file was replaced")
	}
}

func nonblocking(t *testing.T, f *os.File) bool {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags int
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		var errno syscall.Errno
		var r uintptr
		r, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		flags = int(r)
		if errno != 0 {
			ferr = errno
		}
	}); err != nil {
		t.Fatal(err)
	}
	if ferr != nil {
		t.Fatal(ferr)
	}
	return flags&syscall.O_NONBLOCK != 0
}
