package evidence

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/goldenfile"
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

// golden compares got with testdata/golden/<name> (see internal/goldenfile).
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", "golden", name), []byte(got))
}
