package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/cmdexit"
	"github.com/pdpp-mcp/pdpp-mcp/internal/mcptarget"
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
	header      http.Header // sent to --url: --header, and --bearer-env's bearer
}

// options is how the probe opens any session: its identity, and the spawned
// server's stderr passed on, sanitised and prefixed, because it is as
// untrusted as its results.
func options(cfg config) (mcptarget.Options, func() error) {
	errw := probe.NewLineSanitizer(cfg.stderr, "server: ")
	return mcptarget.Options{
		Client: &mcp.Implementation{Name: cmdName, Version: server.Version()},
		Stderr: errw,
	}, errw.Close
}

// connect opens a session with the target. Whatever connect started is
// stopped by Close, or before connect returns an error.
func connect(ctx context.Context, t target, cfg config) (*mcptarget.Conn, error) {
	o, flush := options(cfg)
	var c *mcptarget.Conn
	var err error
	switch t.kind {
	case targetDemo:
		c, err = demo(ctx, cfg, o)
	case targetProvider:
		c, err = provider(ctx, t, cfg, o)
	case targetServer:
		c, err = mcptarget.Command(ctx, t.server, o)
	case targetURL:
		o.Header = t.header
		c, err = mcptarget.HTTP(ctx, t.url, o)
	default:
		err = fmt.Errorf("unknown target %q", t.kind)
	}
	if err != nil {
		flush()
		return nil, err
	}
	c.OnClose(flush)
	return c, nil
}

// demo serves the demo dataset from an in-process resource server, read
// with its client token, at the dataset's own clock so every answer is the
// same on every run.
func demo(ctx context.Context, cfg config, o mcptarget.Options) (*mcptarget.Conn, error) {
	if err := credential.CheckOwnerEnv(os.Getenv); err != nil {
		return nil, err // the rule pdpp-mcp --demo applies too
	}
	ds, err := dataset.Demo()
	if err != nil {
		return nil, fmt.Errorf("demo dataset: %w", err)
	}
	double, err := pdpptest.Start(pdpptest.Options{Dataset: ds, Now: dataset.DemoTime, Logger: cfg.log})
	if err != nil {
		return nil, fmt.Errorf("start the demo resource server: %w", err)
	}
	stop := func() error {
		if err := double.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("stop the demo resource server: %w", err)
		}
		return nil
	}
	token := double.Token(pdpptest.TokenClient)
	rsClient, err := rs.New(rs.Options{BaseURL: double.URL(), Token: func() string { return token }, Logger: cfg.log})
	if err != nil {
		stop()
		return nil, err
	}
	c, err := mcptarget.InProcess(ctx, server.New(server.Options{RS: rsClient, ProviderURL: double.URL(), Logger: cfg.log}), o)
	if err != nil {
		stop()
		return nil, err
	}
	c.OnClose(stop)
	return c, nil
}

// provider serves the grant cached for --provider-url, under pdpp-mcp's own
// start-up rules and refusals (credential.Connect).
func provider(ctx context.Context, t target, cfg config, o mcptarget.Options) (*mcptarget.Conn, error) {
	pc, err := credential.Connect(ctx, credential.ConnectOptions{
		ProviderURL: t.providerURL,
		CacheRoot:   t.cacheRoot,
		Timeout:     cfg.timeout,
		Logger:      cfg.log,
	})
	if err != nil {
		return nil, err
	}
	cmdexit.Notef(cfg.stderr, cmdName, "connected to %s using scoped credential at %s", pc.ProviderURL, pc.Credential.File)
	return mcptarget.InProcess(ctx, server.New(server.Options{RS: pc.RS, ProviderURL: pc.ProviderURL, Logger: cfg.log}), o)
}
