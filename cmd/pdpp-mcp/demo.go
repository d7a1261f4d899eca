package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// demoDataset is the dataset --demo serves.
var demoDataset = dataset.Gmail

// serveDemo starts the in-process resource server on 127.0.0.1, serves the
// tools over its client token and stops it when the MCP client goes away. No
// credential cache is read and --provider-url is ignored.
func serveDemo(ctx context.Context, cfg config) error {
	// Refused here too: one rule for every mode is easier to trust.
	if err := credential.CheckOwnerEnv(os.Getenv); err != nil {
		return err
	}
	ds, err := demoDataset()
	if err != nil {
		return fmt.Errorf("demo dataset: %w", err)
	}
	// The double's own info lines would repeat ours.
	dlog := slog.New(slog.NewTextHandler(cfg.stderr, &slog.HandlerOptions{Level: max(cfg.level, slog.LevelWarn)}))
	double, err := pdpptest.Start(pdpptest.Options{Dataset: ds, Logger: dlog})
	if err != nil {
		return fmt.Errorf("start demo resource server: %w", err)
	}
	defer func() {
		if err := double.Close(); err != nil {
			cfg.log.Warn("stop demo resource server", "error", err)
		}
	}()
	token := double.Token(pdpptest.TokenClient)
	client, err := rs.New(rs.Options{
		BaseURL:      double.URL(),
		Token:        func() string { return token },
		Timeout:      cfg.timeout,
		MaxBodyBytes: cfg.maxBytes,
		Logger:       cfg.log,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(cfg.stderr, "%s: demo: serving the %q sample dataset from an in-process resource server at %s with a client token (no credential cache)\n",
		cmdName, ds.Name, double.URL())
	return serve(ctx, cfg, client, double.URL())
}
