package goldenfile

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder captures failures instead of failing the real test.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
func (r *recorder) Fatal(...any)          { r.failed = true }

func TestCheck(t *testing.T) {
	t.Setenv("UPDATE_GOLDEN", "")
	dir := t.TempDir()
	path := filepath.Join(dir, "g.txt")
	if err := os.WriteFile(path, []byte("same"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, got string
		fail            bool
	}{
		{"equal", path, "same", false},
		{"different", path, "other", true},
		{"missing", filepath.Join(dir, "none.txt"), "x", true},
	} {
		r := &recorder{TB: t}
		Check(r, tc.path, []byte(tc.got))
		if r.failed != tc.fail {
			t.Errorf("%s: failed = %v, want %v", tc.name, r.failed, tc.fail)
		}
	}
	t.Setenv("UPDATE_GOLDEN", "1")
	Check(t, filepath.Join(dir, "sub", "new.txt"), []byte("fresh"))
	if b, err := os.ReadFile(filepath.Join(dir, "sub", "new.txt")); err != nil || string(b) != "fresh" {
		t.Errorf("update wrote %q, %v", b, err)
	}
}
