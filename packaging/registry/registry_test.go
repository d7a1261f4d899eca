package registry

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

const schemaFile = "server.schema.json"

func compile(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat() // uri and the like are checked, as the registry does
	if err := c.AddResource(schemaFile, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func load(t *testing.T, b []byte) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

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
	s := compile(t)
	b, err := os.ReadFile("server.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(load(t, b)); err != nil {
		t.Fatalf("server.json: %v", err)
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
		if s.Validate(load(t, bad)) == nil {
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
	schema, _ := os.ReadFile(schemaFile)
	if !bytes.Contains(schema, []byte(`"$id": "`+e.Schema+`"`)) {
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
