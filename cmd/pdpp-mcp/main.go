// Command pdpp-mcp serves a person's PDPP grant to an MCP client over stdio.
//
// It reads the grant-scoped client credential that `pdpp connect` cached for
// the provider, refuses owner credentials, and exposes read-only tools that
// map to GET requests on the resource server. With --demo it serves a sample
// dataset from an in-process resource server instead.
//
// While it serves, stdout carries JSON-RPC only; the start-up line and logs go
// to stderr. --help and --version print on stdout and exit 0. Exit codes are
// those of internal/cmdexit: 0 ok, 1 failure, 64 usage, 77 owner credential
// refused, 78 no usable scoped credential.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/pdpp-mcp/pdpp-mcp/internal/stdpipe"
)

// defaultMemoryLimit is a soft limit that makes the collector return the
// garbage of large answers promptly instead of letting the heap double;
// GOMEMLIMIT, when set, wins.
const defaultMemoryLimit = 256 << 20

func main() {
	os.Exit(mainCode())
}

// mainCode runs the command with the process's arguments, streams and
// signals.
func mainCode() int {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	go watchSignals(sigs, cancel, os.Exit)
	return run(ctx, os.Args, stdpipe.Stdin(), os.Stdout, os.Stderr)
}

// watchSignals stops serving on the first SIGINT/SIGTERM (calls in flight
// are cancelled and the process exits within about a second) and exits at
// once, with 128+signal, on the second.
func watchSignals(sigs <-chan os.Signal, stop context.CancelCauseFunc, exit func(int)) {
	first, ok := <-sigs
	if !ok {
		return
	}
	stop(fmt.Errorf("received %v", first))
	second, ok := <-sigs
	if !ok {
		return
	}
	code := 128 + 15
	if s, isSys := second.(syscall.Signal); isSys {
		code = 128 + int(s)
	}
	exit(code)
}
