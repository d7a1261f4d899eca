package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/urfave/cli/v2"

	"github.com/pdpp-mcp/pdpp-mcp/internal/budget"
	"github.com/pdpp-mcp/pdpp-mcp/internal/cmdexit"
	"github.com/pdpp-mcp/pdpp-mcp/internal/loglevel"
	"github.com/pdpp-mcp/pdpp-mcp/internal/o200k"
	"github.com/pdpp-mcp/pdpp-mcp/internal/termstyle"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/server"
)

const (
	cmdName = "pdpp-mcp-budget"

	// exitOverBudget is this command's own verdict; the other codes are
	// internal/cmdexit's.
	exitOverBudget = 3
)

func usageErrorf(format string, args ...any) error {
	return cmdexit.Usagef(cmdName, format, args...)
}

// configErrorf is a budget or scenario file that cannot be used.
func configErrorf(format string, args ...any) error {
	return cmdexit.Errorf(cmdexit.Config, format, args...)
}

// errOverBudget ends a run whose report has failed checks; the report
// already says which, so nothing more is printed.
var errOverBudget = &cmdexit.Error{Code: exitOverBudget}

// newServer builds the server to measure. It is server.New, the constructor
// the pdpp-mcp binary uses; tests pass a synthetic server instead.
type newServer func(server.Options) *mcp.Server

// run is the whole command; it never calls os.Exit.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runWith(ctx, args, stdout, stderr, server.New)
}

func runWith(ctx context.Context, args []string, stdout, stderr io.Writer, build newServer) int {
	return cmdexit.Run(ctx, newApp(stdout, stderr, build), args, stderr, nil)
}

const description = `pdpp-mcp-budget measures what the pdpp-mcp server costs an agent's context
window and checks it against a budget file (budget.json; docs/budget.md).

It builds the server the pdpp-mcp binary serves and reads it as a client
does, through the MCP Go SDK over an in-memory session:
  - tools/list: bytes and tokens of the compact tools array, and per tool of
    its description, input schema and output schema; the instructions;
  - results: a scenario of tool calls (built in, or --scenario FILE, a
    pdpp-mcp-probe script) run against the demo resource server or
    --provider-url, measuring each call's content[] text and
    structuredContent as the server sent them.

Checks: exact tool membership, byte budgets (tools array, each tool, each
description, instructions), a self-contained instructions head, no owner or
control-plane token guidance, no cross-tool prose repeated across tools, schema
portability for strict clients, and result sizes per tool. Tokens are counted
with the o200k_base encoding; bytes are what is budgeted.

Exit codes: 0 within budget, 1 any other error, 3 over budget or a failed
check, 64 usage (flags), 77 owner credential refused, 78 unusable budget
file, scenario file or cached credential.`

