package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pdpp-mcp/pdpp-mcp/internal/cmdexit"
	"github.com/pdpp-mcp/pdpp-mcp/internal/loglevel"
	"github.com/pdpp-mcp/pdpp-mcp/internal/mcptarget"
	"github.com/pdpp-mcp/pdpp-mcp/internal/probe"
	"github.com/pdpp-mcp/pdpp-mcp/internal/termstyle"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/server"
)

const cmdName = "pdpp-mcp-probe"

// Exit codes: this command's own verdicts, between internal/cmdexit's
// shared ones.
const (
	exitOK      = cmdexit.OK
	exitFailure = cmdexit.Failure // anything else: connection, protocol error, missing variable, I/O
	exitUsage   = cmdexit.Usage
	exitIsError = 3 // a call's isError was not what the script expects
	exitGolden  = 4 // a transcript differs from the golden one
)

func usageErrorf(format string, args ...any) error {
	return cmdexit.Usagef(cmdName, format, args...)
}

// run is the whole command; it never calls os.Exit.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var secrets []string
	return cmdexit.Run(ctx, newApp(stdin, stdout, stderr, &secrets), args, stderr, func(msg string) string {
		msg, _ = probe.Sanitize(mcptarget.Redact(msg, secrets))
		return msg
	})
}

const description = `pdpp-mcp-probe calls the tools of a PDPP MCP server and shows what the
model sees: the content[] text of each result, verbatim, with its size in
bytes, characters and tokens (o200k_base), the latency and whether it is an
error result. Start here:

  pdpp-mcp-probe --demo

runs a tour of the six tools over the demo dataset, ending with a journey
that continues only from what each result's text said.

Targets (exactly one):
  --demo                in-process pdpp-mcp over the demo dataset
  --provider-url URL    in-process pdpp-mcp over a resource server, with the
                        credential ` + "`pdpp connect URL`" + ` cached
                        (pdpp-mcp's rules)
  --server 'CMD ARGS…'  any stdio MCP server, spawned
  --url URL             a Streamable HTTP endpoint; --bearer-env NAME
                        sends the token held in environment variable NAME,
                        --header 'K: V' any other header

Calls: --script FILE (- for stdin) and --call, in that order. A line is
  TOOL {json arguments}  a tools/call; prefix ! when it must return isError
  tools/list
  resources/read URI
# comments and blank lines are skipped. The string arguments
"$first_fetch_id", "$next_cursor" and "$next_changes_since", and
$first_read_args or $next_read_args written as a tool's whole arguments,
take their values from earlier results' content[] text only.

Exit codes: 0 every call ran as expected, 1 anything else (connection,
protocol error, missing variable), 3 a call returned isError (or a ! call
did not), unless --allow-errors, 4 a golden transcript differs, 64 usage,
77 owner credential refused, 78 no usable scoped credential.

Details and a sample of the output: docs/probe.md.`

