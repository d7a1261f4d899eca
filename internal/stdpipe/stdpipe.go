// Package stdpipe lets a process read its standard input through Go's
// network poller when the input is a pipe or a socket, as it is under an MCP
// host.
//
// A blocking read of stdin holds an OS thread inside the kernel between
// messages; a line that arrives wakes that thread, which must then take a
// scheduler slot back before the request can run. Read through the poller,
// the waiting goroutine costs no thread and the line is picked up by
// whichever thread is scheduling: on a stdio call of a few hundred
// microseconds that is a measurable share. A poller-backed file also honours
// Close and read deadlines, so a reader blocked on it can be released.
package stdpipe

import "os"

// Stdin returns a file for reading standard input and a function that puts
// the input back as it was; call it before exiting. When stdin is not a
// pipe or a socket (a terminal, a file, /dev/null) or cannot be switched,
// it returns os.Stdin and a no-op.
func Stdin() (*os.File, func()) { return pollable(os.Stdin) }
