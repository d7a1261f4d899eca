package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/urfave/cli/v2"

	"github.com/pdpp-mcp/pdpp-mcp/internal/budget"
	"github.com/pdpp-mcp/pdpp-mcp/internal/cmdexit"
	"github.com/pdpp-mcp/pdpp-mcp/internal/loglevel"
	"github.com/pdpp-mcp/pdpp-mcp/internal/mcptarget"
	"github.com/pdpp-mcp/pdpp-mcp/internal/o200k"
	"github.com/pdpp-mcp/pdpp-mcp/internal/probe"
	"github.com/pdpp-mcp/pdpp-mcp/internal/termstyle"
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

// runWith runs the command measuring build's server as pdpp-mcp. The one
// line on stderr is cleaned of terminal controls (a server's text can be in
// it) and of the bearer and header values given.
func runWith(ctx context.Context, args []string, stdout, stderr io.Writer, build newServer) int {
	var secrets []string
	return cmdexit.Run(ctx, newApp(stdout, stderr, build, &secrets), args, stderr, func(msg string) string {
		msg, _ = probe.Sanitize(mcptarget.Redact(msg, secrets))
		return msg
	})
}

const description = `pdpp-mcp-budget measures what an MCP server costs an agent's context window
and checks it against a budget file (budget.json; docs/budget.md).

Targets: pdpp-mcp itself, built in this process as the pdpp-mcp binary
builds it (the default), or any MCP server:
  --server 'CMD ARGS…'  a stdio server, spawned
  --url URL             a Streamable HTTP endpoint; --bearer-env NAME sends
                        the token held in environment variable NAME, and
                        --header 'K: V' any other header

It reads the server as a client does and sizes what the server sent:
  - tools/list: bytes and tokens of the tools array (all pages), and per
    tool of its description, input schema, output schema and the rest;
    the instructions; resource templates and prompts when offered;
  - results: a scenario of tool calls (--scenario FILE, a pdpp-mcp-probe
    script; for pdpp-mcp a built-in one over the demo resource server, or
    --provider-url), sizing each call's content[] text and
    structuredContent.

Checks, each named by its limit key: the tools array, each tool, each
description, the instructions, the other lists, each result; schema
portability for strict clients; prose repeated across tools. For pdpp-mcp
(or a budget file with "pdpp": true) also: exactly the six tools, a
self-contained instructions head, no owner-credential guidance. Tokens are
counted with the o200k_base encoding; bytes are what is budgeted.

Baselines: --write-baseline FILE keeps the measurement; --baseline FILE
compares with one, per tool, and fails when something grew by more than
--max-growth percent (default 0).

Exit codes: 0 within budget, 1 any other error (a target that cannot be
measured), 3 over budget, a failed check or grown past the baseline, 64
usage (flags), 77 owner credential refused, 78 unusable budget, baseline or
scenario file, or cached credential.`

