// Package stdpipe lets a process read its standard input through Go's
// network poller when the input is a pipe or a socket, as it is under an MCP
// host, without changing anything the process shares with its parent.
//
// A blocking read of stdin holds an OS thread inside the kernel between
// messages; a line that arrives wakes that thread, which must then take a
// scheduler slot back before the request can run. Read through the poller,
// the waiting goroutine costs no thread and the line is picked up by
// whichever thread is scheduling: on a stdio call of a few hundred
// microseconds that is a measurable share. A poller-backed reader also
// honours Close, so a reader blocked on it can be released.
//
// The poller needs a non-blocking descriptor, and O_NONBLOCK belongs to the
// open file description, which the parent (a host, a launcher started with
// inherited stdio, a shell script whose later commands read the same
// stdin) shares; a dup shares it too. Setting it there and clearing it on
// the way out leaves it set whenever the process ends without running
// code (SIGKILL, a signal's default action, a second SIGINT's immediate
// exit). So stdin is never switched: on Linux a pipe is reopened through
// /proc/self/fd, which gives this process a description of its own, and a
// socket is waited for through an epoll instance of its own and read with
// MSG_DONTWAIT. Anything else, and other systems, read stdin as it is.
package stdpipe

import "io"

// Stdin returns the reader of standard input. Closing it releases a read
// in progress (when it waits in the poller) and never closes descriptor 0
// itself, except where it is os.Stdin.
func Stdin() io.Reader { return stdin() }
