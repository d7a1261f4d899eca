//go:build !linux

package stdpipe

import (
	"io"
	"os"
)

// stdin is os.Stdin: without /proc/self/fd and epoll there is no way to
// wait for it in the poller that leaves the shared description alone.
func stdin() io.Reader { return os.Stdin }
