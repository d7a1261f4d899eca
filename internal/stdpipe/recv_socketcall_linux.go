//go:build linux && (386 || s390x)

package stdpipe

import "syscall"

// recvNoWait is recv(fd, p, MSG_DONTWAIT); these systems reach it through
// socketcall, which syscall.Recvfrom knows.
func recvNoWait(fd int, p []byte) (int, error) {
	n, _, err := syscall.Recvfrom(fd, p, syscall.MSG_DONTWAIT)
	return n, err
}
