package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goreleaser/goreleaser/v2/pkg/config"
)

// requiredTargets are the platforms every release ships.
var requiredTargets = []target{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

type target struct{ goos, goarch string }

func (t target) String() string { return t.goos + "/" + t.goarch }

// variant is the microarchitecture level goreleaser defaults to and names
// its build folders after.
func (t target) variant() string {
	switch t.goarch {
	case "amd64":
		return "v1"
	case "arm64":
		return "v8.0"
	}
	return ""
}

// folder is goreleaser's name for a target in dist/ ("linux_amd64_v1").
func (t target) folder() string {
	s := t.goos + "_" + t.goarch
	if v := t.variant(); v != "" {
		s += "_" + v
	}
	return s
}

func loadFile(path string) (config.Project, error) {
	f, err := os.Open(path)
	if err != nil {
		return config.Project{}, fmt.Errorf("load: %w", err)
	}
	defer f.Close()
	return load(f)
}

// load decodes strictly, as goreleaser check does: an unknown or misspelt
// field is an error, not silently dropped.
func load(r io.Reader) (config.Project, error) {
	p, err := config.LoadReader(r)
	if err != nil {
		return p, fmt.Errorf("load: %w", err)
	}
	return p, nil
}

// modulePathOf reads the module path from dir/go.mod, "" when unreadable
// (validate then reports the stamps as missing).
func modulePathOf(dir string) string {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// Values the stamp check renders ldflags with; each is distinct so a
// variable stamped with the wrong field is caught.
var probe = gitInfo{
	tag:        "v1.2.3",
	fullCommit: "0123456789abcdef0123456789abcdef01234567",
	short:      "0123456",
	commitUnix: 1767225600, // 2026-01-01T00:00:00Z
}

const probeDate = "2026-02-03T04:05:06Z"

// problems collects every problem found, so one run reports them all.
type problems []error

func (ps *problems) add(format string, a ...any) { *ps = append(*ps, fmt.Errorf(format, a...)) }

// validate reports every problem in p, joined; nil when the configuration
// is one this project can release and the fallback snapshot can build.
func validate(p config.Project, module string) error {
	var ps problems
	if p.Version != 2 {
		ps.add("version: %d, want 2", p.Version)
	}
	for _, d := range deprecatedFields(p) {
		ps.add("%s: deprecated (goreleaser check fails on it)", d)
	}
	if p.ProjectName == "" {
		ps.add("project_name: empty (the archive names carry it)")
	}
	if len(p.Builds) == 0 {
		ps.add("builds: none")
	}
	vars, err := snapshotVars(p, probe, probeDate)
	if err != nil {
		ps = append(ps, err)
		return errors.Join(ps...)
	}
	ids := map[string]bool{}
	for i, b := range p.Builds {
		name := fmt.Sprintf("builds[%d] (%s)", i, b.ID)
		if ids[b.ID] {
			ps.add("%s: id: duplicate", name)
		}
		ids[b.ID] = true
		ps.build(name, b, p.Env, vars, module)
	}

	if len(p.Archives) == 0 {
		ps.add("archives: none")
	}
	archived := map[string]bool{}
	for i, a := range p.Archives {
		name := fmt.Sprintf("archives[%d] (%s)", i, a.ID)
		for _, id := range archiveIDs(a, p) {
			if !ids[id] {
				ps.add("%s: ids: no build %q", name, id)
			}
			archived[id] = true
		}
		ps.archive(name, a, vars)
	}
	for _, b := range p.Builds {
		if len(p.Archives) > 0 && !archived[b.ID] {
			ps.add("archives: build %q is in no archive", b.ID)
		}
	}
	ps.checksum(p.Checksum, vars)
	return errors.Join(ps...)
}

// build checks one build: named, static, trimmed, stamped, every required
// target, and templates the fallback can render.
func (ps *problems) build(name string, b config.Build, projectEnv []string, vars map[string]any, module string) {
	if b.ID == "" {
		ps.add("%s: id: empty (archives select builds by id)", name)
	}
	for _, e := range unsupportedBuild(b) {
		ps.add("%s: %s: not modelled by the fallback snapshot; extend scripts/release/configcheck or drop it", name, e)
	}
	if b.Main == "" {
		ps.add("%s: main: empty", name)
	}
	if b.Binary == "" {
		ps.add("%s: binary: empty", name)
	}
	if cgo := lastEnv(slices.Concat(projectEnv, b.Env), "CGO_ENABLED"); cgo != "0" {
		ps.add("%s: env: CGO_ENABLED=%q, want CGO_ENABLED=0 (static binaries)", name, cgo)
	}
	if !slices.Contains(b.Flags, "-trimpath") {
		ps.add("%s: flags: no -trimpath (reproducible, no local paths)", name)
	}
	have := buildTargets(b)
	for _, t := range requiredTargets {
		if !slices.Contains(have, t) {
			ps.add("%s: target %s missing", name, t)
		}
	}
	tv := withTarget(vars, target{"linux", "amd64"})
	ld, err := renderAll(b.Ldflags, tv)
	if err != nil {
		ps.add("%s: ldflags: %w", name, err)
	} else if err := checkStamps(strings.Join(ld, " "), module, tv); err != nil {
		ps.add("%s: ldflags: %w", name, err)
	}
	if _, err := renderAll(b.Flags, tv); err != nil {
		ps.add("%s: flags: %w", name, err)
	}
	if _, err := renderAll(b.Env, tv); err != nil {
		ps.add("%s: env: %w", name, err)
	}
	if b.ModTimestamp != "" {
		if _, err := render(b.ModTimestamp, tv); err != nil {
			ps.add("%s: mod_timestamp: %w", name, err)
		}
	}
}

// archive checks one archive: a format for every required target, and a
// name template that renders to a distinct name for each.
func (ps *problems) archive(name string, a config.Archive, vars map[string]any) {
	for _, e := range unsupportedArchive(a) {
		ps.add("%s: %s: not modelled by the fallback snapshot; extend scripts/release/configcheck or drop it", name, e)
	}
	if a.NameTemplate == "" {
		ps.add("%s: name_template: empty (goreleaser's default differs per version; name the archives)", name)
	}
	names := map[string]target{}
	for _, t := range requiredTargets {
		if _, err := archiveFormat(a, t.goos); err != nil {
			ps.add("%s: %w", name, err)
		}
		if a.NameTemplate == "" {
			continue
		}
		n, err := render(a.NameTemplate, withTarget(vars, t))
		if err != nil {
			ps.add("%s: name_template: %w", name, err)
			break
		}
		if prev, dup := names[n]; dup {
			ps.add("%s: name_template: %s and %s are both named %q", name, prev, t, n)
		}
		names[n] = t
	}
	for j, f := range a.Files {
		if f.Source == "" {
			ps.add("%s: files[%d]: src: empty", name, j)
		}
	}
}

// checksum checks the checksum section: present, sha256, one file.
func (ps *problems) checksum(c config.Checksum, vars map[string]any) {
	switch {
	case c.Disable:
		ps.add("checksum: disabled")
	case c.NameTemplate == "" && c.Algorithm == "":
		ps.add("checksum: no section (name the checksum file and its algorithm)")
	case c.Algorithm != "sha256":
		ps.add("checksum: algorithm %q, want sha256", c.Algorithm)
	}
	if c.Split || len(c.IDs) > 0 || len(c.ExtraFiles) > 0 {
		ps.add("checksum: split, ids and extra_files are not modelled by the fallback snapshot")
	}
	if c.NameTemplate != "" {
		if _, err := render(c.NameTemplate, vars); err != nil {
			ps.add("checksum: name_template: %w", err)
		}
	}
}

// unsupportedBuild names the build settings the fallback does not
// reproduce: a configuration using one would build differently there.
func unsupportedBuild(b config.Build) []string {
	var out []string
	add := func(cond bool, field string) {
		if cond {
			out = append(out, field)
		}
	}
	add(b.Builder != "" && b.Builder != "go", "builder "+b.Builder)
	add(len(b.Hooks.Pre) > 0 || len(b.Hooks.Post) > 0, "hooks")
	add(len(b.BuildDetailsOverrides) > 0, "overrides")
	add(b.Buildmode != "", "buildmode")
	add(len(b.Asmflags) > 0 || len(b.Gcflags) > 0, "asmflags/gcflags")
	add(b.Dir != "", "dir")
	add((b.Tool != "" && b.Tool != "go") || (b.GoBinary != "" && b.GoBinary != "go"), "tool")
	add(b.Command != "" && b.Command != "build", "command")
	add(b.Skip != "" && b.Skip != "false", "skip")
	add(b.NoUniqueDistDir != "" && b.NoUniqueDistDir != "false", "no_unique_dist_dir")
	add(slices.ContainsFunc(b.Goamd64, func(s string) bool { return s != "v1" }), "goamd64")
	add(slices.ContainsFunc(b.Goarm64, func(s string) bool { return s != "v8.0" }), "goarm64")
	add(len(b.Go386) > 0 || len(b.Goarm) > 0 || len(b.Gomips) > 0 || len(b.Goppc64) > 0 || len(b.Goriscv64) > 0, "go386/goarm/gomips/goppc64/goriscv64")
	return out
}

func unsupportedArchive(a config.Archive) []string {
	var out []string
	if a.WrapInDirectory != "" && a.WrapInDirectory != "false" {
		out = append(out, "wrap_in_directory")
	}
	if a.StripBinaryDirectory {
		out = append(out, "strip_binary_directory")
	}
	if a.Meta {
		out = append(out, "meta")
	}
	if a.BuildsInfo != (config.FileInfo{}) {
		out = append(out, "builds_info")
	}
	for _, f := range a.Files {
		if f.Info != (config.FileInfo{}) {
			out = append(out, "files.info")
			break
		}
	}
	return out
}

// lastEnv is the value the last KEY=value in env sets, as the process
// environment would end up; "" when unset.
func lastEnv(env []string, key string) string {
	v := ""
	for _, e := range env {
		if k, val, ok := strings.Cut(e, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// buildTargets lists a build's targets with goreleaser's defaults: goos
// linux and darwin, goarch amd64, arm64 and 386, minus ignore.
func buildTargets(b config.Build) []target {
	var out []target
	if len(b.Targets) > 0 {
		for _, s := range b.Targets {
			parts := strings.Split(s, "_")
			if len(parts) >= 2 {
				out = append(out, target{parts[0], parts[1]})
			}
		}
		return out
	}
	goos, goarch := b.Goos, b.Goarch
	if len(goos) == 0 {
		goos = []string{"linux", "darwin"}
	}
	if len(goarch) == 0 {
		goarch = []string{"amd64", "arm64", "386"}
	}
	for _, o := range goos {
		for _, a := range goarch {
			ignored := slices.ContainsFunc(b.Ignore, func(ig config.IgnoredBuild) bool {
				return (ig.Goos == "" || ig.Goos == o) && (ig.Goarch == "" || ig.Goarch == a)
			})
			if !ignored {
				out = append(out, target{o, a})
			}
		}
	}
	return out
}

// archiveIDs are the builds an archive packs: all of them when ids is empty.
func archiveIDs(a config.Archive, p config.Project) []string {
	ids := a.IDs
	if len(ids) == 0 {
		ids = a.Builds
	}
	if len(ids) == 0 {
		for _, b := range p.Builds {
			ids = append(ids, b.ID)
		}
	}
	return ids
}

// archiveFormat is the format an archive uses for goos: the override for
// goos, else the archive's, else tar.gz. Only formats the fallback writes
// are accepted.
func archiveFormat(a config.Archive, goos string) (string, error) {
	formats := []string(a.Formats)
	if len(formats) == 0 && a.Format != "" {
		formats = []string{a.Format}
	}
	for _, o := range a.FormatOverrides {
		if o.Goos != goos {
			continue
		}
		formats = o.Formats
		if len(formats) == 0 && o.Format != "" {
			formats = []string{o.Format}
		}
	}
	if len(formats) == 0 {
		formats = []string{"tar.gz"}
	}
	if len(formats) != 1 {
		return "", fmt.Errorf("formats %v for %s: one format per target is all the fallback writes", formats, goos)
	}
	switch f := formats[0]; f {
	case "tar.gz", "tgz", "zip":
		return f, nil
	default:
		return "", fmt.Errorf("format %q for %s: the fallback writes tar.gz and zip", f, goos)
	}
}

// checkStamps finds the -X flags that set internal/version's version,
// commit and date in the rendered ldflags and compares them with the
// values the template was given.
func checkStamps(ldflags, module string, v map[string]any) error {
	if module == "" {
		return errors.New("module path unknown (no go.mod beside the configuration)")
	}
	set := map[string]string{}
	fields := strings.Fields(ldflags)
	for i := 0; i < len(fields); i++ {
		var kv string
		switch {
		case fields[i] == "-X" || fields[i] == "--X":
			if i+1 < len(fields) {
				i++
				kv = fields[i]
			}
		case strings.HasPrefix(fields[i], "-X="):
			kv = strings.TrimPrefix(fields[i], "-X=")
		case strings.HasPrefix(fields[i], "--X="):
			kv = strings.TrimPrefix(fields[i], "--X=")
		}
		if k, val, ok := strings.Cut(kv, "="); ok {
			set[k] = val
		}
	}
	pkg := module + "/internal/version."
	var errs []error
	for _, w := range []struct {
		name string
		want []string
	}{
		{"version", []string{v["Version"].(string)}},
		{"commit", []string{v["FullCommit"].(string)}},
		{"date", []string{v["Date"].(string), v["CommitDate"].(string)}},
	} {
		got, ok := set[pkg+w.name]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("no -X %s%s=...", pkg, w.name))
		case !slices.Contains(w.want, got):
			errs = append(errs, fmt.Errorf("-X %s%s stamps %q, not the release's %s", pkg, w.name, got, w.name))
		}
	}
	return errors.Join(errs...)
}
