// Package cmdexit is the command-line plumbing the four commands share: one
// set of exit codes, the error type that carries one, and the run step that
// turns an urfave/cli app's error into a status and one line on stderr.
//
// Codes that mean the same thing are the same number in every command:
//
//	0   OK       the command did what was asked (help and version included)
//	1   Failure  anything unexpected: I/O, connection, protocol
//	64  Usage    bad flags or arguments (sysexits EX_USAGE)
//	77  NoPerm   an owner credential was offered and refused (EX_NOPERM)
//	78  Config   no usable grant-scoped credential, or a bad config file (EX_CONFIG)
//
// A command adds its own verdicts between 2 and 63 (pdpp-mcp-budget: 3 over
// budget; pdpp-mcp-probe: 3 unexpected isError, 4 golden transcript differs).
// The sysexits numbers are the ones process supervisors and shells already
// know, and keep the commands' own verdicts clear of them.
package cmdexit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// The shared exit codes.
const (
	OK      = 0
	Failure = 1
	Usage   = 64
	NoPerm  = 77
	Config  = 78
)

// Coder is an error that knows its exit code (Error, credential.Error).
type Coder interface {
	error
	ExitCode() int
}

// Error is a failure with its exit code. Msg is the one line printed on
// stderr; an empty Msg prints nothing (the command has already reported).
type Error struct {
	Code int
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// ExitCode reports the code.
func (e *Error) ExitCode() int { return e.Code }

// Errorf is an Error with a formatted message.
func Errorf(code int, format string, args ...any) error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Usagef is a usage error that points at the command's --help.
func Usagef(cmd, format string, args ...any) error {
	return &Error{Code: Usage, Msg: fmt.Sprintf(format, args...) + " (see " + cmd + " --help)"}
}

// Classify keeps an error that carries a code and makes any other one a
// Failure: a command's action returns it, so that only flag parsing (which
// urfave reports before the action runs) is left unclassified.
func Classify(err error) error {
	var c Coder
	if err == nil || errors.As(err, &c) {
		return err
	}
	return &Error{Code: Failure, Msg: err.Error()}
}

// Code is the exit status of an app's error: OK for nil, the code of a
// Coder, and Usage for anything else (urfave's own flag errors).
func Code(err error) int {
	if err == nil {
		return OK
	}
	var c Coder
	if errors.As(err, &c) {
		return c.ExitCode()
	}
	return Usage
}

// Configure applies the settings every command shares: help and version on
// stdout (asked for, so they are the output), errors on stderr, flag errors
// as usage errors, and no os.Exit inside the library.
func Configure(app *cli.App, stdout, stderr io.Writer) {
	app.Writer, app.ErrWriter = stdout, stderr
	app.HideHelpCommand = true
	fitHelp(app)
	app.ExitErrHandler = func(*cli.Context, error) {}
	name := app.Name
	app.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
		return Usagef(name, "%s", err)
	}
	action := app.Action
	if action != nil {
		app.Action = func(c *cli.Context) error { return Classify(action(c)) }
	}
}

// Run runs app and returns its exit status, printing a failure as
// "<name>: <message>" on one line of stderr. redact, when not nil, cleans the
// message first (a command that holds secrets removes them).
func Run(ctx context.Context, app *cli.App, args []string, stderr io.Writer, redact func(string) string) int {
	// None of the commands has subcommands, so a lone "help" can only be a
	// person asking for it: it gets the help, not a usage error.
	if len(args) == 2 && args[1] == "help" {
		args = []string{args[0], "--help"}
	}
	err := app.RunContext(ctx, args)
	code := Code(err)
	if err != nil {
		msg := OneLine(err.Error())
		if redact != nil {
			msg = redact(msg)
		}
		if msg != "" {
			fmt.Fprintf(stderr, "%s: %s\n", app.Name, msg)
		}
	}
	return code
}

// OneLine folds every run of white space, newlines included, into one space.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
