package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// A tiny module with the project's layout, committed in a fresh git
// repository, goes through the whole snapshot.
func TestSnapshot(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	src := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/tool\n\ngo 1.26\n",
		"internal/version/version.go": `package version

var version, commit, date string

func String() string { return version + " " + commit + " " + date }
`,
		"cmd/tool/main.go": `package main

import (
	"fmt"

	"example.com/tool/internal/version"
)

func main() { fmt.Println(version.String()) }
`,
		"LICENSE":    "license text\n",
		"docs/a.md":  "a\n",
		"docs/b.md":  "b\n",
		"docs/c.txt": "not packed\n",
	}
	for name, body := range files {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", src, "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z", "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "init")
	full := git("rev-parse", "HEAD")
	short := git("rev-parse", "--short", "HEAD")

	p, err := load(strings.NewReader(strings.Replace(validConfig, "files: [LICENSE]",
		"files: [LICENSE, {src: 'docs/*.md', dst: doc, strip_parent: true}]", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(p, modulePathOf(src)); err != nil {
		t.Fatal(err)
	}
	dist := filepath.Join(t.TempDir(), "dist")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	targets := []target{{"linux", "amd64"}, {"darwin", "arm64"}}
	if err := snapshot(context.Background(), log, p, src, dist, targets); err != nil {
		t.Fatal(err)
	}

	version := "0.0.1-SNAPSHOT-" + short
	sums, err := os.ReadFile(filepath.Join(dist, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(sums)), "\n")
	if len(lines) != 2 {
		t.Fatalf("checksums.txt: %q, want 2 lines", sums)
	}
	for i, tg := range []string{"darwin_arm64", "linux_amd64"} {
		name := "tool_" + version + "_" + tg + ".tar.gz"
		sum, err := sha256File(filepath.Join(dist, name))
		if err != nil {
			t.Fatal(err)
		}
		if want := sum + "  " + name; lines[i] != want {
			t.Errorf("checksums.txt line %d: %q, want %q", i, lines[i], want)
		}
		got := tarNames(t, filepath.Join(dist, name))
		if want := []string{"tool", "LICENSE", "doc/a.md", "doc/b.md"}; !slices.Equal(got, want) {
			t.Errorf("%s holds %v, want %v", name, got, want)
		}
	}

	bin := filepath.Join(dist, "tool_linux_amd64_v1", "tool")
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC); !fi.ModTime().Equal(want) {
		t.Errorf("mod_timestamp: binary mtime %v, want the commit's %v", fi.ModTime().UTC(), want)
	}
	if _, err := os.Stat(filepath.Join(dist, "tool_darwin_arm64_v8.0", "tool")); err != nil {
		t.Error(err)
	}
	bi, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath=true", "GOAMD64=v1"} {
		if !bytes.Contains(bi, []byte(want)) {
			t.Errorf("go version -m: no %s in\n%s", want, bi)
		}
	}
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		out, err := exec.Command(bin).Output()
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(string(out))
		if len(f) != 3 || f[0] != version || f[1] != full || !strings.HasPrefix(f[2], "20") {
			t.Errorf("stamp: %q, want %s %s DATE", out, version, full)
		}
	}

	// The dist folder of an earlier run is never overwritten.
	if err := snapshot(context.Background(), log, p, src, dist, targets); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("second run into the same dist: %v, want an error", err)
	}
	// A target outside the configuration is refused.
	if err := snapshot(context.Background(), log, p, src, filepath.Join(t.TempDir(), "d"), []target{{"plan9", "amd64"}}); err == nil {
		t.Error("target plan9/amd64 built; want an error")
	}
}

func tarNames(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
}

// Windows archives are zip; the writer is checked on its own so the test
// does not cross-compile the runtime for windows.
func TestWriteZip(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.exe")
	if err := os.WriteFile(a, []byte("binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "x.zip")
	if err := writeArchive(path, "zip", []entry{{src: a, name: "a.exe"}, {src: a, name: "doc/a"}}); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || string(body) != "binary" {
			t.Errorf("%s: %q, %v", f.Name, body, err)
		}
	}
	if want := []string{"a.exe", "doc/a"}; !slices.Equal(names, want) {
		t.Errorf("zip holds %v, want %v", names, want)
	}
	if err := writeArchive(path, "zip", nil); err == nil {
		t.Error("overwrote an existing archive")
	}
}
