// Command configcheck checks .goreleaser.yaml with goreleaser's own loader
// and rules this project relies on, and builds a snapshot release from it
// without goreleaser. Building goreleaser itself costs minutes of CPU; this
// program only compiles its configuration package, so CI on a fresh machine
// can always check the release configuration.
//
//	configcheck check [-config .goreleaser.yaml]
//	configcheck snapshot -src CLONE [-dist DIR] [-targets linux/amd64,darwin/arm64]
//
// snapshot checks the clone's configuration first, then builds each build
// for each target with the configuration's env, flags and ldflags, packs the
// archives and writes the checksum file, as goreleaser's snapshot would.
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
	"path/filepath"
	"strings"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "configcheck: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stderr io.Writer) error {
	log := slog.New(slog.NewTextHandler(stderr, nil))
	if len(args) == 0 {
		return errors.New("usage: configcheck check|snapshot [flags]")
	}
	switch args[0] {
	case "check":
		fs := flag.NewFlagSet("check", flag.ContinueOnError)
		fs.SetOutput(stderr)
		cfg := fs.String("config", ".goreleaser.yaml", "goreleaser configuration")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		p, err := loadFile(*cfg)
		if err != nil {
			return err
		}
		if err := validate(p, modulePathOf(filepath.Dir(*cfg))); err != nil {
			return fmt.Errorf("%s: %w", *cfg, err)
		}
		log.Info("configuration valid", "config", *cfg, "builds", len(p.Builds))
		return nil
	case "snapshot":
		fs := flag.NewFlagSet("snapshot", flag.ContinueOnError)
		fs.SetOutput(stderr)
		src := fs.String("src", "", "git checkout to build (required)")
		cfg := fs.String("config", "", "configuration (default SRC/.goreleaser.yaml)")
		dist := fs.String("dist", "", "output folder, must not exist (default SRC/dist)")
		targets := fs.String("targets", "linux/amd64,darwin/arm64", "comma-separated GOOS/GOARCH to build")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *src == "" {
			return errors.New("snapshot: -src is required")
		}
		if *cfg == "" {
			*cfg = filepath.Join(*src, ".goreleaser.yaml")
		}
		if *dist == "" {
			*dist = filepath.Join(*src, "dist")
		}
		p, err := loadFile(*cfg)
		if err != nil {
			return err
		}
		if err := validate(p, modulePathOf(*src)); err != nil {
			return fmt.Errorf("%s: %w", *cfg, err)
		}
		var want []target
		for _, t := range strings.Split(*targets, ",") {
			goos, goarch, ok := strings.Cut(strings.TrimSpace(t), "/")
			if !ok || goos == "" || goarch == "" {
				return fmt.Errorf("snapshot: target %q is not GOOS/GOARCH", t)
			}
			want = append(want, target{goos, goarch})
		}
		return snapshot(ctx, log, p, *src, *dist, want)
	default:
		return fmt.Errorf("unknown mode %q: want check or snapshot", args[0])
	}
}
