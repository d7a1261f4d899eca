package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pdpp-mcp/pdpp-mcp/internal/cmdexit"
	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
	"github.com/pdpp-mcp/pdpp-mcp/internal/loglevel"
	"github.com/pdpp-mcp/pdpp-mcp/internal/version"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/server"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

const (
	cmdName = "pdpp-mcp"

	exitUsage = cmdexit.Usage

	// probeBudget caps how long start-up waits for the owner-token probe, so a
	// hung resource server cannot stall the host's initialize; when it runs
	// out, every tool call probes first instead.
	probeBudget = 10 * time.Second
)

func usageErrorf(format string, args ...any) error {
	return cmdexit.Usagef(cmdName, format, args...)
}

// run is the whole command. It never calls os.Exit; while serving, stdout
// carries JSON-RPC and nothing else (help and version, asked for instead of
// serving, are printed there).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runWith(ctx, &startup{stdin: stdin, stdout: stdout, args: args}, args, stdin, stdout, stderr)
}

// runWith is run with the start-up refusal's settings given.
func runWith(ctx context.Context, st *startup, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cmdexit.Run(ctx, newApp(st, stdin, stdout, stderr), args, stderr, nil)
}

const description = `pdpp-mcp serves one PDPP grant to an MCP client over stdio: read-only tools
that map to GET requests on the resource server, made with the grant-scoped
client token that ` + "`pdpp connect <provider-url>`" + ` cached. Run that first;
without a usable cached credential pdpp-mcp exits 78 and says what to do
(to a host, as the answer to its initialize request).

Owner credentials are refused (exit 77): when PDPP_OWNER_TOKEN or
PDPP_OWNER_SESSION_COOKIE is set, when the cache marks the credential as an
owner one, or when the resource server reports an owner token.

The credential cache file is <root>/clients/<host>.json; <root> is the first
of
  1. --cache-root or PDPP_CACHE_ROOT, when set (a leading ~/ is $HOME)
  2. ./.pdpp, when it exists in the working directory
  3. $HOME/.pdpp
Desktop hosts start servers in arbitrary directories: pass --cache-root when
the credential was cached in a project folder.

Try it without a resource server: pdpp-mcp --demo

Exit codes: 0 done, 1 unexpected failure, 64 usage, 77 owner credential,
78 no usable scoped credential.

While serving, stdout is reserved for MCP protocol messages. Diagnostics go
to stderr.`

func newApp(st *startup, stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:  cmdName,
		Usage: "serve a PDPP grant to MCP clients over stdio",
		UsageText: cmdName + " --provider-url <url> [--cache-root <dir>] [flags]\n" + cmdName + " --demo [flags]\n" +
			cmdName + " --http <addr> --provider-url <url> [--public-url <url>] [flags]",
		Description: description,
		// The whole line, so a development build says it is one.
		Version: version.String(),
		Flags: append([]cli.Flag{
			&cli.StringSliceFlag{Name: "provider-url", EnvVars: []string{"PDPP_PROVIDER_URL"},
				Usage: "resource server base `URL`, the one given to pdpp connect; repeat it to serve several providers' grants as one (stdio)"},
			&cli.StringFlag{Name: "cache-root", EnvVars: []string{"PDPP_CACHE_ROOT"},
				Usage: "credential cache `DIR` (default: ./.pdpp if it exists, else $HOME/.pdpp)"},
			&cli.StringFlag{Name: "server-name", EnvVars: []string{"PDPP_MCP_SERVER_NAME"}, Value: cmdName,
				Usage: "`NAME` the MCP client shows for this server (serverInfo.name)"},
			&cli.DurationFlag{Name: "timeout", Value: rs.DefaultTimeout,
				Usage: "time limit (`DURATION`) for each resource server request, body included"},
			&cli.Int64Flag{Name: "max-response-bytes", Value: rs.DefaultMaxBodyBytes,
				Usage: "largest resource server answer read, in `BYTES`; a larger one is an rs_response_too_large error"},
			&cli.Int64Flag{Name: "blob-max-bytes", EnvVars: []string{"PDPP_MCP_BLOB_MAX_BYTES"}, Value: tools.DefaultBlobMaxBytes,
				Usage: "largest blob (attachment) fetch or a pdpp://blob/ resource reads, in `BYTES`, at most --max-response-bytes; a larger one is a blob_too_large error"},
			&cli.StringFlag{Name: "log-level", EnvVars: []string{"PDPP_MCP_LOG_LEVEL"}, Value: "info",
				Usage: "stderr log `LEVEL`: debug, info, warn or error"},
			&cli.StringFlag{Name: "log-file", EnvVars: []string{"PDPP_MCP_LOG_FILE"},
				Usage: "also append diagnostics to `PATH` (for hosts that discard stderr); never stdout"},
			&cli.BoolFlag{Name: "demo",
				Usage: "serve a sample dataset from an in-process resource server (no credential cache; --provider-url is ignored)"},
		}, httpFlags()...),
	}
	app.Action = func(c *cli.Context) error {
		err := action(c, st, stdin, stdout, stderr)
		if !c.IsSet("http") {
			st.refuse(c.Context, cmdexit.Classify(err))
		}
		return err
	}
	cmdexit.Configure(app, stdout, stderr)
	usageError := app.OnUsageError
	app.OnUsageError = func(c *cli.Context, err error, sub bool) error {
		err = usageError(c, err, sub)
		if !st.hostedArgs(c) {
			st.refuse(c.Context, err)
		}
		return err
	}
	return app
}

