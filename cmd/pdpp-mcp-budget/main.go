// Command pdpp-mcp-budget measures what the pdpp-mcp server costs an agent's
// context window and fails when it is over budget.
//
// It builds the same server the pdpp-mcp binary serves, reads tools/list and
// the instructions through an in-memory go-sdk client session, runs a
// scenario of tool calls against the demo resource server (or a real one
// with --provider-url), and checks every size against budget.json. CI runs it
// on every change, so a change that widens the surface fails.
//
// Exit codes (internal/cmdexit): 0 within budget, 1 any other error, 3 over
// budget or a failed check, 64 usage, 77 owner credential refused, 78
// unusable budget file, scenario file or cached credential.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
