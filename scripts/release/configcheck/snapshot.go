package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/goreleaser/goreleaser/v2/pkg/config"
)

// snapshot builds p's builds for targets from the checkout src into dist,
// packs the archives and writes the checksum file, the way goreleaser
// release --snapshot lays them out (dist/ID_OS_ARCH_VARIANT/BINARY).
// p must have passed validate.
func snapshot(ctx context.Context, log *slog.Logger, p config.Project, src, dist string, targets []target) error {
	if _, err := os.Stat(dist); err == nil {
		return fmt.Errorf("snapshot: %s exists; remove it first", dist)
	}
	if err := os.MkdirAll(dist, 0o755); err != nil {
		return err
	}
	g, err := readGit(ctx, src)
	if err != nil {
		return err
	}
	vars, err := snapshotVars(p, g, time.Now().UTC().Format(time.RFC3339))
	if err != nil {
		return err
	}
	log.Info("snapshot", "version", vars["Version"], "commit", g.fullCommit, "targets", fmt.Sprint(targets))

	// binaries[build id][target] is the path of the built binary.
	binaries := map[string]map[target]string{}
	for _, b := range p.Builds {
		binaries[b.ID] = map[target]string{}
		for _, t := range targets {
			if !slices.Contains(buildTargets(b), t) {
				return fmt.Errorf("snapshot: build %s has no target %s", b.ID, t)
			}
			out, err := goBuild(ctx, log, p, b, src, dist, t, withTarget(vars, t))
			if err != nil {
				return err
			}
			binaries[b.ID][t] = out
		}
	}

	var archives []string
	for _, a := range p.Archives {
		for _, t := range targets {
			tv := withTarget(vars, t)
			name, err := render(a.NameTemplate, tv)
			if err != nil {
				return fmt.Errorf("archive %s: name_template: %w", a.ID, err)
			}
			format, err := archiveFormat(a, t.goos)
			if err != nil {
				return fmt.Errorf("archive %s: %w", a.ID, err)
			}
			var entries []entry
			for _, id := range archiveIDs(a, p) {
				bin := binaries[id][t]
				entries = append(entries, entry{src: bin, name: filepath.Base(bin)})
			}
			files, err := archiveFiles(a, src)
			if err != nil {
				return fmt.Errorf("archive %s: %w", a.ID, err)
			}
			entries = append(entries, files...)
			path := filepath.Join(dist, name+"."+format)
			if err := writeArchive(path, format, entries); err != nil {
				return fmt.Errorf("archive %s: %w", a.ID, err)
			}
			log.Info("archive", "path", path, "entries", len(entries))
			archives = append(archives, path)
		}
	}

	sumName, err := render(p.Checksum.NameTemplate, vars)
	if err != nil {
		return fmt.Errorf("checksum: name_template: %w", err)
	}
	if err := writeChecksums(filepath.Join(dist, sumName), archives); err != nil {
		return err
	}
	log.Info("checksums", "path", filepath.Join(dist, sumName))
	return nil
}

// goBuild runs go build for one build and target with the configuration's
// env, flags and rendered ldflags, and sets the binary's mtime to
// mod_timestamp when given.
func goBuild(ctx context.Context, log *slog.Logger, p config.Project, b config.Build, src, dist string, t target, vars map[string]any) (string, error) {
	fail := func(err error) (string, error) { return "", fmt.Errorf("build %s %s: %w", b.ID, t, err) }
	env, err := renderAll(slices.Concat(p.Env, b.Env), vars)
	if err != nil {
		return fail(fmt.Errorf("env: %w", err))
	}
	flags, err := renderAll(b.Flags, vars)
	if err != nil {
		return fail(fmt.Errorf("flags: %w", err))
	}
	ldflags, err := renderAll(b.Ldflags, vars)
	if err != nil {
		return fail(fmt.Errorf("ldflags: %w", err))
	}
	tags, err := renderAll(b.Tags, vars)
	if err != nil {
		return fail(fmt.Errorf("tags: %w", err))
	}
	binary := b.Binary
	if t.goos == "windows" {
		binary += ".exe"
	}
	out, err := filepath.Abs(filepath.Join(dist, b.ID+"_"+t.folder(), binary))
	if err != nil {
		return fail(err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fail(err)
	}
	args := append([]string{"build"}, flags...)
	if len(tags) > 0 {
		args = append(args, "-tags="+strings.Join(tags, ","))
	}
	if len(ldflags) > 0 {
		args = append(args, "-ldflags="+strings.Join(ldflags, " "))
	}
	args = append(args, "-o", out, b.Main)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), env...)
	cmd.Env = append(cmd.Env, "GOOS="+t.goos, "GOARCH="+t.goarch)
	switch t.goarch {
	case "amd64":
		cmd.Env = append(cmd.Env, "GOAMD64="+t.variant())
	case "arm64":
		cmd.Env = append(cmd.Env, "GOARM64="+t.variant())
	}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return fail(err)
	}
	log.Info("built", "build", b.ID, "target", t.String(), "seconds", time.Since(start).Round(100*time.Millisecond).Seconds())
	if b.ModTimestamp != "" {
		ts, err := render(b.ModTimestamp, vars)
		if err != nil {
			return fail(fmt.Errorf("mod_timestamp: %w", err))
		}
		sec, err := strconv.ParseInt(strings.TrimSpace(ts), 10, 64)
		if err != nil {
			return fail(fmt.Errorf("mod_timestamp %q: %w", ts, err))
		}
		mt := time.Unix(sec, 0)
		if err := os.Chtimes(out, mt, mt); err != nil {
			return fail(err)
		}
	}
	return out, nil
}