// startup tells a stdio client why the command could not serve: a host
// that sees the process exit before it answers initialize shows only
// "connection closed", so the failure is first given to the client as the
// answer to its requests (server.Refuse), then the command exits with its
// status as before.
type startup struct {
	stdin  io.Reader
	stdout io.Writer
	args   []string // the command line, program name first
	// serving is set once stdin belongs to the MCP session: from then on
	// a failure can no longer be answered this way.
	serving bool
	// wait and linger shorten server.Refuse's bounds in tests.
	wait, linger time.Duration
}

// refuse answers the client with err's message when err is a start-up
// failure (a usage, owner or credential error) and stdin is not a
// terminal (a person at a terminal reads stderr; a host never starts a
// server on one).
func (st *startup) refuse(ctx context.Context, err error) {
	var coded cmdexit.Coder
	if err == nil || st.serving || !errors.As(err, &coded) || isTerminal(st.stdin) {
		return
	}
	code := coded.ExitCode()
	switch code {
	case cmdexit.Usage, cmdexit.NoPerm, cmdexit.Config:
	default:
		return
	}
	data := map[string]any{"exit_code": code}
	var cerr *credential.Error
	if errors.As(err, &cerr) {
		data["reason"] = cerr.Code
		if cerr.File != "" {
			data["credential_file"] = cerr.File
		}
		if cerr.ProviderURL != "" {
			data["provider_url"] = cerr.ProviderURL
		}
	}
	raw := []byte(jsonw.Compact(data))
	msg := cmdName + " cannot start: " + cmdexit.OneLine(err.Error())
	// A write error is not reported: the exit status and stderr still
	// say why the command stopped.
	_ = server.Refuse(ctx, st.stdin, st.stdout, msg, server.RefuseOptions{Data: raw, Wait: st.wait, Linger: st.linger})
}

// isTerminal reports whether r is a character device (a terminal, or
// /dev/null, which has nothing to answer either).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// hostedArgs reports whether the command line asks for hosted mode, for
// flag errors, which come before the flags are known: a hosted server's
// stdin is not an MCP client.
func (st *startup) hostedArgs(c *cli.Context) bool {
	for _, a := range st.args[min(1, len(st.args)):] {
		if a == "--http" || a == "-http" || strings.HasPrefix(a, "--http=") || strings.HasPrefix(a, "-http=") {
			return true
		}
	}
	return c != nil && c.IsSet("http")
}

// config is what the flags resolved to.
type config struct {
	name     string
	timeout  time.Duration
	maxBytes int64
	blobMax  int64
	log      *slog.Logger
	level    slog.Level
	stdin    io.Reader
	stdout   io.Writer
	stderr   io.Writer
	// hold, when set, runs before each data-bearing call (see
	// server.StdioOptions.Hold).
	hold func(context.Context) error
	// startup learns when stdin is handed to the MCP session.
	startup *startup
}

