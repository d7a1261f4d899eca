package testmcp

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// PDPPMCP builds cmd/pdpp-mcp once per test process and returns the
// binary's path, so a test can spawn the real server (--server).
func PDPPMCP(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		dir, err := os.MkdirTemp("", "pdpp-mcp-test-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "pdpp-mcp")
		if out, err := exec.Command(goTool, "build", "-o", builtBin, "github.com/pdpp-mcp/pdpp-mcp/cmd/pdpp-mcp").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build cmd/pdpp-mcp: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}
