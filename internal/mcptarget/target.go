// Package mcptarget opens client sessions with the MCP servers the probe and
// budget commands measure: a server in this process, a stdio server spawned
// from a command line (--server), or a Streamable HTTP endpoint (--url).
//
// Every session records its traffic (probe.Wire), so what the commands show
// and size is the bytes the server sent, not a re-encoding of what the SDK
// decoded. Errors name the flags both commands share.
package mcptarget

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/outbound"
	"github.com/pdpp-mcp/pdpp-mcp/internal/probe"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
)

// Conn is an open session and what it takes to end it.
type Conn struct {
	Session *mcp.ClientSession
	Wire    *probe.Wire
	closers []func() error
	guard   *guard   // the bounds of a --server or --url session
	proc    *process // a spawned server
}

// Close ends the session and stops whatever was started for it, last
// started first.
func (c *Conn) Close() error {
	var errs []error
	for i := len(c.closers) - 1; i >= 0; i-- {
		errs = append(errs, c.closers[i]())
	}
	c.closers = nil
	return errors.Join(errs...)
}

// Options configures a session.
type Options struct {
	// Client is the identity presented in initialize.
	Client *mcp.Implementation
	// Stderr receives a spawned server's stderr; nil discards it.
	Stderr io.Writer
	// Header is sent with every HTTP request (a bearer, an API key).
	Header http.Header
	// Limits bound what a spawned server or an HTTP endpoint may send.
	Limits Limits
}

// Limits bound what is read from one server; zero values are the defaults.
type Limits struct {
	MaxMessage int64 // one message (DefaultMaxMessage)
	MaxTotal   int64 // the whole session (DefaultMaxTotal)
}

// StopGrace is how long a spawned server may take to exit once its stdin is
// closed, before it is sent SIGTERM.
const StopGrace = 5 * time.Second

func (o Options) client() *mcp.Client { return mcp.NewClient(o.Client, nil) }

// start runs open and, should it fail, stops what it had started.
func start(open func(c *Conn) error) (*Conn, error) {
	c := &Conn{Wire: probe.NewWire()}
	if err := open(c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// InProcess connects to s through an in-memory transport.
func InProcess(ctx context.Context, s *mcp.Server, o Options) (*Conn, error) {
	return start(func(c *Conn) error {
		st, ct := mcp.NewInMemoryTransports()
		ss, err := s.Connect(ctx, st, nil)
		if err != nil {
			return fmt.Errorf("start the in-process server: %w", err)
		}
		c.closers = append(c.closers, ss.Close)
		cs, err := o.client().Connect(ctx, c.Wire.Transport(ct), nil)
		if err != nil {
			return fmt.Errorf("connect to the in-process server: %w", err)
		}
		c.Session = cs
		c.closers = append(c.closers, cs.Close)
		return nil
	})
}

// HTTP connects to a Streamable HTTP endpoint, sending o.Header with every
// request, and reads its answers through the bounds of o.Limits. Redirects
// are never followed, so the header reaches no other origin.
func HTTP(ctx context.Context, endpoint string, o Options) (*Conn, error) {
	return start(func(c *Conn) error {
		c.guard = newGuard(o.Limits)
		var rt http.RoundTripper = boundedTransport{next: http.DefaultTransport, g: c.guard}
		if len(o.Header) > 0 {
			rt = headers{h: o.Header, next: rt}
		}
		// The Streamable HTTP transport cannot be wrapped (see probe.Wire),
		// so its traffic is read at the HTTP layer.
		hc := outbound.New(c.Wire.RoundTripper(rt))
		cs, err := o.client().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1}, nil)
		if err != nil {
			return c.Explain("connect to "+endpoint, err)
		}
		c.Session = cs
		c.closers = append(c.closers, cs.Close)
		return nil
	})
}

// headers adds fixed headers to every request.
type headers struct {
	h    http.Header
	next http.RoundTripper
}

func (h headers) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, vs := range h.h {
		req.Header[k] = vs
	}
	return h.next.RoundTrip(req)
}

// CheckURL accepts an absolute http(s) URL.
func CheckURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--url must be an absolute http or https URL, got %q", s)
	}
	return nil
}

// ParseHeader reads a --header value, "Name: value".
func ParseHeader(s string) (name, value string, err error) {
	name, value, ok := strings.Cut(s, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if !ok || name == "" || strings.IndexFunc(name, notToken) >= 0 {
		return "", "", fmt.Errorf("--header %q is not 'Name: value'", s)
	}
	if strings.ContainsAny(value, "\r\n") {
		return "", "", fmt.Errorf("--header %s: the value holds a line break", name)
	}
	return http.CanonicalHeaderKey(name), value, nil
}

// Endpoint checks what the --url, --header and --bearer-env flags give
// (bearerEnv names the environment variable getenv reads the bearer from,
// "" for none): an absolute http(s) URL, 'Name: value' headers, a bearer
// that is set, and headers sent only over https or to a loopback host. It
// returns the header every request carries, the bearer as Authorization,
// and the values no message may repeat: those read before an error too.
func Endpoint(rawURL string, headers []string, bearerEnv string, getenv func(string) string) (http.Header, []string, error) {
	if err := CheckURL(rawURL); err != nil {
		return nil, nil, err
	}
	h := http.Header{}
	var secrets []string
	for _, s := range headers {
		name, value, err := ParseHeader(s)
		if err != nil {
			return nil, secrets, err
		}
		h.Add(name, value)
		secrets = append(secrets, value)
	}
	if bearerEnv != "" {
		token := getenv(bearerEnv)
		if token == "" {
			return nil, secrets, fmt.Errorf("--bearer-env %s: that environment variable is empty or unset", bearerEnv)
		}
		h.Set("Authorization", "Bearer "+token)
		secrets = append(secrets, token)
	}
	if len(h) > 0 && credential.Cleartext(rawURL) {
		return nil, secrets, fmt.Errorf("--url %s is plain http to a host that is not loopback: the bearer or headers would travel unencrypted; use https", rawURL)
	}
	return h, secrets, nil
}

// Redact replaces each of secrets in s with [redacted]: a line a command
// prints never repeats a bearer or a header value it was given.
func Redact(s string, secrets []string) string {
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	return s
}

// notToken reports a character a header name cannot hold.
func notToken(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r))
}

// OnClose adds f to what Close runs; it runs after the session has ended.
func (c *Conn) OnClose(f func() error) {
	c.closers = append([]func() error{f}, c.closers...)
}