func action(c *cli.Context, st *startup, stdin io.Reader, stdout, stderr io.Writer) (err error) {
	if c.NArg() > 0 {
		return usageErrorf("unexpected argument %q: %s takes flags only", c.Args().First(), cmdName)
	}
	if err := clearPlaceholders(c); err != nil {
		return err
	}
	if path := strings.TrimSpace(c.String("log-file")); path != "" {
		f, ferr := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if ferr != nil {
			return usageErrorf("--log-file: %v", ferr)
		}
		defer f.Close()
		// Some hosts drop stderr: the file gets every diagnostic line,
		// including the one that says why the command stopped.
		stderr = io.MultiWriter(stderr, f)
		defer func() {
			if err != nil {
				fmt.Fprintf(f, "%s: %s\n", cmdName, cmdexit.OneLine(err.Error()))
			}
		}()
	}
	level, err := loglevel.Parse(c.String("log-level"), slog.LevelInfo)
	if err != nil {
		return usageErrorf("--log-level: %v", err)
	}
	cfg := config{
		name:     strings.TrimSpace(c.String("server-name")),
		timeout:  c.Duration("timeout"),
		maxBytes: c.Int64("max-response-bytes"),
		blobMax:  c.Int64("blob-max-bytes"),
		level:    level,
		log:      slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})),
		stdin:    stdin,
		stdout:   stdout,
		stderr:   stderr,
		startup:  st,
	}
	if cfg.name == "" { // an empty PDPP_MCP_SERVER_NAME counts as unset
		cfg.name = cmdName
	}
	switch {
	case cfg.timeout <= 0:
		return usageErrorf("--timeout must be positive, got %s", cfg.timeout)
	case cfg.maxBytes <= 0:
		return usageErrorf("--max-response-bytes must be positive, got %d", cfg.maxBytes)
	case cfg.blobMax <= 0 || cfg.blobMax > cfg.maxBytes:
		return usageErrorf("--blob-max-bytes must be positive and at most --max-response-bytes (%d), got %d", cfg.maxBytes, cfg.blobMax)
	}
	if c.IsSet("http") {
		return serveHTTP(c, cfg) // hosted mode: http.go
	}
	if c.Bool("demo") {
		return serveDemo(c.Context, cfg)
	}
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(stdioGCPercent)
	}
	if urls := providerURLs(c); len(urls) > 1 {
		return serveProviders(c.Context, cfg, urls, c.String("cache-root"))
	}
	return serveProvider(c.Context, cfg, firstProviderURL(c), c.String("cache-root"))
}

// stdioGCPercent is GOGC when serving a resource server over stdio, unless
// the environment sets GOGC or GOMEMLIMIT. The server's live heap is a
// megabyte or two, so at the default of 100 the collector ran every ten or
// so tool calls; at 400 it runs a quarter as often, which cut CPU per call
// by 10-25% in scripts/bench-stdio while the peaks of scripts/bench-memory
// stayed far under their targets (200 ordinary calls 39 MB, 30 maximum-size
// answers 327 MB, under the 256 MB soft limit set in main). --demo keeps the
// default: its in-process resource server's garbage would multiply too.
// The headroom does not stay resident between a host's bursts of calls:
// RunStdio collects and returns free memory once the calls stop
// (server.StdioOptions.IdleTrim).
const stdioGCPercent = 400

// providerURLs are the --provider-url values, repeated or comma-separated,
// blanks and unexpanded bundle placeholders dropped.
func providerURLs(c *cli.Context) []string {
	var out []string
	for _, v := range c.StringSlice("provider-url") {
		if v = strings.TrimSpace(v); v != "" && !unexpanded.MatchString(v) {
			out = append(out, v)
		}
	}
	return out
}

func firstProviderURL(c *cli.Context) string {
	if urls := providerURLs(c); len(urls) > 0 {
		return urls[0]
	}
	return ""
}

// serveProviders serves several providers' cached grants as one package:
// each provider's credential passes the same start-up checks as a single
// one, and becomes a member of a fan-out reader.
func serveProviders(ctx context.Context, cfg config, urls []string, cacheRoot string) error {
	var members []fanout.Member
	seen := map[string]bool{}
	for _, u := range urls {
		conn, err := credential.Connect(ctx, credential.ConnectOptions{
			ProviderURL:  u,
			CacheRoot:    cacheRoot,
			Timeout:      cfg.timeout,
			MaxBodyBytes: cfg.maxBytes,
			Logger:       cfg.log,
			ProbeBudget:  min(cfg.timeout, probeBudget),
			DeferProbe:   true,
		})
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			return err
		}
		// An owner token stops the start; a grant the RS refuses is one
		// unusable source among several, reported to the model, and its
		// guard re-reads the cache on every call.
		if err := conn.CheckKind(ctx); errors.As(err, new(*credential.Error)) {
			if err.(*credential.Error).Code == credential.CodeOwnerRefused {
				return err
			}
			cfg.log.Warn("the resource server refused a cached credential; that provider's grant is reported to the model until a new one is cached",
				"provider_url", conn.ProviderURL, "error", cmdexit.OneLine(err.Error()))
		}
		if seen[conn.ProviderURL] {
			return usageErrorf("--provider-url %s is given twice", conn.ProviderURL)
		}
		seen[conn.ProviderURL] = true
		id := conn.Credential.GrantID
		if id == "" || seen["grant:"+id] {
			id = conn.ProviderURL
		}
		seen["grant:"+id] = true
		cmdexit.Notef(cfg.stderr, cmdName, "connected to %s using scoped credential at %s", conn.ProviderURL, conn.Credential.File)
		members = append(members, fanout.Member{GrantID: id, RS: conn.RS, Origin: conn.ProviderURL})
	}
	// Learn each grant's connections and streams now, so routing and the
	// ambiguity errors need no call later; a grant refused here is marked
	// unusable and reported by schema and search.
	members = fanout.Discover(ctx, members, min(cfg.timeout, probeBudget))
	for _, m := range members {
		if m.Unusable != "" {
			cfg.log.Warn("a provider's grant cannot be used; it is reported to the model", "grant_id", m.GrantID, "reason", m.Unusable)
		}
	}
	fc, err := fanout.New(fanout.Options{Members: members, ChildTimeout: cfg.timeout, Logger: cfg.log})
	if err != nil {
		return err
	}
	return serve(ctx, cfg, fc, urls[0])
}

