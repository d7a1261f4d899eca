package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/urfave/cli/v2"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/loglevel"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/server"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

const (
	cmdName = "pdpp-mcp"

	exitOK    = 0
	exitError = 1
	exitUsage = credential.ExitUsage

	// probeBudget caps how long start-up waits for the owner-token probe, so a
	// hung resource server cannot stall the host's initialize; when it runs
	// out, every tool call probes first instead.
	probeBudget = 10 * time.Second

	// drainSlack is added to twice the RS timeout (a tool call may make two
	// RS requests) to bound how long a closed stdin waits for answers still
	// in flight.
	drainSlack = 5 * time.Second
)

// exitErr is a failure whose message is the one line printed on stderr.
type exitErr struct {
	code int
	msg  string
}

func (e *exitErr) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return &exitErr{code: exitUsage, msg: fmt.Sprintf(format, args...) + " (see " + cmdName + " --help)"}
}

// run is the whole command. It never calls os.Exit and writes nothing but
// JSON-RPC to stdout.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	err := newApp(stdin, stdout, stderr).RunContext(ctx, args)
	if err == nil {
		return exitOK
	}
	code := exitUsage // errors the action did not classify come from flag parsing
	var ee *exitErr
	var ce *credential.Error
	switch {
	case errors.As(err, &ee):
		code = ee.code
	case errors.As(err, &ce):
		code = ce.ExitCode()
	}
	fmt.Fprintf(stderr, "%s: %s\n", cmdName, oneLine(err.Error()))
	return code
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

const description = `pdpp-mcp serves one PDPP grant to an MCP client over stdio: read-only tools
that map to GET requests on the resource server, made with the grant-scoped
client token that ` + "`pdpp connect <provider-url>`" + ` cached. Run that first; without a
usable cached credential pdpp-mcp exits 78 and says what to do.

Owner credentials are refused (exit 77): when PDPP_OWNER_TOKEN or
PDPP_OWNER_SESSION_COOKIE is set, when the cache marks the credential as an
owner one, or when the resource server reports an owner token.

The credential cache file is <root>/clients/<host>.json; <root> is the first of
  1. --cache-root or PDPP_CACHE_ROOT, when set
  2. ./.pdpp, when it exists in the working directory
  3. $HOME/.pdpp
Desktop hosts start servers in arbitrary directories: pass --cache-root when
the credential was cached in a project folder.

Try it without a resource server: pdpp-mcp --demo

Exit codes: 0 done, 1 unexpected failure, 64 usage, 77 owner credential,
78 no usable scoped credential.

stdout is reserved for MCP protocol messages. Diagnostics go to stderr.`

func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:            cmdName,
		Usage:           "serve a PDPP grant to MCP clients over stdio",
		UsageText:       cmdName + " --provider-url <url> [--cache-root <dir>] [flags]\n" + cmdName + " --demo [flags]",
		Description:     description,
		Version:         server.Version(),
		HideHelpCommand: true,
		// Help and version go to stderr: stdout belongs to JSON-RPC.
		Writer:    stderr,
		ErrWriter: stderr,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "provider-url", EnvVars: []string{"PDPP_PROVIDER_URL"},
				Usage: "resource server base `URL`, the one given to pdpp connect"},
			&cli.StringFlag{Name: "cache-root", EnvVars: []string{"PDPP_CACHE_ROOT"},
				Usage: "credential cache `DIR` (default: ./.pdpp if it exists, else $HOME/.pdpp)"},
			&cli.StringFlag{Name: "server-name", EnvVars: []string{"PDPP_MCP_SERVER_NAME"}, Value: cmdName,
				Usage: "`NAME` the MCP client shows for this server (serverInfo.name)"},
			&cli.DurationFlag{Name: "timeout", Value: rs.DefaultTimeout,
				Usage: "time limit (`DURATION`) for each resource server request, body included"},
			&cli.Int64Flag{Name: "max-response-bytes", Value: rs.DefaultMaxBodyBytes,
				Usage: "largest resource server answer read, in `BYTES`; a larger one is an rs_response_too_large error"},
			&cli.StringFlag{Name: "log-level", EnvVars: []string{"PDPP_MCP_LOG_LEVEL"}, Value: "info",
				Usage: "stderr log `LEVEL`: debug, info, warn or error"},
			&cli.BoolFlag{Name: "demo",
				Usage: "serve a sample dataset from an in-process resource server (no credential cache; --provider-url is ignored)"},
		},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageErrorf("%s", err)
		},
		// Never os.Exit inside the library: run maps errors to exit codes.
		ExitErrHandler: func(*cli.Context, error) {},
		Action: func(c *cli.Context) error {
			err := action(c, stdin, stdout, stderr)
			var ee *exitErr
			var ce *credential.Error
			if err != nil && !errors.As(err, &ee) && !errors.As(err, &ce) {
				err = &exitErr{code: exitError, msg: err.Error()}
			}
			return err
		},
	}
}

