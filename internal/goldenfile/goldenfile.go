// Package goldenfile compares test output with files checked in under
// testdata. UPDATE_GOLDEN=1 rewrites them; a missing file fails, so a new
// golden file cannot be skipped silently.
package goldenfile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Update reports whether this run rewrites golden files.
func Update() bool { return os.Getenv("UPDATE_GOLDEN") == "1" }

// Check compares got with the file at path (relative to the test's package).
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if Update() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file %s: %v (run with UPDATE_GOLDEN=1 to create it)", path, err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs (-want +got; UPDATE_GOLDEN=1 accepts the change):\n%s", path, cmp.Diff(string(want), string(got)))
	}
}
