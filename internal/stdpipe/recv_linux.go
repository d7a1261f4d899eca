//go:build linux && !386 && !s390x

package stdpipe

import (
	"syscall"
	"unsafe"
)

// recvNoWait is recv(fd, p, MSG_DONTWAIT) without syscall.Recvfrom's
// address buffer, which a stream socket does not fill and which costs an
// allocation per read.
func recvNoWait(fd int, p []byte) (int, error) {
	n, _, errno := syscall.Syscall6(syscall.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), syscall.MSG_DONTWAIT, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