func newApp(stdout, stderr io.Writer, build newServer, secrets *[]string) *cli.App {
	app := &cli.App{
		Name:  cmdName,
		Usage: "check an MCP server's tools/list and result sizes against a budget",
		UsageText: cmdName + " [--server 'CMD ARGS…' | --url URL] [--budget FILE]\n" +
			"      [--limit KEY=N]... [--scenario FILE | --no-results]\n" +
			"      [--baseline FILE] [--write-baseline FILE] [--format FORMAT]",
		Description:               description,
		Version:                   server.Version(),
		DisableSliceFlagSeparator: true, // header values hold commas
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "server", Category: "target",
				Usage: "measure the stdio MCP server `'CMD ARGS…'`, spawned (split like a shell, without expansion)"},
			&cli.StringFlag{Name: "url", Category: "target",
				Usage: "measure the Streamable HTTP MCP endpoint `URL`"},
			&cli.StringFlag{Name: "bearer-env", Category: "target",
				Usage: "send the bearer token held in environment variable `NAME` to --url (never printed)"},
			&cli.StringSliceFlag{Name: "header", Category: "target",
				Usage: "send `'NAME: VALUE'` with every --url request (repeatable; values never printed)"},
			&cli.DurationFlag{Name: "timeout", Value: time.Minute, Category: "target",
				Usage: "the longest (`DURATION`) the target may take to start or to answer one request"},
			// No PDPP_PROVIDER_URL fallback: a variable set for pdpp-mcp must
			// not turn a CI run of the demo scenario into a usage error.
			&cli.StringFlag{Name: "provider-url", Category: "target",
				Usage: "run pdpp-mcp's scenario against this resource server `URL` with the credential pdpp connect cached (needs --scenario)"},
			&cli.StringFlag{Name: "cache-root", EnvVars: []string{"PDPP_CACHE_ROOT"}, Category: "target",
				Usage: "credential cache `DIR` for --provider-url (default: ./.pdpp if it exists, else $HOME/.pdpp)"},
			&cli.StringFlag{Name: "budget", Value: "budget.json", EnvVars: []string{"PDPP_MCP_BUDGET"}, Category: "budget",
				Usage: "budget `FILE` holding the limits (for --server and --url it may be missing: then only --limit and the portability and prose checks apply)"},
			&cli.StringSliceFlag{Name: "limit", Category: "budget",
				Usage: "override one limit of the budget file by its dotted `KEY=N`, e.g. tools_list.max_bytes=16384 or results.search.text_max_bytes=1800 (repeatable)"},
			&cli.IntFlag{Name: "max-bytes", DefaultText: "the budget file's", Category: "budget",
				Usage: "shorthand for --limit tools_list.max_bytes=`N`"},
			&cli.StringFlag{Name: "baseline", Category: "budget",
				Usage: "compare with the baseline `FILE` and fail when something grew past --max-growth"},
			&cli.Float64Flag{Name: "max-growth", Value: 0, Category: "budget",
				Usage: "the growth over the baseline tolerated, in `PERCENT`, for the tools array, each tool and each result"},
			&cli.StringFlag{Name: "write-baseline", Category: "budget",
				Usage: "write this run's measurement to `FILE`, a baseline for later runs"},
			&cli.StringFlag{Name: "scenario", Category: "results",
				Usage: "scenario `FILE`, a pdpp-mcp-probe script (one call per line: TOOL {json}, !TOOL {json}, resources/read URI, tools/list); default for pdpp-mcp: the built-in demo scenario, for other targets: none"},
			&cli.BoolFlag{Name: "no-results", Category: "results",
				Usage: "measure tools/list and the other lists only: no scenario, no resource server"},
			&cli.BoolFlag{Name: "print-scenario", Category: "results",
				Usage: "print the built-in scenario and exit"},
			&cli.BoolFlag{Name: "allow-errors", Category: "results",
				Usage: "measure error results without failing their calls"},
			&cli.StringFlag{Name: "format", Value: "table", Category: "output",
				Usage: "output `FORMAT`: table, json, github (the table plus workflow annotations) or markdown (for a pull-request comment or job summary)"},
			&cli.BoolFlag{Name: "json", Category: "output", Usage: "shorthand for --format json"},
			&cli.StringFlag{Name: "color", Value: "auto", Category: "output",
				Usage: "`WHEN` to colour the table: auto (terminals, unless NO_COLOR is set), always or never"},
			&cli.IntFlag{Name: "width", Value: termstyle.WidthAuto, DefaultText: "the terminal's; none when piped", Category: "output",
				Usage: "fit the tables into `COLUMNS` (at least 40; 0 never wraps)"},
			&cli.StringFlag{Name: "log-level", Value: "warn", Category: "output",
				Usage: "stderr log `LEVEL`: debug (which also passes a spawned server's stderr on), info, warn or error"},
		},
		Action: func(c *cli.Context) error { return action(c, stdout, stderr, build, secrets) },
	}
	cmdexit.Configure(app, stdout, stderr)
	return app
}

