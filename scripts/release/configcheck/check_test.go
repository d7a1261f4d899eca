package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testModule = "example.com/tool"

const buildsBlock = `builds:
  - id: tool
    main: ./cmd/tool
    binary: tool
    env: [CGO_ENABLED=0]
    flags: [-trimpath]
    ldflags:
      - -s -w
      - -X example.com/tool/internal/version.version={{ .Version }}
      - -X example.com/tool/internal/version.commit={{ .FullCommit }}
      - -X example.com/tool/internal/version.date={{ .Date }}
    goos: [linux, darwin, windows]
    goarch: [amd64, arm64]
    mod_timestamp: "{{ .CommitTimestamp }}"
`

const archivesBlock = `archives:
  - id: default
    ids: [tool]
    formats: [tar.gz]
    format_overrides:
      - goos: windows
        formats: [zip]
    name_template: "{{ .ProjectName }}_{{ .Version }}_{{ .Os }}_{{ .Arch }}"
    files: [LICENSE]
`

// validConfig is a small configuration with the shape of the project's:
// one build with every property the check requires.
const validConfig = `version: 2
project_name: tool
` + buildsBlock + archivesBlock + `checksum:
  name_template: checksums.txt
  algorithm: sha256
snapshot:
  version_template: "{{ incpatch .Version }}-SNAPSHOT-{{ .ShortCommit }}"
`

func validateString(t *testing.T, yaml string) error {
	t.Helper()
	p, err := load(strings.NewReader(yaml))
	if err != nil {
		return err
	}
	return validate(p, testModule)
}

func TestValidate(t *testing.T) {
	// Each case edits validConfig: old is replaced by new (old must occur).
	cases := []struct {
		name     string
		old, new string
		want     string // substring of the error; "" means valid
	}{
		{name: "valid"},
		{name: "unknown top-level field", old: "project_name: tool", new: "project_name: tool\nprojet: x", want: "field projet not found"},
		{name: "misspelt build field", old: "    binary: tool", new: "    binary: tool\n    ldflag: [-s]", want: "field ldflag not found"},
		{name: "version 1", old: "version: 2", new: "version: 1", want: "version: 1, want 2"},
		{name: "no builds", old: buildsBlock, new: "", want: "builds: none"},
		{name: "cgo enabled", old: "env: [CGO_ENABLED=0]", new: "env: [CGO_ENABLED=1]", want: `CGO_ENABLED="1"`},
		{name: "cgo unset", old: "env: [CGO_ENABLED=0]", new: "env: [GOFLAGS=-mod=readonly]", want: `CGO_ENABLED=""`},
		{name: "cgo re-enabled later", old: "env: [CGO_ENABLED=0]", new: "env: [CGO_ENABLED=0, CGO_ENABLED=1]", want: `CGO_ENABLED="1"`},
		{name: "no trimpath", old: "flags: [-trimpath]", new: "flags: [-v]", want: "no -trimpath"},
		{name: "no windows", old: "goos: [linux, darwin, windows]", new: "goos: [linux, darwin]", want: "target windows/amd64 missing"},
		{name: "no arm64", old: "goarch: [amd64, arm64]", new: "goarch: [amd64]", want: "target darwin/arm64 missing"},
		{name: "default goos lacks windows", old: "    goos: [linux, darwin, windows]\n", new: "", want: "target windows/arm64 missing"},
		{name: "ignored target", old: "goarch: [amd64, arm64]", new: "goarch: [amd64, arm64]\n    ignore:\n      - goos: linux\n        goarch: arm64", want: "target linux/arm64 missing"},
		{name: "targets list short", old: "    goos: [linux, darwin, windows]\n    goarch: [amd64, arm64]\n", new: "    targets: [linux_amd64_v1, darwin_arm64_v8.0]\n", want: "target linux/arm64 missing"},
		{name: "version not stamped", old: "      - -X example.com/tool/internal/version.version={{ .Version }}\n", new: "", want: "no -X example.com/tool/internal/version.version"},
		{name: "commit stamped with the short commit", old: "version.commit={{ .FullCommit }}", new: "version.commit={{ .ShortCommit }}", want: "internal/version.commit stamps"},
		{name: "date stamped with the version", old: "version.date={{ .Date }}", new: "version.date={{ .Version }}", want: "internal/version.date stamps"},
		{name: "stamps another package", old: "example.com/tool/internal/version.commit", new: "example.com/tool/version.commit", want: "no -X example.com/tool/internal/version.commit"},
		{name: "unknown template field", old: "{{ .FullCommit }}", new: "{{ .GitCommit }}", want: `no entry for key "GitCommit"`},
		{name: "unknown template field lists the known ones", old: "{{ .Date }}", new: "{{ .BuildDate }}", want: "fields the fallback knows: Amd64, Arch, Arm64, Commit, CommitDate, CommitTimestamp, Date, FullCommit"},
		{name: "unknown template function", old: "{{ .FullCommit }}", new: "{{ .FullCommit | shorten }}", want: `function "shorten" not defined`},
		{name: "no archives section", old: archivesBlock, new: "", want: "archives: none"},
		{name: "archives empty", old: archivesBlock, new: "archives: []\n", want: "archives: none"},
		{name: "archive of an unknown build", old: "ids: [tool]", new: "ids: [tol]", want: `no build "tol"`},
		{name: "archive names collide", old: "_{{ .Os }}_{{ .Arch }}", new: "_{{ .Os }}", want: "are both named"},
		{name: "archive format the fallback cannot write", old: "formats: [tar.gz]", new: "formats: [tar.xz]", want: `format "tar.xz"`},
		{name: "no checksum section", old: "checksum:\n  name_template: checksums.txt\n  algorithm: sha256\n", new: "", want: "checksum: no section"},
		{name: "checksum disabled", old: "  algorithm: sha256", new: "  algorithm: sha256\n  disable: true", want: "checksum: disabled"},
		{name: "checksum sha1", old: "algorithm: sha256", new: "algorithm: sha1", want: `algorithm "sha1"`},
		{name: "snapshot template unknown field", old: "{{ .ShortCommit }}\"", new: "{{ .Short }}\"", want: "version_template"},
		{name: "deprecated archive format", old: "formats: [tar.gz]", new: "format: tar.gz", want: "archives[0].format: deprecated"},
		{name: "deprecated archive builds", old: "ids: [tool]", new: "builds: [tool]", want: "archives[0].builds: deprecated"},
		{name: "deprecated override format", old: "formats: [zip]", new: "format: zip", want: "archives[0].format_overrides[0].format: deprecated"},
		{name: "deprecated snapshot name_template", old: "  version_template:", new: "  name_template:", want: "snapshot.name_template: deprecated"},
		{name: "deprecated dockers", old: "checksum:", new: "dockers:\n  - image_templates: [x]\nchecksum:", want: "dockers: deprecated"},
		{name: "hooks not modelled", old: "    binary: tool", new: "    binary: tool\n    hooks:\n      pre: [make gen]", want: "hooks: not modelled"},
		{name: "cgo build mode", old: "    binary: tool", new: "    binary: tool\n    buildmode: pie", want: "buildmode: not modelled"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			yaml := validConfig
			if c.old != "" {
				if !strings.Contains(yaml, c.old) {
					t.Fatalf("case edits %q, which validConfig lacks", c.old)
				}
				yaml = strings.Replace(yaml, c.old, c.new, 1)
			}
			err := validateString(t, yaml)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("valid config rejected: %v", err)
			case c.want != "" && err == nil:
				t.Fatalf("accepted; want an error containing %q", c.want)
			case c.want != "" && !strings.Contains(err.Error(), c.want):
				t.Fatalf("error %q does not contain %q", err, c.want)
			}
		})
	}
}

