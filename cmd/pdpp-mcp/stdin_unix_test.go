//go:build unix

package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStdinLeftBlocking: the stdin a host hands over (a pipe, or a socket
// as Node-based hosts give) is shared with whoever else holds it, here the
// test itself. However pdpp-mcp ends (stdin closed, a signal that kills
// it without running any code, the host closing stdout, a second SIGINT or
// SIGTERM while stopping), the shared description is left blocking: a
// non-blocking one breaks the next reader, such as the shell of a script.
func TestStdinLeftBlocking(t *testing.T) {
	for _, kind := range []string{"pipe", "socket"} {
		for _, end := range []string{"stdin closed", "SIGHUP", "SIGQUIT", "SIGKILL", "SIGPIPE", "second SIGINT", "second SIGTERM"} {
			t.Run(kind+"/"+end, func(t *testing.T) {
				isolate(t, nil)
				h, srv := newHangingRS(t)
				root := t.TempDir()
				writeCache(t, root, srv.URL, tokenMember("scoped-token"))
				in, host := stdinPair(t, kind)
				cmd := exec.Command(os.Args[0], "--provider-url", srv.URL, "--cache-root", root, "--timeout", "60s", "--log-level", "debug")
				cmd.Env = append(os.Environ(), "PDPP_MCP_TEST_MAIN=1")
				cmd.Stdin = in
				stdout, err := cmd.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				stderr, err := cmd.StderrPipe()
				if err != nil {
					t.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cmd.Process.Kill() })
				// stopping is closed once the first signal is taken (RunStdio's
				// debug line), ended once stderr ends.
				stopping, ended := make(chan struct{}), make(chan struct{})
				go func() {
					defer close(ended)
					sc := bufio.NewScanner(stderr)
					seen := false
					for sc.Scan() {
						if !seen && strings.Contains(sc.Text(), `msg=stopping`) {
							seen = true
							close(stopping)
						}
					}
				}()
				out := bufio.NewReader(stdout)
				io.WriteString(host, initLine)
				if line, err := out.ReadString('\n'); err != nil || !strings.Contains(line, `"id":1,"result"`) {
					t.Fatalf("initialize: %q %v", line, err)
				}

				switch end {
				case "stdin closed":
					host.Close()
					go io.Copy(io.Discard, out)
				case "SIGHUP", "SIGQUIT", "SIGKILL":
					sig := map[string]syscall.Signal{"SIGHUP": syscall.SIGHUP, "SIGQUIT": syscall.SIGQUIT, "SIGKILL": syscall.SIGKILL}[end]
					if err := cmd.Process.Signal(sig); err != nil {
						t.Fatal(err)
					}
				case "SIGPIPE":
					// The host stops reading: the next answer's write gets
					// EPIPE, which kills a Go program writing to fd 1.
					stdout.Close()
					io.WriteString(host, `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
				case "second SIGINT", "second SIGTERM":
					sig := syscall.SIGINT
					if end == "second SIGTERM" {
						sig = syscall.SIGTERM
					}
					// Answers nobody reads (a hundred tools lists, far more
					// than a pipe or socket buffer holds) keep the first
					// signal's shutdown waiting for them, for its grace
					// bounds (1.5 s), while the second arrives; the test
					// reads stdout only after both. The call the resource
					// server holds is read after the lists, so once it has
					// arrived they have all been read.
					for i := range 100 {
						io.WriteString(host, `{"jsonrpc":"2.0","id":`+strconv.Itoa(10+i)+`,"method":"tools/list"}`+"\n")
					}
					io.WriteString(host, callLine)
					<-h.entered
					if err := cmd.Process.Signal(sig); err != nil {
						t.Fatal(err)
					}
					select {
					case <-stopping:
					case <-ended:
						t.Fatal("stderr ended before the first signal was taken")
					case <-time.After(20 * time.Second): // bounds a failure, not a synchronisation
						t.Fatal("the first signal was not taken")
					}
					if err := cmd.Process.Signal(sig); err != nil {
						t.Fatal(err)
					}
					go io.Copy(io.Discard, out)
				}
				err = cmd.Wait()
				// The ending happened as meant (a test of a normal exit
				// would prove nothing about the others).
				ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
				want := map[string]string{"stdin closed": "exit status 0", "SIGHUP": "signal: hangup", "SIGQUIT": "exit status 2",
					"SIGKILL": "signal: killed", "SIGPIPE": "signal: broken pipe", "second SIGINT": "exit status 130", "second SIGTERM": "exit status 143"}[end]
				if got := cmd.ProcessState.String(); got != want {
					t.Errorf("ended with %q (%v), want %q", got, ws, want)
				}
				if nonblocking(t, in) {
					t.Errorf("after %s (%v), the stdin %s it shared is non-blocking", end, err, kind)
				}
			})
		}
	}
}

// stdinPair makes a blocking pipe or socket pair: in becomes the child's
// stdin (and stays open here, shared), host is the end the test writes.
func stdinPair(t *testing.T, kind string) (in, host *os.File) {
	t.Helper()
	var fds [2]int
	var err error
	syscall.ForkLock.RLock()
	if kind == "pipe" {
		err = syscall.Pipe(fds[:])
	} else {
		fds, err = syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	}
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	in, host = os.NewFile(uintptr(fds[0]), "stdin"), os.NewFile(uintptr(fds[1]), "host")
	t.Cleanup(func() { in.Close(); host.Close() })
	if nonblocking(t, in) {
		t.Fatal("the test needs a blocking stdin to start from")
	}
	return in, host
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
		r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
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
