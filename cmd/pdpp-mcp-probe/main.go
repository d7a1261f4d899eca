// Command pdpp-mcp-probe replays MCP tool calls against a PDPP MCP server and
// shows exactly what the model sees: the content[] text of each result, its
// size, and how the call ended. It records and checks golden transcripts of
// that text, so a change in what agents read shows up in review.
//
// With --demo and no calls it runs a built-in tour of the six tools over the
// demo dataset.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