func newApp(stdout, stderr io.Writer, build newServer) *cli.App {
	app := &cli.App{
		Name:        cmdName,
		Usage:       "check the pdpp-mcp tools/list footprint and result sizes against a budget",
		UsageText:   cmdName + " [--budget FILE] [--limit KEY=N]... [--scenario FILE | --no-results] [--format table|json|github|markdown] [--width COLUMNS]",
		Description: description,
		Version:     server.Version(),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "budget", Value: "budget.json", EnvVars: []string{"PDPP_MCP_BUDGET"},
				Usage: "budget `FILE` holding every limit"},
			&cli.StringSliceFlag{Name: "limit",
				Usage: "override one limit of the budget file by its dotted `KEY=N`, e.g. tools_list.max_bytes=16384 or results.search.text_max_bytes=1800 (repeatable)"},
			&cli.IntFlag{Name: "max-bytes", DefaultText: "the budget file's",
				Usage: "shorthand for --limit tools_list.max_bytes=`N`"},
			&cli.StringFlag{Name: "scenario",
				Usage: "scenario `FILE`, a pdpp-mcp-probe script (one call per line: TOOL {json}, !TOOL {json}, resources/read URI, tools/list); default: the built-in demo scenario"},
			&cli.BoolFlag{Name: "no-results",
				Usage: "measure tools/list and the instructions only: no scenario, no resource server"},
			&cli.BoolFlag{Name: "print-scenario",
				Usage: "print the built-in scenario and exit"},
			// No PDPP_PROVIDER_URL fallback: a variable set for pdpp-mcp must
			// not turn a CI run of the demo scenario into a usage error.
			&cli.StringFlag{Name: "provider-url",
				Usage: "run the scenario against this resource server `URL` with the credential pdpp connect cached (needs --scenario)"},
			&cli.StringFlag{Name: "cache-root", EnvVars: []string{"PDPP_CACHE_ROOT"},
				Usage: "credential cache `DIR` for --provider-url (default: ./.pdpp if it exists, else $HOME/.pdpp)"},
			&cli.BoolFlag{Name: "allow-errors",
				Usage: "measure error results without failing their calls"},
			&cli.StringFlag{Name: "format", Value: "table",
				Usage: "output `FORMAT`: table, json, github (the table plus workflow annotations) or markdown (the tools/list table of docs/budget.md)"},
			&cli.BoolFlag{Name: "json", Usage: "shorthand for --format json"},
			&cli.StringFlag{Name: "color", Value: "auto",
				Usage: "`WHEN` to colour the table: auto (terminals, unless NO_COLOR is set), always or never"},
			&cli.IntFlag{Name: "width", Value: termstyle.WidthAuto, DefaultText: "the terminal's; none when piped",
				Usage: "fit the tables into `COLUMNS` (at least 40; 0 never wraps)"},
			&cli.StringFlag{Name: "log-level", Value: "warn",
				Usage: "stderr log `LEVEL`: debug, info, warn or error"},
		},
		Action: func(c *cli.Context) error { return action(c, stdout, stderr, build) },
	}
	cmdexit.Configure(app, stdout, stderr)
	return app
}

// options is what the flags resolved to.
type options struct {
	limits      *budget.Limits
	scenario    *budget.Scenario // nil with --no-results
	format      string
	color       budget.Color
	width       int
	budgetFile  string
	allowErrors bool
	providerURL string
	cacheRoot   string
	log         *slog.Logger
}

func action(c *cli.Context, stdout, stderr io.Writer, build newServer) error {
	if c.NArg() > 0 {
		return usageErrorf("unexpected argument %q: %s takes flags only", c.Args().First(), cmdName)
	}
	if c.Bool("print-scenario") {
		_, err := io.WriteString(stdout, builtinScenario)
		return err
	}
	o, err := parseOptions(c, stderr)
	if err != nil {
		return err
	}
	report, err := measure(c.Context, o, build)
	if err != nil {
		return err
	}
	switch o.format {
	case "json":
		err = budget.WriteJSON(stdout, report)
	case "markdown":
		err = budget.WriteMarkdown(stdout, report)
	case "github":
		// The limits were read from this file a moment ago; a file that
		// has gone since only loses the line numbers.
		src, _ := os.ReadFile(o.budgetFile)
		err = budget.WriteGitHub(stdout, report, budget.GitHubOptions{
			File: filepath.ToSlash(filepath.Clean(o.budgetFile)), Lines: budget.LimitLines(src)})
	default:
		err = budget.WriteText(stdout, report, budget.TextOptions{Color: o.color, Width: termstyle.ResolveWidth(stdout, o.width)})
	}
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if !report.Pass {
		return errOverBudget
	}
	return nil
}