// The project's own configuration passes, with the module path read from
// the go.mod beside it.
func TestProjectConfig(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	p, err := loadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	mod := modulePathOf(root)
	if mod == "" {
		t.Fatal("no module path in the root go.mod")
	}
	if err := validate(p, mod); err != nil {
		t.Fatal(err)
	}
	if len(p.Builds) != 4 {
		t.Errorf("builds: %d, want the 4 commands", len(p.Builds))
	}
}

func TestModulePathOf(t *testing.T) {
	dir := t.TempDir()
	if got := modulePathOf(dir); got != "" {
		t.Errorf("no go.mod: got %q", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("// c\nmodule \"example.com/x\"\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := modulePathOf(dir); got != "example.com/x" {
		t.Errorf("got %q", got)
	}
}

func TestSnapshotVersion(t *testing.T) {
	cases := []struct {
		tmpl, tag, want string
	}{
		{"", "v0.0.0", "0.0.1-SNAPSHOT-abc1234"},
		{"{{ incpatch .Version }}-SNAPSHOT-{{ .ShortCommit }}", "v1.4.9", "1.4.10-SNAPSHOT-abc1234"},
		{"{{ incminor .Tag }}-dev", "v1.4.9", "v1.5.0-dev"},
		{"{{ .Version }}-{{ .CommitTimestamp }}", "v2.0.0", "2.0.0-1767225600"},
	}
	for _, c := range cases {
		p, err := load(strings.NewReader("version: 2\nsnapshot:\n  version_template: '" + c.tmpl + "'\n"))
		if err != nil {
			t.Fatal(err)
		}
		vars, err := snapshotVars(p, gitInfo{tag: c.tag, fullCommit: "abc1234" + strings.Repeat("0", 33), short: "abc1234", commitUnix: 1767225600}, probeDate)
		if err != nil {
			t.Fatalf("%q: %v", c.tmpl, err)
		}
		if got := vars["Version"]; got != c.want {
			t.Errorf("%q over %s: got %q, want %q", c.tmpl, c.tag, got, c.want)
		}
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("go.mod", "module "+testModule+"\n")
	good := write("good.yaml", validConfig)
	broken := write("broken.yaml", strings.Replace(validConfig, "flags: [-trimpath]", "flags: []", 1))
	cases := []struct {
		args []string
		want string // "" means success
	}{
		{[]string{"check", "-config", good}, ""},
		{[]string{"check", "-config", broken}, "no -trimpath"},
		{[]string{"check", "-config", filepath.Join(dir, "missing.yaml")}, "no such file"},
		{nil, "usage"},
		{[]string{"publish"}, `unknown mode "publish"`},
		{[]string{"snapshot"}, "-src is required"},
		{[]string{"snapshot", "-src", dir, "-config", good, "-targets", "linux"}, "not GOOS/GOARCH"},
		{[]string{"snapshot", "-src", dir, "-config", broken}, "no -trimpath"},
	}
	for _, c := range cases {
		var stderr strings.Builder
		err := run(t.Context(), c.args, &stderr)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.args, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: error %v, want one containing %q", c.args, err, c.want)
		}
	}
}