func newApp(stdin io.Reader, stdout, stderr io.Writer, secrets *[]string) *cli.App {
	app := &cli.App{
		Name:  cmdName,
		Usage: "replay MCP tool calls and show exactly what the model sees",
		UsageText: cmdName + " --demo [flags]\n" + cmdName + " (--provider-url URL | --server 'CMD ARGS…' | --url URL)\n" +
			"      (--script FILE | --call 'TOOL {json}'…) [flags]",
		Description:               description,
		Version:                   server.Version(),
		DisableSliceFlagSeparator: true, // --call values hold commas
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "demo", Category: "target",
				Usage: "serve the demo dataset from an in-process pdpp-mcp (no set-up)"},
			&cli.StringFlag{Name: "provider-url", Category: "target",
				Usage: "serve the grant cached for resource server `URL` from an in-process pdpp-mcp"},
			&cli.StringFlag{Name: "cache-root", EnvVars: []string{"PDPP_CACHE_ROOT"}, Category: "target",
				Usage: "credential cache `DIR` for --provider-url (default: ./.pdpp if it exists, else $HOME/.pdpp)"},
			&cli.StringFlag{Name: "server", Category: "target",
				Usage: "spawn the stdio MCP server `'CMD ARGS…'` (split like a shell, without expansion)"},
			&cli.StringFlag{Name: "url", Category: "target",
				Usage: "Streamable HTTP MCP endpoint `URL`"},
			&cli.StringFlag{Name: "bearer-env", Category: "target",
				Usage: "send the bearer token held in environment variable `NAME` to --url (never printed)"},
			&cli.StringSliceFlag{Name: "header", Category: "target",
				Usage: "send `'NAME: VALUE'` with every --url request (repeatable; values never printed)"},
			&cli.StringFlag{Name: "script", Category: "calls",
				Usage: "read calls from `FILE`, one per line (- reads stdin)"},
			&cli.StringSliceFlag{Name: "call", Category: "calls",
				Usage: "one call, `'TOOL {json}'`; repeatable, runs after --script"},
			&cli.BoolFlag{Name: "print-tour", Category: "calls",
				Usage: "print the built-in tour as a script and exit"},
			&cli.DurationFlag{Name: "timeout", Value: time.Minute, Category: "calls",
				Usage: "the longest (`DURATION`) one call may take"},
			&cli.BoolFlag{Name: "allow-errors", Category: "calls",
				Usage: "exit 0 even when a call returns isError"},
			&cli.BoolFlag{Name: "structured", Category: "output",
				Usage: "add each result's structuredContent, indented, to its panel"},
			&cli.StringFlag{Name: "color", Value: string(probe.ColorAuto), Category: "output",
				Usage: "colour: `auto` (terminal and NO_COLOR unset), always or never"},
			&cli.IntFlag{Name: "width", Value: termstyle.WidthAuto, Category: "output", DefaultText: "the terminal's; none when piped",
				Usage: "wrap panels at `COLUMNS` (at least 40; 0 never wraps)"},
			&cli.BoolFlag{Name: "json", Category: "output",
				Usage: "print one JSON object per call instead of panels"},
			&cli.BoolFlag{Name: "normalize", Category: "output",
				Usage: "print volatile values (request ids, cursors, ports) as golden transcripts do, and no latency"},
			&cli.StringFlag{Name: "record", Category: "golden",
				Usage: "write one golden transcript per call into `DIR`"},
			&cli.StringFlag{Name: "check", Category: "golden",
				Usage: "compare each call with the golden transcripts in `DIR`; exit 4 on a difference"},
			&cli.StringFlag{Name: "log-level", Value: "warn", Category: "output",
				Usage: "stderr log `LEVEL` of in-process servers: debug, info, warn or error"},
		},
		Action: func(c *cli.Context) error { return action(c, stdin, stdout, stderr, secrets) },
	}
	cmdexit.Configure(app, stdout, stderr)
	return app
}

// config is what the flags resolved to.
type config struct {
	timeout time.Duration
	log     *slog.Logger
	stderr  io.Writer
}

func action(c *cli.Context, stdin io.Reader, stdout, stderr io.Writer, secrets *[]string) error {
	if c.NArg() > 0 {
		return usageErrorf("unexpected argument %q: calls go in --call or --script", c.Args().First())
	}
	if c.Bool("print-tour") {
		_, err := io.WriteString(stdout, probe.TourScript)
		return err
	}
	t, err := targetFrom(c, secrets)
	if err != nil {
		return err
	}
	calls, err := callsFrom(c, stdin, t)
	if err != nil {
		return err
	}
	color, level, err := outputFlags(c)
	if err != nil {
		return err
	}
	cfg := config{
		timeout: c.Duration("timeout"),
		log:     slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})),
		stderr:  stderr,
	}

	// Open the golden directory before connecting, so a wrong path fails fast.
	rec, chk, err := openGolden(c, *secrets)
	if err != nil {
		return err
	}

	// The session outlives this context: the SDK detaches it once connected.
	cctx, cancel := context.WithTimeout(c.Context, cfg.timeout)
	cn, err := connect(cctx, t, cfg)
	cancel()
	var ce *credential.Error
	switch {
	case errors.As(err, &ce) && ce.Code == credential.CodeNoProviderURL:
		return &cmdexit.Error{Code: exitUsage, Msg: err.Error() + " Pass --provider-url <url>."}
	case c.Context.Err() != nil:
		return &cmdexit.Error{Code: exitFailure, Msg: "interrupted while connecting"}
	case err != nil:
		return err // a credential.Error carries its exit code (64, 77, 78)
	}
	defer func() {
		if err := cn.Close(); err != nil {
			cfg.log.Warn("closing the session", "error", err)
		}
	}()

	out := outputFor(c, stdout, color, *secrets)
	var tl tally
	runner := &probe.Runner{Session: cn.Session, Wire: cn.Wire, Timeout: cfg.timeout}
	runErr := runner.Run(c.Context, calls, func(r *probe.Result) error {
		tl.add(r)
		if err := out.result(r); err != nil {
			return err
		}
		switch {
		case rec != nil:
			return rec.Add(r)
		case chk != nil:
			m, err := chk.Check(r)
			if err != nil {
				return err
			}
			if m != nil {
				tl.mismatches = append(tl.mismatches, *m)
				return out.mismatch(m, stderr)
			}
		}
		return nil
	})
	switch {
	case c.Context.Err() != nil:
		return &cmdexit.Error{Code: exitFailure, Msg: fmt.Sprintf("interrupted after %d of %d calls", tl.calls, len(calls))}
	case runErr != nil:
		return runErr
	}
	if err := finishGolden(rec, chk, &tl, out, stderr); err != nil {
		return err
	}
	return tl.verdict(c.Bool("allow-errors"), c.String("check"))
}

