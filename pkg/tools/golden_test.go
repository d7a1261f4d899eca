package tools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/internal/goldenfile"
)

// golden compares got with testdata/<name> (see internal/goldenfile).
func golden(t testing.TB, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got)
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
