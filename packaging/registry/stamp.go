package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// bundleTarget is the os_arch of a bundle's release file name.
var bundleTarget = regexp.MustCompile(`/pdpp-mcp_[^/_]+_([a-z]+_[a-z0-9]+)\.mcpb$`)

// Stamp returns the committed entry made ready to publish for one release:
// version set on the entry and every package, the image tagged with it, and
// each bundle pointed at that release's download with the SHA-256 of the file
// in bundleDir that a registry client must find there. A bundle the entry
// lists but bundleDir lacks is an error, so no placeholder hash is published,
// and so is a result the registry's schema refuses.
func Stamp(entry []byte, version, bundleDir string) ([]byte, error) {
	version = strings.TrimPrefix(version, "v")
	if version == "" {
		return nil, fmt.Errorf("stamp: empty version")
	}
	var e map[string]any
	if err := json.Unmarshal(entry, &e); err != nil {
		return nil, fmt.Errorf("stamp: %w", err)
	}
	e["version"] = version
	pkgs, _ := e["packages"].([]any)
	for i, raw := range pkgs {
		p, ok := raw.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("stamp: package %d is not an object", i)
		}
		id, _ := p["identifier"].(string)
		switch p["registryType"] {
		case "npm":
			p["version"] = version
		case "oci":
			repo, _, _ := strings.Cut(id, ":")
			p["identifier"] = repo + ":" + version
		case "mcpb":
			m := bundleTarget.FindStringSubmatch(id)
			if m == nil {
				return nil, fmt.Errorf("stamp: bundle %q is not named pdpp-mcp_<version>_<os>_<arch>.mcpb", id)
			}
			file := "pdpp-mcp_" + version + "_" + m[1] + ".mcpb"
			sum, err := fileSHA256(filepath.Join(bundleDir, file))
			if err != nil {
				return nil, fmt.Errorf("stamp: %w", err)
			}
			p["identifier"] = "https://github.com/pdpp-mcp/pdpp-mcp/releases/download/v" + version + "/" + file
			p["version"] = version
			p["fileSha256"] = sum
		}
	}
	out, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("stamp: %w", err)
	}
	// What is published must be what the registry accepts: refused here,
	// before any release step uploads it.
	if err := Validate(out); err != nil {
		return nil, fmt.Errorf("stamp: %w", err)
	}
	return append(out, '\n'), nil
}

func fileSHA256(path string) (string, error) {
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
