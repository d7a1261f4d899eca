package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/goreleaser/goreleaser/v2/pkg/config"
)

// gitInfo is what the templates read from the commit being released.
type gitInfo struct {
	tag        string // last tag, "v0.0.0" when there is none
	fullCommit string
	short      string
	commitUnix int64
}

// readGit asks git in dir, as goreleaser does, for the commit and tag.
func readGit(ctx context.Context, dir string) (gitInfo, error) {
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "show", "-s", "--format=%H%n%h%n%ct", "HEAD").Output()
	if err != nil {
		return gitInfo{}, fmt.Errorf("git show HEAD in %s: %w", dir, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 {
		return gitInfo{}, fmt.Errorf("git show HEAD: unexpected output %q", out)
	}
	ct, err := strconv.ParseInt(lines[2], 10, 64)
	if err != nil {
		return gitInfo{}, fmt.Errorf("git show HEAD: commit time: %w", err)
	}
	g := gitInfo{tag: "v0.0.0", fullCommit: lines[0], short: lines[1], commitUnix: ct}
	// No tag yet is normal before the first release; goreleaser's snapshot
	// then starts from v0.0.0 too.
	if tag, err := exec.CommandContext(ctx, "git", "-C", dir, "describe", "--tags", "--abbrev=0").Output(); err == nil {
		g.tag = strings.TrimSpace(string(tag))
	}
	return g, nil
}

// funcs are the template functions the fallback knows; a template calling
// any other fails to parse, naming it.
var funcs = template.FuncMap{
	"incpatch": func(v string) (string, error) { return incVersion(v, (*semver.Version).IncPatch) },
	"incminor": func(v string) (string, error) { return incVersion(v, (*semver.Version).IncMinor) },
	"incmajor": func(v string) (string, error) { return incVersion(v, (*semver.Version).IncMajor) },
	"tolower":  strings.ToLower,
	"toupper":  strings.ToUpper,
}

// incVersion keeps a leading "v", as goreleaser's incpatch does.
func incVersion(v string, inc func(*semver.Version) semver.Version) (string, error) {
	sv, err := semver.NewVersion(v)
	if err != nil {
		return "", fmt.Errorf("not a semantic version %q: %w", v, err)
	}
	prefix := ""
	if strings.HasPrefix(v, "v") {
		prefix = "v"
	}
	return prefix + inc(sv).String(), nil
}

// render executes one template with missingkey=error, so a field the
// fallback does not provide fails instead of rendering "<no value>".
func render(text string, vars map[string]any) (string, error) {
	t, err := template.New("t").Option("missingkey=error").Funcs(funcs).Parse(text)
	if err != nil {
		return "", fmt.Errorf("template %q: %w", text, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, vars); err != nil {
		return "", fmt.Errorf("template %q: %w (fields the fallback knows: %s)", text, err, strings.Join(slices.Sorted(maps.Keys(vars)), ", "))
	}
	return b.String(), nil
}

func renderAll[S ~[]string](texts S, vars map[string]any) ([]string, error) {
	out := make([]string, 0, len(texts))
	for _, s := range texts {
		r, err := render(s, vars)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// snapshotVars are the template fields of a snapshot of g built at date
// (RFC 3339, UTC): Version follows snapshot.version_template, rendered over
// the last tag's version as goreleaser does.
func snapshotVars(p config.Project, g gitInfo, date string) (map[string]any, error) {
	commitDate := time.Unix(g.commitUnix, 0).UTC()
	vars := map[string]any{
		"ProjectName":     p.ProjectName,
		"Tag":             g.tag,
		"Version":         strings.TrimPrefix(g.tag, "v"),
		"FullCommit":      g.fullCommit,
		"Commit":          g.fullCommit,
		"ShortCommit":     g.short,
		"CommitDate":      commitDate.Format(time.RFC3339),
		"CommitTimestamp": g.commitUnix,
		"Date":            date,
		"IsSnapshot":      true,
	}
	tmpl := p.Snapshot.VersionTemplate
	if tmpl == "" {
		tmpl = p.Snapshot.NameTemplate
	}
	if tmpl == "" {
		// goreleaser v2's default.
		tmpl = "{{ incpatch .Version }}-SNAPSHOT-{{ .ShortCommit }}"
	}
	v, err := render(tmpl, vars)
	if err != nil {
		return nil, fmt.Errorf("snapshot: version_template: %w", err)
	}
	if v == "" {
		return nil, fmt.Errorf("snapshot: version_template %q renders empty", tmpl)
	}
	vars["Version"] = v
	return vars, nil
}

// withTarget adds the per-target fields builds and archives see.
func withTarget(vars map[string]any, t target) map[string]any {
	v := maps.Clone(vars)
	v["Os"] = t.goos
	v["Arch"] = t.goarch
	v["Target"] = t.folder()
	v["Amd64"], v["Arm64"] = "", ""
	switch t.goarch {
	case "amd64":
		v["Amd64"] = t.variant()
	case "arm64":
		v["Arm64"] = t.variant()
	}
	return v
}