// serveProvider serves the grant cached for providerURL once
// credential.Connect has applied the start-up rules: provider URL (64),
// owner environment (77), cached credential (78, or 77 for owner metadata).
// The resource server's own word on the token kind is asked while serving
// starts, so initialize and tools/list do not wait a round trip for it;
// data-bearing calls do. When it refuses the token (a revoked or expired
// grant) or reports an owner token, serving goes on as after a refusal in
// the middle of a session: every tool call is answered with the reason and
// what to do (`pdpp connect <url>`), the guard re-reads the cache on each
// call, and the process stops only when the client closes stdin. It then
// exits 78 (77 for an owner token) unless a later call was served with a
// replacement credential.
func serveProvider(ctx context.Context, cfg config, providerURL, cacheRoot string) error {
	conn, err := credential.Connect(ctx, credential.ConnectOptions{
		ProviderURL:  providerURL,
		CacheRoot:    cacheRoot,
		Timeout:      cfg.timeout,
		MaxBodyBytes: cfg.maxBytes,
		Logger:       cfg.log,
		ProbeBudget:  min(cfg.timeout, probeBudget),
		DeferProbe:   true,
	})
	switch {
	case ctx.Err() != nil:
		return nil // stopped by a signal before serving
	case errors.As(err, new(*credential.Error)) && strings.TrimSpace(providerURL) == "":
		return &cmdexit.Error{Code: exitUsage, Msg: err.Error() + " Pass --provider-url <url> or set PDPP_PROVIDER_URL. To try pdpp-mcp without a resource server, run it with --demo."}
	case err != nil:
		return err
	}

	checked := make(chan struct{})
	var refused error // an *credential.Error, set before checked closes
	go func() {
		defer close(checked)
		if err := conn.CheckKind(ctx); errors.As(err, new(*credential.Error)) {
			// Each tool call says why; the exit line says it once more.
			refused = err
			return
		}
		if ctx.Err() == nil {
			cmdexit.Notef(cfg.stderr, cmdName, "connected to %s using scoped credential at %s", conn.ProviderURL, conn.Credential.File)
		}
	}()
	// Data waits for the check, so the guard does not ask the same
	// question twice at once; the guard then answers for a refused token.
	cfg.hold = func(ctx context.Context) error {
		select {
		case <-checked:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	reads := &servedRS{RS: conn.RS}
	err = serve(ctx, cfg, reads, conn.ProviderURL)
	// stdin may close before the check ends: its verdict still decides the
	// exit status. A signal ends the check too.
	<-checked
	switch {
	case refused != nil && !reads.served.Load():
		return refused
	case ctx.Err() != nil:
		return nil
	}
	return err
}

// servedRS notes whether any read was served, so that a credential the RS
// refused at start and the person has since replaced (the guard re-reads
// the cache) does not end the process with the refusal's status.
type servedRS struct {
	tools.RS
	served atomic.Bool
}

func (s *servedRS) Get(ctx context.Context, path string, q rs.Query) (*rs.Response, error) {
	resp, err := s.RS.Get(ctx, path, q)
	if err == nil {
		s.served.Store(true)
	}
	return resp, err
}

// serve runs the MCP server over the injected stdin/stdout until the client
// closes stdin (nil) or ctx ends (nil: a signal asked us to stop).
func serve(ctx context.Context, cfg config, client tools.RS, providerURL string) error {
	srv, direct := server.NewWithDirect(server.Options{
		RS:           client,
		ProviderURL:  providerURL,
		Name:         cfg.name,
		Version:      server.Version(),
		Logger:       cfg.log,
		BlobMaxBytes: cfg.blobMax,
	})
	if cfg.startup != nil {
		cfg.startup.serving = true
	}
	return server.RunStdio(ctx, srv, cfg.stdin, cfg.stdout, server.StdioOptions{
		DrainTimeout: cfg.timeout,
		Hold:         cfg.hold,
		Logger:       cfg.log,
		Direct:       direct,
	})
}