func parseOptions(c *cli.Context, stderr io.Writer) (*options, error) {
	o := &options{
		format:      c.String("format"),
		color:       budget.Color(c.String("color")),
		width:       c.Int("width"),
		budgetFile:  c.String("budget"),
		allowErrors: c.Bool("allow-errors"),
		providerURL: strings.TrimSpace(c.String("provider-url")),
		cacheRoot:   c.String("cache-root"),
	}
	if c.Bool("json") {
		if c.IsSet("format") && o.format != "json" {
			return nil, usageErrorf("--json and --format %s disagree", o.format)
		}
		o.format = "json"
	}
	switch o.format {
	case "table", "json", "github", "markdown":
	default:
		return nil, usageErrorf("--format must be table, json, github or markdown, got %q", o.format)
	}
	var err error
	if o.color, err = termstyle.ParseColor(string(o.color)); err != nil {
		return nil, usageErrorf("%v", err)
	}
	if o.width < 0 && o.width != termstyle.WidthAuto {
		return nil, usageErrorf("--width must be 0 or a column count, got %d", o.width)
	}
	level, err := loglevel.Parse(c.String("log-level"), slog.LevelWarn)
	if err != nil {
		return nil, usageErrorf("--log-level: %v", err)
	}
	o.log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	if o.limits, err = budget.LoadLimits(c.String("budget")); err != nil {
		return nil, configErrorf("%v", err)
	}
	overrides := c.StringSlice("limit")
	if c.IsSet("max-bytes") {
		overrides = append(overrides, fmt.Sprintf("tools_list.max_bytes=%d", c.Int("max-bytes")))
	}
	for _, kv := range overrides {
		key, n, err := budget.ParseOverride(kv)
		if err == nil {
			err = o.limits.Set(key, n)
		}
		if err != nil {
			return nil, usageErrorf("--limit: %v", err)
		}
	}
	if err := o.limits.Validate(); err != nil {
		return nil, usageErrorf("limits after --limit: %v", err)
	}

	file := c.String("scenario")
	switch {
	case c.Bool("no-results") && file != "":
		return nil, usageErrorf("--no-results runs no scenario; leave out --scenario")
	case c.Bool("no-results") && o.providerURL != "":
		return nil, usageErrorf("--no-results reads no resource server; leave out --provider-url")
	case c.Bool("no-results"):
	case o.providerURL != "" && file == "":
		return nil, usageErrorf("the built-in scenario reads the demo dataset; with --provider-url pass --scenario FILE written for that grant")
	case file == "":
		o.scenario, err = budget.ParseScenario("built-in", []byte(builtinScenario))
		if err != nil {
			return nil, fmt.Errorf("built-in scenario: %w", err)
		}
	default:
		src, err := os.ReadFile(file)
		if err != nil {
			return nil, configErrorf("scenario: %v", err)
		}
		if o.scenario, err = budget.ParseScenario(file, src); err != nil {
			return nil, configErrorf("scenario %v", err)
		}
	}
	return o, nil
}

// measure builds the server, measures it and checks the measurements.
func measure(ctx context.Context, o *options, build newServer) (*budget.Report, error) {
	tok, err := o200k.New()
	if err != nil {
		return nil, err
	}
	srv, stop, err := target(ctx, o, build)
	if err != nil {
		return nil, err
	}
	defer stop()
	cs, wire, closeSession, err := budget.Connect(ctx, srv)
	if err != nil {
		return nil, err
	}
	defer closeSession()

	st, err := budget.ReadSurface(ctx, cs, wire)
	if err != nil {
		return nil, err
	}
	fp, err := budget.Measure(st, tok)
	if err != nil {
		return nil, err
	}
	checks := budget.CheckSurface(st, fp, o.limits)
	var calls []budget.Call
	name := ""
	if o.scenario != nil {
		name = o.scenario.Name
		if calls, err = budget.RunScenario(ctx, cs, wire, o.scenario, tok); err != nil {
			return nil, err
		}
		checks = append(checks, budget.CheckResults(calls, o.limits, o.allowErrors)...)
	}
	return budget.NewReport(tok, fp, name, calls, checks), nil
}

// target builds the server the pdpp-mcp binary builds, over the resource
// server the scenario reads: none with --no-results, the cached credential
// with --provider-url, else the demo double. stop releases it.
func target(ctx context.Context, o *options, build newServer) (srv *mcp.Server, stop func(), err error) {
	opts := server.Options{Logger: o.log}
	switch {
	case o.scenario == nil:
		return build(opts), func() {}, nil
	case o.providerURL != "":
		conn, err := credential.Connect(ctx, credential.ConnectOptions{
			ProviderURL: o.providerURL,
			CacheRoot:   o.cacheRoot,
			Logger:      o.log,
		})
		if err != nil {
			return nil, nil, err // a credential.Error carries its exit code
		}
		opts.RS, opts.ProviderURL = conn.RS, conn.ProviderURL
		return build(opts), func() {}, nil
	}
	demo, err := startDemo(o.log)
	if err != nil {
		return nil, nil, err
	}
	opts.RS, opts.ProviderURL = demo.client, demo.url
	return build(opts), demo.stop, nil
}
