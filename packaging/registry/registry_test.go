package registry

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

type entry struct {
	Schema   string `json:"$schema"`
	Name     string `json:"name"`
	Version  string `json:"version"`
	Packages []struct {
		RegistryType string `json:"registryType"`
		Identifier   string `json:"identifier"`
		Version      string `json:"version"`
	} `json:"packages"`
}

func TestServerJSONMatchesRegistrySchema(t *testing.T) {
	b, err := os.ReadFile("server.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(b); err != nil {
		t.Fatal(err)
	}

	// The schema must be able to say no: a broken copy fails.
	for name, mutate := range map[string]func(map[string]any){
		"name without namespace": func(m map[string]any) { m["name"] = "pdpp-mcp" },
		"no version":             func(m map[string]any) { delete(m, "version") },
		"long description":       func(m map[string]any) { m["description"] = strings.Repeat("x", 101) },
		"package without transport": func(m map[string]any) {
			delete(m["packages"].([]any)[0].(map[string]any), "transport")
		},
	} {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		mutate(m)
		bad, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if Validate(bad) == nil {
			t.Errorf("%s: the schema accepted it", name)
		}
	}
}

func TestServerJSONAgreesWithThePackages(t *testing.T) {
	b, err := os.ReadFile("server.json")
	if err != nil {
		t.Fatal(err)
	}
	var e entry
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(schemaJSON, []byte(`"$id": "`+e.Schema+`"`)) {
		t.Errorf("$schema %q is not the vendored schema's $id", e.Schema)
	}
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// One name everywhere the registry or a host looks for it.
	for file, pattern := range map[string]string{
		"scripts/release/npm.mjs":           `mcpName = "([^"]+)"`,
		"scripts/release/ociimage/main.go":  `serverName = "([^"]+)"`,
		"Dockerfile":                        `io\.modelcontextprotocol\.server\.name="([^"]+)"`,
		"packaging/mcpb/manifest.json.tmpl": `"name": "([^"]+)"`,
	} {
		if _, err := os.Stat(filepath.Join("..", "..", file)); os.IsNotExist(err) && strings.HasSuffix(file, ".tmpl") {
			continue
		}
		m := regexp.MustCompile(pattern).FindStringSubmatch(read(file))
		if m == nil {
			t.Errorf("%s: no server name (%s)", file, pattern)
			continue
		}
		if !strings.HasSuffix(e.Name, "/"+m[1]) && m[1] != e.Name {
			t.Errorf("%s names %q, server.json %q", file, m[1], e.Name)
		}
	}
	var npm, oci bool
	for _, p := range e.Packages {
		switch p.RegistryType {
		case "npm":
			npm = p.Identifier == "pdpp-mcp" && p.Version == e.Version
			if !strings.Contains(read("scripts/release/npm.mjs"), `launcherName = "`+p.Identifier+`"`) {
				t.Errorf("npm package %q is not the one npm.mjs builds", p.Identifier)
			}
		case "oci":
			oci = strings.HasSuffix(p.Identifier, ":"+e.Version)
		}
	}
	if !npm || !oci {
		t.Errorf("want the npm package and the OCI image at version %s: %+v", e.Version, e.Packages)
	}
}

