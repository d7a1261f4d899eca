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
