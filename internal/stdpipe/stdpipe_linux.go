package stdpipe

import (
	"errors"
	"io"
	"os"
	"strconv"
	"syscall"
)

func stdin() io.Reader { return reader(syscall.Stdin, os.Stdin) }

// procFD is where a descriptor of this process can be opened anew.
var procFD = "/proc/self/fd/"

// reader returns a poller-backed reader of fd when fd is a pipe or a
// socket and one can be had without touching fd's open file description,
// else f (fd's *os.File), read as it is.
func reader(fd int, f *os.File) io.Reader {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return f
	}
	var r io.Reader
	var err error
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFIFO:
		r, err = reopenPipe(fd, &st)
	case syscall.S_IFSOCK:
		r, err = watchSocket(fd)
	default:
		return f
	}
	if err != nil {
		return f
	}
	return r
}

// reopenPipe opens the pipe behind fd again, non-blocking: on Linux that
// makes a new open file description of the same pipe, so its flag is this
// process's alone. The descriptor is then read through the poller.
// O_NONBLOCK also keeps the open from waiting for a writer when the
// parent has closed its end already (reads then drain the pipe, then end).
func reopenPipe(fd int, st *syscall.Stat_t) (*os.File, error) {
	nfd, err := syscall.Open(procFD+strconv.Itoa(fd), syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	var nst syscall.Stat_t
	if err := syscall.Fstat(nfd, &nst); err != nil || nst.Dev != st.Dev || nst.Ino != st.Ino {
		syscall.Close(nfd)
		return nil, errors.New("stdpipe: the reopened descriptor is not the same pipe")
	}
	// os.NewFile registers a non-blocking descriptor with the poller.
	return os.NewFile(uintptr(nfd), "/dev/stdin"), nil
}

// socketReader reads a socket left blocking: an epoll instance of its own
// (non-blocking, so in Go's poller) says when the socket has data, and
// recv with MSG_DONTWAIT reads it without waiting, whatever the
// description's flag.
type socketReader struct {
	fd int      // the socket; never closed here
	ep *os.File // the epoll instance watching fd
	rc syscall.RawConn

	// One Read at a time: tryRead's arguments and results, kept here so
	// that a read allocates nothing.
	try  func(uintptr) bool // r.tryRead
	buf  []byte
	n    int
	rerr error
}

func watchSocket(fd int) (*socketReader, error) {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	// Level-triggered: the instance stays readable while the socket has
	// data or has ended.
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(fd)}
	if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		syscall.Close(ep)
		return nil, err
	}
	if err := syscall.SetNonblock(ep, true); err != nil {
		syscall.Close(ep)
		return nil, err
	}
	f := os.NewFile(uintptr(ep), "stdin-epoll")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	r := &socketReader{fd: fd, ep: f, rc: rc}
	r.try = r.tryRead
	return r, nil
}

func (r *socketReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.buf = p
	err := r.rc.Read(r.try)
	r.buf = nil
	switch {
	case err != nil:
		return 0, err
	case r.rerr != nil:
		return 0, &os.PathError{Op: "read", Path: "/dev/stdin", Err: r.rerr}
	case r.n == 0:
		return 0, io.EOF
	}
	return r.n, nil
}

// tryRead reads what the socket has without waiting; false sends the
// poller to wait until the epoll instance is readable, which it turns when
// the socket has data or has ended.
func (r *socketReader) tryRead(uintptr) bool {
	for {
		r.n, r.rerr = recvNoWait(r.fd, r.buf)
		if r.rerr != syscall.EINTR {
			return r.rerr != syscall.EAGAIN
		}
	}
}

// Close releases a Read in progress; the socket itself stays open.
func (r *socketReader) Close() error { return r.ep.Close() }
