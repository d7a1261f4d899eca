//go:build unix

package stdpipe

import (
	"os"
	"syscall"
)

// pollable returns a poller-backed duplicate of f when f is a pipe or a
// socket. The duplicate shares f's open file description, whose
// non-blocking flag is also seen by any other process holding the same
// pipe end: restore clears it again, through f, which stays open.
func pollable(f *os.File) (*os.File, func()) {
	noop := func() {}
	fd := int(f.Fd())
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return f, noop
	}
	if kind := st.Mode & syscall.S_IFMT; kind != syscall.S_IFIFO && kind != syscall.S_IFSOCK {
		return f, noop
	}
	dup, err := syscall.Dup(fd)
	if err != nil {
		return f, noop
	}
	syscall.CloseOnExec(dup)
	if err := syscall.SetNonblock(dup, true); err != nil {
		syscall.Close(dup)
		return f, noop
	}
	// os.NewFile registers a non-blocking descriptor with the poller.
	return os.NewFile(uintptr(dup), f.Name()), func() { _ = syscall.SetNonblock(fd, false) }
}
