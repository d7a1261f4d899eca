// Command pdpp-mcp serves a person's PDPP grant to an MCP client over stdio.
//
// It reads the grant-scoped client credential that `pdpp connect` cached for
// the provider, refuses owner credentials, and exposes read-only tools that
// map to GET requests on the resource server. With --demo it serves a sample
// dataset from an in-process resource server instead.
//
// stdout carries JSON-RPC only; help, version, the start-up line and logs go to
// stderr.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

// defaultMemoryLimit is a soft limit that makes the collector return the
// garbage of large answers promptly instead of letting the heap double;
// GOMEMLIMIT, when set, wins.
const defaultMemoryLimit = 256 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