// options is what the flags resolved to.
type options struct {
	target      target
	limits      *budget.Limits
	scenario    *budget.Scenario // nil with --no-results
	format      string
	color       budget.Color
	width       int
	budgetFile  string // "" when no file was read
	allowErrors bool
	baseline    string
	maxGrowth   float64
	writeTo     string
	timeout     time.Duration
	log         *slog.Logger
	level       slog.Level
	stderr      io.Writer
}

func action(c *cli.Context, stdout, stderr io.Writer, build newServer, secrets *[]string) error {
	if c.NArg() > 0 {
		return usageErrorf("unexpected argument %q: %s takes flags only", c.Args().First(), cmdName)
	}
	if c.Bool("print-scenario") {
		_, err := io.WriteString(stdout, builtinScenario)
		return err
	}
	o, err := parseOptions(c, stderr, secrets)
	if err != nil {
		return err
	}
	report, err := measure(c.Context, o, build)
	if err != nil {
		return err
	}
	if o.baseline != "" {
		base, err := budget.LoadBaseline(o.baseline)
		if err != nil {
			return configErrorf("%v", err)
		}
		report.Compare(base, o.baseline, o.maxGrowth)
	}
	if o.writeTo != "" {
		if err := writeBaseline(o.writeTo, report); err != nil {
			return err
		}
	}
	switch o.format {
	case "json":
		err = budget.WriteJSON(stdout, report)
	case "markdown":
		err = budget.WriteMarkdown(stdout, report)
	case "github":
		// The limits were read from this file a moment ago; a file that
		// has gone since only loses the line numbers.
		var gh budget.GitHubOptions
		if o.budgetFile != "" {
			src, _ := os.ReadFile(o.budgetFile)
			gh = budget.GitHubOptions{File: filepath.ToSlash(filepath.Clean(o.budgetFile)), Lines: budget.LimitLines(src)}
		}
		err = budget.WriteGitHub(stdout, report, gh)
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

// writeBaseline writes the file whole or not at all.
func writeBaseline(path string, r *budget.Report) error {
	var b bytes.Buffer
	if err := budget.WriteBaseline(&b, budget.NewBaseline(r)); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".baseline-*")
	if err != nil {
		return fmt.Errorf("write baseline: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b.Bytes()); err != nil {
		tmp.Close()
		return fmt.Errorf("write baseline: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write baseline: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write baseline: %w", err)
	}
	return nil
}

func parseOptions(c *cli.Context, stderr io.Writer, secrets *[]string) (*options, error) {
	o := &options{
		format:      c.String("format"),
		color:       budget.Color(c.String("color")),
		width:       c.Int("width"),
		allowErrors: c.Bool("allow-errors"),
		baseline:    c.String("baseline"),
		maxGrowth:   c.Float64("max-growth"),
		writeTo:     c.String("write-baseline"),
		timeout:     c.Duration("timeout"),
		stderr:      stderr,
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
	if o.level, err = loglevel.Parse(c.String("log-level"), slog.LevelWarn); err != nil {
		return nil, usageErrorf("--log-level: %v", err)
	}
	o.log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: o.level}))
	switch {
	case o.timeout <= 0:
		return nil, usageErrorf("--timeout must be positive, got %s", o.timeout)
	case c.IsSet("max-growth") && o.baseline == "":
		return nil, usageErrorf("--max-growth goes with --baseline")
	case o.maxGrowth < 0 || math.IsNaN(o.maxGrowth) || math.IsInf(o.maxGrowth, 0):
		return nil, usageErrorf("--max-growth must be a percentage of 0 or more, got %v", o.maxGrowth)
	}
	if o.target, err = targetFrom(c, secrets); err != nil {
		return nil, err
	}
	if err := o.loadLimits(c); err != nil {
		return nil, err
	}
	return o, o.loadScenario(c)
}