// TestOCIPackageStarts: a registry client runs `docker run <runtimeArguments>
// IMAGE <packageArguments>`. Without -i stdio closes at once, and without the
// credential folder mounted where --cache-root points (read as the file's
// owner) the server exits 78; scripts/release/podman-test.sh starts it so.
func TestOCIPackageStarts(t *testing.T) {
	b, err := os.ReadFile("server.json")
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Icons []struct {
			Src      string `json:"src"`
			MimeType string `json:"mimeType"`
		} `json:"icons"`
		Packages []struct {
			RegistryType     string `json:"registryType"`
			Identifier       string `json:"identifier"`
			RuntimeArguments []struct {
				Type, Name, Value string
			} `json:"runtimeArguments"`
			PackageArguments []struct {
				Type, Name, Value string
			} `json:"packageArguments"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	for _, ic := range e.Icons {
		file := filepath.Join("..", "icons", filepath.Base(ic.Src))
		if _, err := os.Stat(file); err != nil || !strings.HasSuffix(ic.Src, "/packaging/icons/"+filepath.Base(ic.Src)) {
			t.Errorf("icon %s is not a file in packaging/icons: %v", ic.Src, err)
		}
	}
	if len(e.Icons) == 0 || e.Icons[0].MimeType != "image/png" {
		t.Errorf("want a PNG icon first (every client must show PNG): %+v", e.Icons)
	}
	var bundles int
	for _, p := range e.Packages {
		switch p.RegistryType {
		case "mcpb":
			bundles++
		case "oci":
			var stdin bool
			var user, mount string
			for _, a := range p.RuntimeArguments {
				switch {
				case a.Type == "positional" && a.Value == "-i":
					stdin = true
				case a.Name == "--user":
					user = a.Value
				case a.Name == "--mount":
					mount = a.Value
				}
			}
			cacheRoot := ""
			for _, a := range p.PackageArguments {
				if a.Name == "--cache-root" {
					cacheRoot = a.Value
				}
			}
			if !stdin || user == "" {
				t.Errorf("OCI runtimeArguments lack -i or --user: %+v", p.RuntimeArguments)
			}
			if cacheRoot == "" || !strings.Contains(mount, ",dst="+cacheRoot+",") || !strings.HasSuffix(mount, ",readonly") {
				t.Errorf("--mount %q does not put the credential folder read-only at --cache-root %q", mount, cacheRoot)
			}
		}
	}
	if bundles == 0 {
		t.Error("server.json lists no .mcpb bundle")
	}
}

func TestStamp(t *testing.T) {
	b, err := os.ReadFile("server.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, target := range []string{"darwin_arm64", "darwin_amd64", "windows_amd64", "windows_arm64", "linux_amd64", "linux_arm64"} {
		if err := os.WriteFile(filepath.Join(dir, "pdpp-mcp_1.2.3_"+target+".mcpb"), []byte(target), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := Stamp(b, "v1.2.3", dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(out); err != nil {
		t.Fatalf("stamped entry: %v", err)
	}
	var e struct {
		Version  string `json:"version"`
		Packages []struct {
			RegistryType, Identifier, Version, FileSha256 string
		} `json:"packages"`
	}
	if err := json.Unmarshal(out, &e); err != nil {
		t.Fatal(err)
	}
	for _, p := range e.Packages {
		switch p.RegistryType {
		case "oci":
			if !strings.HasSuffix(p.Identifier, ":1.2.3") {
				t.Errorf("image %s is not tagged 1.2.3", p.Identifier)
			}
		case "npm":
			if p.Version != "1.2.3" {
				t.Errorf("npm version %s", p.Version)
			}
		case "mcpb":
			m := bundleTarget.FindStringSubmatch(p.Identifier)
			if m == nil || !strings.HasPrefix(p.Identifier, "https://github.com/pdpp-mcp/pdpp-mcp/releases/download/v1.2.3/pdpp-mcp_1.2.3_") {
				t.Errorf("bundle URL %s", p.Identifier)
				continue
			}
			sum, _ := fileSHA256(filepath.Join(dir, "pdpp-mcp_1.2.3_"+m[1]+".mcpb"))
			if p.FileSha256 != sum || p.Version != "1.2.3" {
				t.Errorf("bundle %s: sha256 %s version %s, want %s 1.2.3", m[1], p.FileSha256, p.Version, sum)
			}
		}
	}
	if e.Version != "1.2.3" {
		t.Errorf("version %s", e.Version)
	}
	// A bundle the entry lists but the release lacks is an error, not a
	// placeholder hash on the registry.
	if err := os.Remove(filepath.Join(dir, "pdpp-mcp_1.2.3_linux_arm64.mcpb")); err != nil {
		t.Fatal(err)
	}
	if _, err := Stamp(b, "1.2.3", dir); err == nil || !strings.Contains(err.Error(), "linux_arm64") {
		t.Errorf("a missing bundle: err = %v", err)
	}
	// An entry the registry would refuse is refused before it is published.
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["description"] = strings.Repeat("x", 101)
	long, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pdpp-mcp_1.2.3_linux_arm64.mcpb"), []byte("linux_arm64"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Stamp(long, "1.2.3", dir); err == nil || !strings.Contains(err.Error(), "registry schema") {
		t.Errorf("an entry the schema refuses: err = %v", err)
	}
}
