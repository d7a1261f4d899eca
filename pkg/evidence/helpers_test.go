package evidence

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"
)

// fixture returns an RS body captured from the reference server.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "rs", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixtureRows returns the records or hits of a captured list body.
func fixtureRows(t testing.TB, name string) []gjson.Result {
	t.Helper()
	var out []gjson.Result
	gjson.GetBytes(fixture(t, name), "data").ForEach(func(_, v gjson.Result) bool {
		out = append(out, v)
		return true
	})
	if len(out) == 0 {
		t.Fatalf("fixture %s has no rows", name)
	}
	return out
}

// golden compares got with testdata/golden/<name>. UPDATE_GOLDEN=1 rewrites
// it; a missing golden file fails.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file missing (run with UPDATE_GOLDEN=1 to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs from golden (-want +got):\n%s", name, diff)
	}
}