// config is what the flags resolved to.
type config struct {
	name     string
	timeout  time.Duration
	maxBytes int64
	log      *slog.Logger
	level    slog.Level
	stdin    io.Reader
	stdout   io.Writer
	stderr   io.Writer
}

func action(c *cli.Context, stdin io.Reader, stdout, stderr io.Writer) error {
	if c.NArg() > 0 {
		return usageErrorf("unexpected argument %q: %s takes flags only", c.Args().First(), cmdName)
	}
	level, err := loglevel.Parse(c.String("log-level"), slog.LevelInfo)
	if err != nil {
		return usageErrorf("%v", err)
	}
	cfg := config{
		name:     strings.TrimSpace(c.String("server-name")),
		timeout:  c.Duration("timeout"),
		maxBytes: c.Int64("max-response-bytes"),
		level:    level,
		log:      slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})),
		stdin:    stdin,
		stdout:   stdout,
		stderr:   stderr,
	}
	if cfg.name == "" { // an empty PDPP_MCP_SERVER_NAME counts as unset
		cfg.name = cmdName
	}
	switch {
	case cfg.timeout <= 0:
		return usageErrorf("--timeout must be positive, got %s", cfg.timeout)
	case cfg.maxBytes <= 0:
		return usageErrorf("--max-response-bytes must be positive, got %d", cfg.maxBytes)
	}
	if c.Bool("demo") {
		return serveDemo(c.Context, cfg)
	}
	return serveProvider(c.Context, cfg, c.String("provider-url"), c.String("cache-root"))
}

// serveProvider serves the grant cached for providerURL once
// credential.Connect has applied the start-up rules: provider URL (64),
// owner environment (77), cached credential (78, or 77 for owner metadata),
// then the resource server's own word on the token kind (77).
func serveProvider(ctx context.Context, cfg config, providerURL, cacheRoot string) error {
	conn, err := credential.Connect(ctx, credential.ConnectOptions{
		ProviderURL:  providerURL,
		CacheRoot:    cacheRoot,
		Timeout:      cfg.timeout,
		MaxBodyBytes: cfg.maxBytes,
		Logger:       cfg.log,
		ProbeBudget:  min(cfg.timeout, probeBudget),
	})
	switch {
	case ctx.Err() != nil:
		return nil // stopped by a signal before serving
	case errors.As(err, new(*credential.Error)) && strings.TrimSpace(providerURL) == "":
		return &exitErr{code: exitUsage, msg: err.Error() + " Pass --provider-url <url> or set PDPP_PROVIDER_URL. To try pdpp-mcp without a resource server, run it with --demo."}
	case err != nil:
		return err
	}
	fmt.Fprintf(cfg.stderr, "%s: connected to %s using scoped credential at %s\n", cmdName, conn.ProviderURL, conn.Credential.File)
	return serve(ctx, cfg, conn.RS, conn.ProviderURL)
}

// serve runs the MCP server over the injected stdin/stdout until the client
// closes stdin (nil) or ctx ends (nil: a signal asked us to stop).
func serve(ctx context.Context, cfg config, client tools.RS, providerURL string) error {
	srv := server.New(server.Options{
		RS:          client,
		ProviderURL: providerURL,
		Name:        cfg.name,
		Version:     server.Version(),
		Logger:      cfg.log,
	})
	d := newDrain(ctx, 2*cfg.timeout+drainSlack)
	err := srv.Run(ctx, &mcp.IOTransport{Reader: d.reader(cfg.stdin), Writer: d.writer(cfg.stdout)})
	switch {
	case ctx.Err() != nil:
		cfg.log.Debug("stopped", "cause", context.Cause(ctx))
		return nil
	case err == nil || errors.Is(err, io.EOF):
		return nil
	}
	return fmt.Errorf("serve stdio: %w", err)
}
