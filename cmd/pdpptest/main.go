// Command pdpptest runs the in-process PDPP resource server double on its own,
// for exploring it by hand:
//
//	go run ./cmd/pdpptest [--dataset gmail|demo] [--addr 127.0.0.1:7662]
//
// It prints the base URL and a bearer token of every kind on stdout, then serves
// until interrupted; --help and --version print on stdout too. The tokens are test-double tokens for a synthetic dataset.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/pdpp-mcp/pdpp-mcp/internal/cmdexit"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/server"
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

// run serves until ctx is done. Exit codes (internal/cmdexit): 0 after a
// clean stop, 1 when the server cannot start, 64 on bad usage.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	app := &cli.App{
		Name:      "pdpptest",
		Usage:     "run the in-process PDPP resource server double on its own",
		UsageText: "pdpptest [--dataset gmail|demo] [--addr 127.0.0.1:7662]",
		Description: "Prints the base URL and a bearer token of every kind on stdout, then serves\n" +
			"until interrupted. Exit codes: 0 after a clean stop, 1 the server cannot\n" +
			"start, 64 usage.",
		Version: server.Version(),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dataset", Value: "gmail", Usage: "dataset to serve: gmail or demo"},
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:7662", Usage: "listen address (loopback); the default is the reference resource server's port, clear of the 7663 the hosted demo examples use"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return cmdexit.Usagef("pdpptest", "unexpected arguments: %v", c.Args().Slice())
			}
			return serve(ctx, c.String("dataset"), c.String("addr"), stdout, stderr)
		},
	}
	cmdexit.Configure(app, stdout, stderr)
	return cmdexit.Run(ctx, app, args, stderr, nil)
}

// serve starts the double and blocks until ctx is done.
func serve(ctx context.Context, name, addr string, stdout, stderr io.Writer) error {
	load, ok := datasets[name]
	if !ok {
		return cmdexit.Usagef("pdpptest", "unknown dataset %q (want gmail or demo)", name)
	}
	ds, err := load()
	if err != nil {
		return fmt.Errorf("dataset %s: %w", name, err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := pdpptest.Start(pdpptest.Options{Dataset: ds, Addr: addr, Logger: log})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "url           %s\n", srv.URL())
	fmt.Fprintf(stdout, "dataset       %s\n", ds.Name)
	for _, k := range pdpptest.TokenKinds() {
		fmt.Fprintf(stdout, "%-13s %s\n", k, srv.Token(k))
	}
	// Three lines, so each fits 80 columns with a loopback URL.
	fmt.Fprintf(stdout, "try           TOKEN=%s\n", srv.Token(pdpptest.TokenClient))
	fmt.Fprintf(stdout, "              curl -H \"Authorization: Bearer $TOKEN\" \\\n")
	fmt.Fprintf(stdout, "                '%s/v1/schema?view=compact'\n", srv.URL())
	<-ctx.Done()
	if err := srv.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	return nil
}