// outputFlags checks the flags that shape the output and the run, and
// returns the colour and log level they ask for.
func outputFlags(c *cli.Context) (probe.Color, slog.Level, error) {
	color, err := probe.ParseColor(c.String("color"))
	if err != nil {
		return color, 0, usageErrorf("%v", err)
	}
	if w := c.Int("width"); w < 0 && w != termstyle.WidthAuto {
		return color, 0, usageErrorf("--width must be 0 or a column count, got %d", w)
	}
	level, err := loglevel.Parse(c.String("log-level"), slog.LevelWarn)
	if err != nil {
		return color, 0, usageErrorf("--log-level: %v", err)
	}
	switch {
	case c.Duration("timeout") <= 0:
		return color, 0, usageErrorf("--timeout must be positive, got %s", c.Duration("timeout"))
	case c.String("record") != "" && c.String("check") != "":
		return color, 0, usageErrorf("--record and --check exclude each other")
	case c.Bool("json") && c.Bool("structured"):
		return color, 0, usageErrorf("--structured adds to panels; --json already holds structuredContent in each result")
	}
	return color, level, nil
}

// openGolden opens the golden directory --record or --check names, if any.
func openGolden(c *cli.Context, secrets []string) (*probe.Recorder, *probe.Checker, error) {
	if dir := c.String("record"); dir != "" {
		rec, err := probe.NewRecorder(dir, secrets...)
		return rec, nil, err
	}
	if dir := c.String("check"); dir != "" {
		chk, err := probe.NewChecker(dir, secrets...)
		return nil, chk, err
	}
	return nil, nil, nil
}

// finishGolden reports the transcripts --check expected but no call made,
// or removes the ones --record did not write again and says what it wrote.
func finishGolden(rec *probe.Recorder, chk *probe.Checker, tl *tally, out *output, stderr io.Writer) error {
	if chk != nil {
		for _, m := range chk.Finish() {
			tl.mismatches = append(tl.mismatches, m)
			if err := out.mismatch(&m, stderr); err != nil {
				return err
			}
		}
	}
	if rec != nil {
		removed, err := rec.Finish()
		if err != nil {
			return err
		}
		note := ""
		if len(removed) > 0 {
			note = fmt.Sprintf(" and removed %d from an earlier run (%s)", len(removed), strings.Join(removed, ", "))
		}
		fmt.Fprintf(stderr, "%s: wrote %d golden transcripts to %s%s\n", cmdName, tl.calls, rec.Dir, note)
	}
	return nil
}

// targetFrom reads the target flags: exactly one target. The values of
// --bearer-env and --header join secrets, so no line printed repeats them.
func targetFrom(c *cli.Context, secrets *[]string) (target, error) {
	t := target{
		providerURL: c.String("provider-url"),
		cacheRoot:   c.String("cache-root"),
		url:         c.String("url"),
	}
	var chosen []string
	if c.Bool("demo") {
		chosen = append(chosen, targetDemo)
	}
	for _, k := range []string{targetProvider, targetServer, targetURL} {
		if c.IsSet(strings.TrimPrefix(k, "--")) {
			chosen = append(chosen, k)
		}
	}
	switch {
	case len(chosen) == 0:
		return t, usageErrorf("no target: pass --demo, --provider-url URL, --server 'CMD ARGS…' or --url URL")
	case len(chosen) > 1:
		return t, usageErrorf("%s: pass exactly one target", strings.Join(chosen, " and "))
	}
	t.kind = chosen[0]
	if c.IsSet("server") {
		argv, err := mcptarget.SplitCommand(c.String("server"))
		if err != nil {
			return t, usageErrorf("--server: %v", err)
		}
		t.server = argv
	}
	if (c.IsSet("bearer-env") || c.IsSet("header")) && !c.IsSet("url") {
		return t, usageErrorf("--bearer-env and --header go with --url")
	}
	if c.IsSet("url") {
		header, sec, err := mcptarget.Endpoint(t.url, c.StringSlice("header"), c.String("bearer-env"), os.Getenv)
		*secrets = append(*secrets, sec...)
		if err != nil {
			return t, usageErrorf("%v", err)
		}
		t.header = header
	}
	return t, nil
}

