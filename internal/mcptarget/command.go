package mcptarget

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Command spawns argv and talks to it over its stdin and stdout, newline-
// delimited JSON-RPC read through the bounds of o.Limits. Close shuts stdin
// and gives the server StopGrace to exit before SIGTERM, then SIGKILL; Abort
// kills it at once. With no o.Stderr, the end of its stderr is kept for
// Explain.
func Command(ctx context.Context, argv []string, o Options) (*Conn, error) {
	if len(argv) == 0 {
		return nil, errors.New("--server: no command")
	}
	what := "--server " + argv[0]
	return start(func(c *Conn) error {
		p := &process{cmd: exec.Command(argv[0], argv[1:]...), exited: make(chan struct{})}
		p.cmd.Stderr = o.Stderr
		if o.Stderr == nil {
			p.tail = &tail{}
			p.cmd.Stderr = p.tail
		}
		// A child that keeps stderr open past the server's exit must not
		// hold Wait up.
		p.cmd.WaitDelay = time.Second
		// The read end of stdout is this process's own pipe, not
		// cmd.StdoutPipe's, which Wait would close under a reader still
		// draining it.
		stdout, w, err := os.Pipe()
		if err != nil {
			return fmt.Errorf("start %s: %w", what, err)
		}
		p.cmd.Stdout = w
		stdin, err := p.cmd.StdinPipe()
		if err != nil {
			stdout.Close()
			w.Close()
			return fmt.Errorf("start %s: %w", what, err)
		}
		err = p.cmd.Start()
		w.Close()
		if err != nil {
			stdout.Close()
			return fmt.Errorf("start %s: %w", what, err)
		}
		go func() {
			p.waitErr = p.cmd.Wait()
			close(p.exited)
		}()
		c.guard = newGuard(o.Limits)
		c.proc = p
		c.closers = append(c.closers, p.stop)
		in := &lineReader{r: stdout, g: c.guard}
		// The SDK's own frame limit stays as a second bound, just above
		// the guard's, which says more when it stops a line.
		t := &mcp.IOTransport{Reader: readCloser{in, stdout}, Writer: stdin, MaxLineLength: int(c.guard.maxMsg) + 2}
		cs, err := o.client().Connect(ctx, c.Wire.Transport(t), nil)
		if err != nil {
			err = c.Explain("connect to "+what, err) // before the kill, which would be its reason
			p.kill()
			return err
		}
		c.Session = cs
		c.closers = append(c.closers, cs.Close)
		return nil
	})
}

type readCloser struct {
	io.Reader
	io.Closer
}

// process is a spawned server.
type process struct {
	cmd     *exec.Cmd
	tail    *tail
	exited  chan struct{}
	waitErr error // set before exited closes
}

// stop waits for the server to exit (its stdin is closed by then), and
// makes it.
func (p *process) stop() error {
	if p.wait(StopGrace) {
		return nil
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err == nil && p.wait(StopGrace) {
		return nil
	}
	p.kill()
	return nil
}

func (p *process) kill() {
	p.cmd.Process.Kill()
	p.wait(5 * time.Second)
}

func (p *process) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// exit says how the server ended, or "" while it runs.
func (p *process) exit() string {
	select {
	case <-p.exited:
	default:
		return ""
	}
	var ee *exec.ExitError
	switch {
	case p.waitErr == nil:
		return "exited with status 0"
	case errors.As(p.waitErr, &ee) && ee.Exited():
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	default:
		return "ended: " + p.waitErr.Error()
	}
}

// tail keeps the last bytes written to it: a server's stderr, quoted when
// the session fails.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailBytes = 4096

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailBytes {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailBytes:]...)
	}
	return len(p), nil
}

// lastLine is the last line that is not blank.
func (t *tail) lastLine() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := bytes.Split(bytes.TrimSpace(t.buf), []byte("\n"))
	return bytes.TrimSpace(lines[len(lines)-1])
}

// Explain describes a failed operation, op, with what the session's
// transport knows about it: the bound or the stray output that stopped it
// (in place of the SDK's error, which followed from it), and for a spawned
// server that has exited, its status and last line of stderr.
func (c *Conn) Explain(op string, err error) error {
	if err == nil {
		return nil
	}
	err = fmt.Errorf("%s: %w", op, err)
	if c.guard != nil {
		if cause := c.guard.Cause(); cause != nil {
			err = fmt.Errorf("%s: %w", op, cause)
		}
	}
	if c.proc == nil {
		return err
	}
	// A server that closed stdout is exiting; give it a moment to be reaped.
	c.proc.wait(100 * time.Millisecond)
	var notes []string
	if e := c.proc.exit(); e != "" {
		notes = append(notes, "the server "+e)
	}
	if c.proc.tail != nil {
		if l := c.proc.tail.lastLine(); len(l) > 0 {
			notes = append(notes, "its last stderr line: "+quote(l, 200))
		}
	}
	if len(notes) == 0 {
		return err
	}
	return fmt.Errorf("%w; %s", err, strings.Join(notes, "; "))
}

// Abort ends the session without the grace Close gives a server: for a
// session that failed, whose server may never answer again.
func (c *Conn) Abort() {
	if c.proc != nil {
		c.proc.kill()
	}
	c.Close()
}

// Err is why the transport gave up on the session (a bound, or stray
// output on a server's stdout), or nil.
func (c *Conn) Err() error {
	if c.guard == nil {
		return nil
	}
	return c.guard.Cause()
}
