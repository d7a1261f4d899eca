package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/cmdexit"
	"github.com/pdpp-mcp/pdpp-mcp/internal/outbound"
	"github.com/pdpp-mcp/pdpp-mcp/internal/probe"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/server"
)

// Target kinds, named by their flag.
const (
	targetDemo     = "--demo"
	targetProvider = "--provider-url"
	targetServer   = "--server"
	targetURL      = "--url"
)

// target is the MCP server the probe talks to, as chosen by the flags.
type target struct {
	kind        string // one of the target constants
	providerURL string
	cacheRoot   string
	server      []string // argv
	url         string
	bearerEnv   string
}

// conn is an open session and what it takes to end it.
type conn struct {
	session *mcp.ClientSession
	wire    *probe.Wire
	closers []func() error
}

func (c *conn) close() error {
	var errs []error
	for i := len(c.closers) - 1; i >= 0; i-- {
		errs = append(errs, c.closers[i]())
	}
	return errors.Join(errs...)
}

// client is the MCP client identity the probe presents.
func client() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: cmdName, Version: server.Version()}, nil)
}

// connect opens a session with the target. Whatever connect started is
// stopped by conn.close, or before connect returns an error.
func connect(ctx context.Context, t target, cfg config) (c *conn, err error) {
	c = &conn{wire: probe.NewWire()}
	defer func() {
		if err != nil {
			c.close()
			c = nil
		}
	}()
	switch t.kind {
	case targetDemo:
		err = c.demo(ctx, cfg)
	case targetProvider:
		err = c.provider(ctx, t, cfg)
	case targetServer:
		err = c.command(ctx, t, cfg)
	case targetURL:
		err = c.hosted(ctx, t, cfg)
	default:
		err = fmt.Errorf("unknown target %q", t.kind)
	}
	return c, err
}

// inProcess serves the pdpp-mcp tools (o names their RS client) in this
// process and connects to them through an in-memory transport.
func (c *conn) inProcess(ctx context.Context, cfg config, o server.Options) error {
	o.Logger = cfg.log
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.New(o).Connect(ctx, st, nil)
	if err != nil {
		return fmt.Errorf("start the in-process server: %w", err)
	}
	c.closers = append(c.closers, ss.Close)
	cs, err := client().Connect(ctx, c.wire.Transport(ct), nil)
	if err != nil {
		return fmt.Errorf("connect to the in-process server: %w", err)
	}
	c.session = cs
	c.closers = append(c.closers, cs.Close)
	return nil
}

// demo serves the demo dataset from an in-process resource server, read
// with its client token, at the dataset's own clock so every answer is the
// same on every run.
func (c *conn) demo(ctx context.Context, cfg config) error {
	if err := credential.CheckOwnerEnv(os.Getenv); err != nil {
		return err // the rule pdpp-mcp --demo applies too
	}
	ds, err := dataset.Demo()
	if err != nil {
		return fmt.Errorf("demo dataset: %w", err)
	}
	double, err := pdpptest.Start(pdpptest.Options{Dataset: ds, Now: dataset.DemoTime, Logger: cfg.log})
	if err != nil {
		return fmt.Errorf("start the demo resource server: %w", err)
	}
	c.closers = append(c.closers, func() error {
		if err := double.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("stop the demo resource server: %w", err)
		}
		return nil
	})
	token := double.Token(pdpptest.TokenClient)
	rsClient, err := rs.New(rs.Options{BaseURL: double.URL(), Token: func() string { return token }, Logger: cfg.log})
	if err != nil {
		return err
	}
	return c.inProcess(ctx, cfg, server.Options{RS: rsClient, ProviderURL: double.URL()})
}

// provider serves the grant cached for --provider-url, under pdpp-mcp's own
// start-up rules and refusals (credential.Connect).
func (c *conn) provider(ctx context.Context, t target, cfg config) error {
	pc, err := credential.Connect(ctx, credential.ConnectOptions{
		ProviderURL: t.providerURL,
		CacheRoot:   t.cacheRoot,
		Timeout:     cfg.timeout,
		Logger:      cfg.log,
	})
	if err != nil {
		return err
	}
	cmdexit.Notef(cfg.stderr, cmdName, "connected to %s using scoped credential at %s", pc.ProviderURL, pc.Credential.File)
	return c.inProcess(ctx, cfg, server.Options{RS: pc.RS, ProviderURL: pc.ProviderURL})
}

// stopGrace is how long a spawned server may take to exit once its stdin is
// closed, before it is sent SIGTERM.
const stopGrace = 5 * time.Second

// command spawns --server and talks to it over its stdin and stdout. Its
// stderr is passed on, sanitised and prefixed, because it is as untrusted as
// its results.
func (c *conn) command(ctx context.Context, t target, cfg config) error {
	cmd := exec.Command(t.server[0], t.server[1:]...)
	errw := probe.NewLineSanitizer(cfg.stderr, "server: ")
	cmd.Stderr = errw
	c.closers = append(c.closers, errw.Close)
	cs, err := client().Connect(ctx, c.wire.Transport(&mcp.CommandTransport{Command: cmd, TerminateDuration: stopGrace}), nil)
	if err != nil {
		if cmd.Process == nil {
			return fmt.Errorf("start --server %s: %w", t.server[0], err)
		}
		// Started but no session: stop it before reporting.
		cmd.Process.Kill()
		cmd.Wait()
		return fmt.Errorf("connect to --server %s: %w", t.server[0], err)
	}
	c.session = cs
	c.closers = append(c.closers, cs.Close)
	return nil
}

// hosted connects to a Streamable HTTP endpoint, sending the bearer read
// from the environment variable --bearer-env names.
func (c *conn) hosted(ctx context.Context, t target, cfg config) error {
	var rt http.RoundTripper = http.DefaultTransport
	if t.bearerEnv != "" {
		token := os.Getenv(t.bearerEnv)
		rt = bearer{token: token, next: rt}
	}
	hc := outbound.New(c.wire.RoundTripper(rt))
	cs, err := client().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: t.url, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", t.url, err)
	}
	c.session = cs
	c.closers = append(c.closers, cs.Close)
	return nil
}

// bearer adds the Authorization header to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(req)
}

// checkHostedURL accepts an absolute http(s) URL.
func checkHostedURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--url must be an absolute http or https URL, got %q", s)
	}
	return nil
}
