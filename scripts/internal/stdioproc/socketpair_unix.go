//go:build unix

package stdioproc

import (
	"os"
	"syscall"
)

// socketPair returns the two ends of a connected Unix stream socket pair:
// child for a binary's stdin, host for writing to it. Neither is inherited
// by any other process started meanwhile (ForkLock keeps a fork from
// coming between the pair's creation and its close-on-exec flag, which
// not every system can set at creation).
func socketPair() (child, host *os.File, err error) {
	syscall.ForkLock.RLock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "stdin"), os.NewFile(uintptr(fds[1]), "host"), nil
}