// callsFrom reads --script then --call; with --demo and neither, the tour.
func callsFrom(c *cli.Context, stdin io.Reader, t target) ([]probe.Call, error) {
	var calls []probe.Call
	var errs []error
	if path := c.String("script"); path != "" {
		r, name := stdin, "stdin"
		if path != "-" {
			f, err := os.Open(path)
			if err != nil {
				return nil, usageErrorf("--script: %v", err)
			}
			defer f.Close()
			r, name = f, path
		}
		got, err := probe.ParseScript(name, r)
		if err != nil {
			errs = append(errs, err)
		}
		calls = append(calls, got...)
	}
	for i, s := range c.StringSlice("call") {
		call, ok, err := probe.ParseCall(fmt.Sprintf("--call %d", i+1), s)
		switch {
		case err != nil:
			errs = append(errs, err)
		case !ok:
			errs = append(errs, fmt.Errorf("--call %d is empty or a comment", i+1))
		default:
			calls = append(calls, call)
		}
	}
	if len(errs) > 0 {
		return nil, &cmdexit.Error{Code: exitUsage, Msg: errors.Join(errs...).Error()}
	}
	if len(calls) == 0 && c.IsSet("script") {
		return nil, usageErrorf("--script %s holds no calls", c.String("script"))
	}
	if len(calls) == 0 {
		if t.kind != targetDemo {
			return nil, usageErrorf("no calls: pass --script FILE or --call 'TOOL {json}' (the built-in tour runs with --demo)")
		}
		return probe.Tour()
	}
	return calls, nil
}

// output prints results as panels or JSON lines.
type output struct {
	panels  *probe.Printer
	json    *probe.JSONWriter
	secrets []string
}

func outputFor(c *cli.Context, stdout io.Writer, color probe.Color, secrets []string) *output {
	if c.Bool("json") {
		return &output{json: probe.NewJSONWriter(stdout, c.Bool("normalize"), secrets), secrets: secrets}
	}
	return &output{panels: probe.NewPrinter(stdout, probe.PrinterOptions{
		Color: color, Structured: c.Bool("structured"), Normalize: c.Bool("normalize"), Redact: secrets,
		Width: termstyle.ResolveWidth(stdout, c.Int("width")),
	})}
}

func (o *output) result(r *probe.Result) error {
	if o.json != nil {
		return o.json.Write(r)
	}
	return o.panels.Print(r)
}

// mismatch shows a golden difference: after the panel, or on stderr when
// stdout carries JSON.
func (o *output) mismatch(m *probe.Mismatch, stderr io.Writer) error {
	if o.json != nil {
		return probe.NewPrinter(stderr, probe.PrinterOptions{Color: probe.ColorNever, Redact: o.secrets}).Diff(m)
	}
	return o.panels.Diff(m)
}

// tally counts how the calls ended.
type tally struct {
	calls      int
	failed     []string // protocol or transport errors
	isError    []string // isError where none was expected
	notError   []string // ! calls that did not return isError
	mismatches []probe.Mismatch
}

func (t *tally) add(r *probe.Result) {
	t.calls++
	what := fmt.Sprintf("call %d (%s)", r.N, r.Call.Name())
	switch {
	case r.Err != nil:
		t.failed = append(t.failed, what+": "+cmdexit.OneLine(r.Err.Error()))
	case r.Unexpected() && r.IsError:
		t.isError = append(t.isError, what)
	case r.Unexpected():
		t.notError = append(t.notError, what)
	}
}

// verdict is the exit status: failures (1) before golden mismatches (4)
// before unexpected error results (3).
func (t *tally) verdict(allowErrors bool, checkDir string) error {
	if len(t.failed) > 0 {
		msg := t.failed[0]
		if len(t.failed) > 1 {
			msg = fmt.Sprintf("%d of %d calls failed; first: %s", len(t.failed), t.calls, msg)
		}
		return &cmdexit.Error{Code: exitFailure, Msg: msg}
	}
	if len(t.mismatches) > 0 {
		var which []string
		for _, m := range t.mismatches {
			which = append(which, fmt.Sprintf("call %d", m.N))
		}
		return &cmdexit.Error{Code: exitGolden, Msg: fmt.Sprintf("%d golden transcripts in %s differ from this run (%s); review the diff, then re-record with --record %s",
			len(t.mismatches), checkDir, strings.Join(which, ", "), checkDir)}
	}
	var parts []string
	if len(t.isError) > 0 && !allowErrors {
		parts = append(parts, fmt.Sprintf("%s returned isError (pass --allow-errors, or mark an expected error with ! in the script)", strings.Join(t.isError, ", ")))
	}
	if len(t.notError) > 0 {
		parts = append(parts, fmt.Sprintf("%s did not return the isError its ! expects", strings.Join(t.notError, ", ")))
	}
	if len(parts) > 0 {
		return &cmdexit.Error{Code: exitIsError, Msg: strings.Join(parts, "; ")}
	}
	return nil
}