type entry struct {
	src  string // file on disk
	name string // path inside the archive
}

// archiveFiles expands an archive's files globs relative to src, in
// sorted order; a glob that matches nothing is an error, as in goreleaser.
func archiveFiles(a config.Archive, src string) ([]entry, error) {
	var out []entry
	for _, f := range a.Files {
		matches, err := filepath.Glob(filepath.Join(src, f.Source))
		if err != nil {
			return nil, fmt.Errorf("files %q: %w", f.Source, err)
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("files %q: no match", f.Source)
		}
		sort.Strings(matches)
		for _, m := range matches {
			rel, err := filepath.Rel(src, m)
			if err != nil {
				return nil, err
			}
			if f.StripParent {
				rel = filepath.Base(rel)
			}
			if f.Destination != "" {
				rel = filepath.Join(f.Destination, rel)
			}
			out = append(out, entry{src: m, name: filepath.ToSlash(rel)})
		}
	}
	return out, nil
}

func writeArchive(path, format string, entries []entry) (err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	switch format {
	case "zip":
		return writeZip(f, entries)
	default:
		return writeTarGz(f, entries)
	}
}

// writeTarGz compresses for speed: the snapshot is checked and thrown
// away, and goreleaser's best compression costs seconds per archive.
func writeTarGz(w io.Writer, entries []entry) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		if err := addFile(e, func(fi os.FileInfo) (io.Writer, error) {
			h, err := tar.FileInfoHeader(fi, "")
			if err != nil {
				return nil, err
			}
			h.Name = e.name
			h.Uname, h.Gname, h.Uid, h.Gid = "", "", 0, 0
			return tw, tw.WriteHeader(h)
		}); err != nil {
			return err
		}
	}
	return errors.Join(tw.Close(), gz.Close())
}

func writeZip(w io.Writer, entries []entry) error {
	zw := zip.NewWriter(w)
	for _, e := range entries {
		if err := addFile(e, func(fi os.FileInfo) (io.Writer, error) {
			h, err := zip.FileInfoHeader(fi)
			if err != nil {
				return nil, err
			}
			h.Name = e.name
			h.Method = zip.Deflate
			return zw.CreateHeader(h)
		}); err != nil {
			return err
		}
	}
	return zw.Close()
}

// addFile copies e's content into the writer header returns for it.
func addFile(e entry, header func(os.FileInfo) (io.Writer, error)) error {
	f, err := os.Open(e.src)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", e.src)
	}
	w, err := header(fi)
	if err != nil {
		return fmt.Errorf("%s: %w", e.name, err)
	}
	if _, err := io.Copy(w, f); err != nil {
		return fmt.Errorf("%s: %w", e.name, err)
	}
	return nil
}

// writeChecksums writes "SHA256  NAME" lines sorted by name, the format
// sha256sum -c reads.
func writeChecksums(path string, files []string) error {
	sort.Slice(files, func(i, j int) bool { return filepath.Base(files[i]) < filepath.Base(files[j]) })
	var b strings.Builder
	for _, p := range files {
		sum, err := sha256File(p)
		if err != nil {
			return fmt.Errorf("checksum: %w", err)
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, filepath.Base(p))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func sha256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