// loadLimits reads the budget file, applies --limit and validates the
// result: with the PDPP rules for pdpp-mcp. For any other target a budget
// file that was not named may be missing.
func (o *options) loadLimits(c *cli.Context) error {
	pdpp := o.target.pdpp()
	file := c.String("budget")
	_, statErr := os.Stat(file)
	switch {
	case !pdpp && !c.IsSet("budget") && errors.Is(statErr, fs.ErrNotExist):
		o.limits = &budget.Limits{}
	default:
		l, err := budget.LoadLimits(file, pdpp)
		if err != nil {
			return configErrorf("%v", err)
		}
		o.limits, o.budgetFile = l, file
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
			return usageErrorf("--limit: %v", err)
		}
	}
	if err := o.limits.Validate(o.limits.PDPP); err != nil {
		return usageErrorf("limits after --limit: %v", err)
	}
	return nil
}

// loadScenario reads --scenario, or takes the built-in one for pdpp-mcp
// over the demo dataset.
func (o *options) loadScenario(c *cli.Context) error {
	file := c.String("scenario")
	t := o.target
	var err error
	switch {
	case c.Bool("no-results") && file != "":
		return usageErrorf("--no-results runs no scenario; leave out --scenario")
	case c.Bool("no-results") && t.providerURL != "":
		return usageErrorf("--no-results reads no resource server; leave out --provider-url")
	case c.Bool("no-results"):
	case t.providerURL != "" && file == "":
		return usageErrorf("the built-in scenario reads the demo dataset; with --provider-url pass --scenario FILE written for that grant")
	case file == "" && t.kind != targetPDPP:
		// The built-in scenario calls pdpp-mcp's tools: another server
		// is measured without results unless a scenario is given.
	case file == "":
		if o.scenario, err = budget.ParseScenario("built-in", []byte(builtinScenario)); err != nil {
			return fmt.Errorf("built-in scenario: %w", err)
		}
	default:
		src, err := os.ReadFile(file)
		if err != nil {
			return configErrorf("scenario: %v", err)
		}
		if o.scenario, err = budget.ParseScenario(file, src); err != nil {
			return configErrorf("scenario %v", err)
		}
	}
	return nil
}

// measure opens the target, measures it and checks the measurements.
func measure(ctx context.Context, o *options, build newServer) (*budget.Report, error) {
	tok, err := o200k.New()
	if err != nil {
		return nil, err
	}
	cn, err := open(ctx, o, build)
	if err != nil {
		return nil, err
	}
	failed := func(err error) error {
		if ctx.Err() != nil {
			cn.Abort()
			return &cmdexit.Error{Code: cmdexit.Failure, Msg: "interrupted while measuring " + o.target.label()}
		}
		err = cn.Explain(o.target.label(), err)
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w (no answer within --timeout %s)", err, o.timeout)
		}
		cn.Abort()
		return err
	}

	st, err := budget.ReadSurface(ctx, cn.Session, cn.Wire, o.timeout)
	if err != nil {
		return nil, failed(err)
	}
	fp, err := budget.Measure(st, tok)
	if err != nil {
		cn.Abort()
		return nil, err
	}
	if o.limits.PDPP { // a PDPP surface, whatever serves it
		fp.PDPPOrder()
	}
	checks := budget.CheckSurface(st, fp, o.limits)
	var calls []budget.Call
	name := ""
	if o.scenario != nil {
		name = o.scenario.Name
		runner := &probe.Runner{Session: cn.Session, Wire: cn.Wire, Timeout: o.timeout}
		if calls, err = budget.RunScenario(ctx, runner, o.scenario, tok); err != nil {
			return nil, failed(err)
		}
		// A session the transport gave up on cannot be measured further:
		// the calls after it would only say so again.
		if err := cn.Err(); err != nil {
			return nil, failed(err)
		}
		checks = append(checks, budget.CheckResults(calls, o.limits, o.allowErrors)...)
	}
	if err := cn.Close(); err != nil {
		o.log.Warn("closing the session", "error", err)
	}
	r := budget.NewReport(tok, fp, name, calls, checks)
	r.Target = o.target.label()
	return r, nil
}
