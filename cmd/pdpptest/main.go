// Command pdpptest runs the in-process PDPP resource server double on its own,
// for exploring it by hand:
//
//	go run ./cmd/pdpptest [--dataset gmail|demo] [--addr 127.0.0.1:7663]
//
// It prints the base URL and a bearer token of every kind on stdout, then serves
// until interrupted. The tokens are test-double tokens for a synthetic dataset.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// datasets are the datasets the command can serve, by name.
var datasets = map[string]func() (*dataset.Dataset, error){
	"gmail": dataset.Gmail,
	"demo":  dataset.Demo,
}

// run serves until ctx is done. Exit codes: 0 after a clean stop, 1 when the
// server cannot start, 2 on bad usage.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pdpptest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("dataset", "gmail", "dataset to serve: gmail or demo")
	addr := fs.String("addr", "127.0.0.1:7663", "listen address (loopback)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: pdpptest [--dataset gmail|demo] [--addr 127.0.0.1:7663]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "pdpptest: unexpected arguments: %v\n", fs.Args())
		fs.Usage()
		return 2
	}
	load, ok := datasets[*name]
	if !ok {
		fmt.Fprintf(stderr, "pdpptest: unknown dataset %q (want gmail or demo)\n", *name)
		return 2
	}
	ds, err := load()
	if err != nil {
		fmt.Fprintf(stderr, "pdpptest: dataset %s: %v\n", *name, err)
		return 1
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := pdpptest.Start(pdpptest.Options{Dataset: ds, Addr: *addr, Logger: log})
	if err != nil {
		fmt.Fprintf(stderr, "pdpptest: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "url           %s\n", srv.URL())
	fmt.Fprintf(stdout, "dataset       %s\n", ds.Name)
	for _, k := range pdpptest.TokenKinds() {
		fmt.Fprintf(stdout, "%-13s %s\n", k, srv.Token(k))
	}
	fmt.Fprintf(stdout, "try           curl -H 'Authorization: Bearer %s' %s/v1/schema?view=compact\n", srv.Token(pdpptest.TokenClient), srv.URL())
	<-ctx.Done()
	if err := srv.Close(); err != nil {
		fmt.Fprintf(stderr, "pdpptest: close: %v\n", err)
		return 1
	}
	return 0
}
