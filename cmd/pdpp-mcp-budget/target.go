package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/urfave/cli/v2"

	"github.com/pdpp-mcp/pdpp-mcp/internal/mcptarget"
	"github.com/pdpp-mcp/pdpp-mcp/internal/probe"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/server"
)

// Target kinds, named by their flag; pdpp-mcp in this process has none.
const (
	targetPDPP   = ""
	targetServer = "--server"
	targetURL    = "--url"
)

// target is the server measured, as chosen by the flags.
type target struct {
	kind        string
	server      []string // argv, for --server
	serverText  string   // --server as given
	url         string
	header      http.Header // for --url
	providerURL string      // pdpp-mcp's resource server, with --scenario
	cacheRoot   string
}

// pdpp reports whether the target is pdpp-mcp itself, which the PDPP
// checks always apply to.
func (t target) pdpp() bool { return t.kind == targetPDPP }

// label names the target in reports and errors.
func (t target) label() string {
	switch t.kind {
	case targetServer:
		return "--server " + t.serverText
	case targetURL:
		return "--url " + t.url
	case targetPDPP:
		if t.providerURL != "" {
			return "pdpp-mcp in process, over " + t.providerURL
		}
		return "pdpp-mcp in process"
	}
	return t.kind
}

// targetFrom reads the target flags; the values of --bearer-env and
// --header join secrets, so no error line repeats them.
func targetFrom(c *cli.Context, secrets *[]string) (target, error) {
	t := target{providerURL: strings.TrimSpace(c.String("provider-url")), cacheRoot: c.String("cache-root")}
	if c.IsSet("server") && c.IsSet("url") {
		return t, usageErrorf("--server and --url: pass one target")
	}
	if (c.IsSet("server") || c.IsSet("url")) && t.providerURL != "" {
		return t, usageErrorf("--provider-url reads a resource server for pdpp-mcp in this process; leave it out with --server or --url")
	}
	if (c.IsSet("bearer-env") || c.IsSet("header")) && !c.IsSet("url") {
		return t, usageErrorf("--bearer-env and --header go with --url")
	}
	switch {
	case c.IsSet("server"):
		argv, err := mcptarget.SplitCommand(c.String("server"))
		if err != nil {
			return t, usageErrorf("--server: %v", err)
		}
		t.kind, t.server, t.serverText = targetServer, argv, c.String("server")
	case c.IsSet("url"):
		t.kind, t.url = targetURL, c.String("url")
		header, sec, err := mcptarget.Endpoint(t.url, c.StringSlice("header"), c.String("bearer-env"), os.Getenv)
		*secrets = append(*secrets, sec...)
		if err != nil {
			return t, usageErrorf("%v", err)
		}
		t.header = header
	}
	return t, nil
}

// open starts the target and opens a session with it. pdpp-mcp runs in
// this process over the demo resource server, the one --provider-url names,
// or none (--no-results).
func open(ctx context.Context, o *options, build newServer) (*mcptarget.Conn, error) {
	mo := mcptarget.Options{Client: &mcp.Implementation{Name: cmdName, Version: server.Version()}}
	cctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	t := o.target
	switch t.kind {
	case targetServer:
		// A spawned server's stderr is kept for the error message, or
		// passed on, sanitised, when asked for.
		flush := func() error { return nil }
		if o.level <= slog.LevelDebug {
			w := probe.NewLineSanitizer(o.stderr, "server: ")
			mo.Stderr, flush = w, w.Close
		}
		c, err := mcptarget.Command(cctx, t.server, mo)
		if err != nil {
			flush()
			return nil, startErr(ctx, o, err)
		}
		c.OnClose(flush)
		return c, nil
	case targetURL:
		mo.Header = t.header
		c, err := mcptarget.HTTP(cctx, t.url, mo)
		return c, startErr(ctx, o, err)
	}
	opts := server.Options{Logger: o.log}
	stop := func() error { return nil }
	switch {
	case o.scenario == nil:
	case t.providerURL != "":
		conn, err := credential.Connect(ctx, credential.ConnectOptions{
			ProviderURL: t.providerURL,
			CacheRoot:   t.cacheRoot,
			Logger:      o.log,
		})
		if err != nil {
			return nil, err // a credential.Error carries its exit code
		}
		opts.RS, opts.ProviderURL = conn.RS, conn.ProviderURL
	default:
		demo, err := startDemo(o.log)
		if err != nil {
			return nil, err
		}
		opts.RS, opts.ProviderURL = demo.client, demo.url
		stop = func() error { demo.stop(); return nil }
	}
	c, err := mcptarget.InProcess(ctx, build(opts), mo)
	if err != nil {
		stop()
		return nil, err
	}
	c.OnClose(stop)
	return c, nil
}

// startErr says why a target did not start, naming the timeout when it
// ran out.
func startErr(ctx context.Context, o *options, err error) error {
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("interrupted while starting %s", o.target.label())
	case strings.Contains(err.Error(), context.DeadlineExceeded.Error()):
		return fmt.Errorf("%w (no answer within --timeout %s)", err, o.timeout)
	}
	return err
}
