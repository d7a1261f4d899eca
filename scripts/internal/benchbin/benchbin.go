// Package benchbin gives the measuring scripts the pdpp-mcp binary they run.
package benchbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Binary returns given when it is set (the -bin flag); otherwise it builds
// ./cmd/pdpp-mcp into dir, so a run measures the checkout it starts from.
func Binary(given, dir string) (string, error) {
	if given != "" {
		return given, nil
	}
	bin := filepath.Join(dir, "pdpp-mcp")
	build := exec.Command("go", "build", "-o", bin, "./cmd/pdpp-mcp")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("build ./cmd/pdpp-mcp: %w", err)
	}
	return bin, nil
}
