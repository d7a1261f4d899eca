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
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

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
	app := &cli.App{
		Name:      "pdpptest",
		Usage:     "run the in-process PDPP resource server double on its own",
		UsageText: "pdpptest [--dataset gmail|demo] [--addr 127.0.0.1:7663]",
		// Help goes to stderr: stdout carries only the URL and tokens.
		Writer:    stderr,
		ErrWriter: stderr,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dataset", Value: "gmail", Usage: "dataset to serve: gmail or demo"},
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:7663", Usage: "listen address (loopback)"},
		},
		HideHelpCommand: true,
		ExitErrHandler:  func(*cli.Context, error) {}, // run maps errors to exit codes itself
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return cli.Exit(fmt.Sprintf("pdpptest: unexpected arguments: %v (usage: %s)", c.Args().Slice(), c.App.UsageText), 2)
			}
			return serve(ctx, c.String("dataset"), c.String("addr"), stdout, stderr)
		},
	}
	err := app.RunContext(ctx, args)
	var ec cli.ExitCoder
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ec):
		fmt.Fprintln(stderr, err)
		return ec.ExitCode()
	default:
		// A flag urfave could not parse: it has already printed the reason
		// and the help on stderr.
		return 2
	}
}

// serve starts the double and blocks until ctx is done.
func serve(ctx context.Context, name, addr string, stdout, stderr io.Writer) error {
	load, ok := datasets[name]
	if !ok {
		return cli.Exit(fmt.Sprintf("pdpptest: unknown dataset %q (want gmail or demo)", name), 2)
	}
	ds, err := load()
	if err != nil {
		return cli.Exit(fmt.Sprintf("pdpptest: dataset %s: %v", name, err), 1)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := pdpptest.Start(pdpptest.Options{Dataset: ds, Addr: addr, Logger: log})
	if err != nil {
		return cli.Exit("pdpptest: "+err.Error(), 1)
	}
	fmt.Fprintf(stdout, "url           %s\n", srv.URL())
	fmt.Fprintf(stdout, "dataset       %s\n", ds.Name)
	for _, k := range pdpptest.TokenKinds() {
		fmt.Fprintf(stdout, "%-13s %s\n", k, srv.Token(k))
	}
	fmt.Fprintf(stdout, "try           curl -H 'Authorization: Bearer %s' %s/v1/schema?view=compact\n", srv.Token(pdpptest.TokenClient), srv.URL())
	<-ctx.Done()
	if err := srv.Close(); err != nil {
		return cli.Exit("pdpptest: close: "+err.Error(), 1)
	}
	return nil
}
