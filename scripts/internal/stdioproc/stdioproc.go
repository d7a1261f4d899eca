// Package stdioproc runs a stdio pdpp-mcp for the measuring scripts: the
// credential cached as `pdpp connect` leaves it, and the process spoken to
// in raw JSON lines, so no client library's decoding is in what they
// measure.
package stdioproc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
)

// CacheToken writes the credential file `pdpp connect` would write for
// providerURL under the cache root.
func CacheToken(root, providerURL, token string) error {
	c, err := credential.Open(root, providerURL)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(c.File), 0o700); err != nil {
		return err
	}
	body := `{"provider_url":"` + c.ProviderURL + `","scope":"pdpp:read","credential":{"access_token":"` + token + `","token_type":"Bearer"}}`
	return os.WriteFile(c.File, []byte(body), 0o600)
}

// Proc is a running stdio pdpp-mcp.
type Proc struct {
	Cmd    *exec.Cmd
	stderr *bytes.Buffer // shown only when something fails
	stdin  io.WriteCloser
	stdout *bufio.Reader
	next   int
}

// Start runs bin with args. Its stdin is a pipe (as Go and Python hosts
// give), or with socket one end of a Unix socket pair (as libuv, and so
// Node-based hosts, give).
func Start(bin string, socket bool, args ...string) (*Proc, error) {
	cmd := exec.Command(bin, args...)
	p := &Proc{Cmd: cmd, stderr: &bytes.Buffer{}}
	cmd.Stderr = p.stderr
	if socket {
		child, host, err := socketPair()
		if err != nil {
			return nil, err
		}
		defer child.Close() // the child has its own copy once started
		cmd.Stdin = child
		p.stdin = host
	} else {
		in, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		p.stdin = in
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p.stdout = bufio.NewReaderSize(out, 1<<20)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return p, nil
}

// Initialize makes the handshake: initialize, answered with a protocol
// version, then notifications/initialized.
func (p *Proc) Initialize(client string) error {
	r, err := p.Call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":`+strconv.Quote(client)+`,"version":"0"}}`)
	if err != nil {
		return err
	}
	if !r.Get("protocolVersion").Exists() {
		return fmt.Errorf("initialize answered %.200s", r.Raw)
	}
	_, err = io.WriteString(p.stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	return err
}

// Pid is the process id.
func (p *Proc) Pid() int { return p.Cmd.Process.Pid }

// RoundTrip writes one request and reads lines until the answer with its
// id, which it returns as read (newline included).
func (p *Proc) RoundTrip(method, params string) (string, error) {
	p.next++
	if _, err := io.WriteString(p.stdin, `{"jsonrpc":"2.0","id":`+strconv.Itoa(p.next)+`,"method":`+strconv.Quote(method)+`,"params":`+params+"}\n"); err != nil {
		return "", fmt.Errorf("%s: write: %w (stderr: %s)", method, err, p.stderrText())
	}
	for {
		a, err := p.stdout.ReadString('\n')
		if err != nil {
			return "", fmt.Errorf("%s: read: %w (stderr: %s)", method, err, p.stderrText())
		}
		if gjson.Get(a, "id").Int() == int64(p.next) {
			return a, nil
		}
		// A notification, or another answer: not this request's.
	}
}

// Call is RoundTrip's result; an error answer, or one without a result, is
// an error.
func (p *Proc) Call(method, params string) (gjson.Result, error) {
	a, err := p.RoundTrip(method, params)
	if err != nil {
		return gjson.Result{}, err
	}
	return Result(method, a)
}

// Tool is Call of tools/call with the tool's name and its arguments object.
func (p *Proc) Tool(name, args string) (gjson.Result, error) {
	return p.Call("tools/call", ToolParams(name, args))
}

// ToolParams are the params of a tools/call of name with args (a JSON
// object).
func ToolParams(name, args string) string {
	return `{"name":` + strconv.Quote(name) + `,"arguments":` + args + `}`
}

// Result is the result of the answer line a to method; an error answer,
// or one without a result, is an error.
func Result(method, a string) (gjson.Result, error) {
	if e := gjson.Get(a, "error"); e.Exists() {
		return gjson.Result{}, fmt.Errorf("%s: %s", method, e.Raw)
	}
	r := gjson.Get(a, "result")
	if !r.Exists() {
		return gjson.Result{}, fmt.Errorf("%s: unexpected answer: %.300s", method, a)
	}
	return r, nil
}

// Stop closes stdin and waits for the process to exit; after ten seconds
// it kills it.
func (p *Proc) Stop() error {
	_ = p.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- p.Cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		_ = p.Cmd.Process.Kill()
		<-done
		return errors.New("did not exit after stdin closed")
	}
}

func (p *Proc) stderrText() string { return strings.TrimSpace(p.stderr.String()) }
