package budget_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/budget"
)

const validFile = `{
  "doc": "test limits",
  "pdpp": true,
  "tools_list": {
    "max_bytes": 16384,
    "description_max_bytes": 512,
    "tool_max_bytes": {"schema": 1, "query_records": 2, "aggregate": 3, "search": 4, "fetch": 5, "read_record_field": 6}
  },
  "instructions": {"max_bytes": 2048, "head_chars": 512},
  "prose": {"min_chars": 60},
  "results": {"search": {"text_max_bytes": 1800}, "aggregate": {"text_max_chars": 400}}
}`

func TestParseLimits(t *testing.T) {
	l, err := budget.ParseLimits([]byte(validFile))
	if err != nil {
		t.Fatal(err)
	}
	if l.ToolsList.MaxBytes != 16384 || l.ToolsList.ToolMaxBytes["read_record_field"] != 6 ||
		l.Results["aggregate"].TextMaxChars != 400 || l.Instructions.HeadChars != 512 {
		t.Errorf("decoded %+v", l)
	}

	for _, tt := range []struct {
		name, old, new, want string
	}{
		{"unknown key", `"prose": {"min_chars": 60}`, `"prose": {"min_char": 60}`, `unknown field "min_char"`},
		{"missing total", `"max_bytes": 16384,`, ``, "tools_list.max_bytes must be a positive number, got 0"},
		{"negative", `"min_chars": 60`, `"min_chars": -1`, "prose.min_chars must not be negative, got -1"},
		{"zero", `"min_chars": 60`, `"min_chars": 0`, "prose.min_chars must be a positive number, got 0"},
		{"tool without a budget", `, "read_record_field": 6`, ``, "tools_list.tool_max_bytes has no entry for read_record_field"},
		{"tool outside the surface", `"schema": 1,`, `"schema": 1, "list_streams": 9,`, "tools_list.tool_max_bytes.list_streams: list_streams is not one of the tools"},
		{"zero tool budget", `"fetch": 5`, `"fetch": 0`, "tools_list.tool_max_bytes.fetch must be a positive number, got 0"},
		{"negative result limit", `"text_max_bytes": 1800`, `"text_max_bytes": -5`, "results.search.text_max_bytes must not be negative"},
		{"result limit for an unknown call", `"search": {"text_max_bytes"`, `"serach": {"text_max_bytes"`, `results.serach: not a tool of the surface`},
		{"trailing content", `"min_chars": 60}`, `"min_chars": 60}}, {`, "content after the top-level object"},
		{"not JSON", `{`, `[`, "decode"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(validFile, tt.old, tt.new, 1)
			if src == validFile {
				t.Fatalf("replacement %q not in the file", tt.old)
			}
			_, err := budget.ParseLimits([]byte(src))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestLoadLimits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "budget.json")
	if _, err := budget.LoadLimits(path, false); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
	if err := os.WriteFile(path, []byte(`{"tools_list": {"max_bytes": -1}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := budget.LoadLimits(path, false); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("invalid file: error %v does not name the file", err)
	}
}

// The repository's own budget file is valid and keeps the 16,384-byte
// ceiling of tools_list.max_bytes.
func TestRepositoryBudgetFile(t *testing.T) {
	l, err := budget.LoadLimits(filepath.Join("..", "..", "budget.json"), false)
	if err != nil {
		t.Fatal(err)
	}
	if l.ToolsList.MaxBytes > 16384 {
		t.Errorf("tools_list.max_bytes %d is above the 16,384-byte ceiling", l.ToolsList.MaxBytes)
	}
	sum := 0
	for _, n := range l.ToolsList.ToolMaxBytes {
		sum += n
	}
	if sum > l.ToolsList.MaxBytes {
		t.Errorf("per-tool budgets add up to %d, above the total %d: they could all pass while the total fails", sum, l.ToolsList.MaxBytes)
	}
}

func TestSet(t *testing.T) {
	l, err := budget.ParseLimits([]byte(validFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range []string{
		"tools_list.max_bytes=100", "tools_list.description_max_bytes=101", "tools_list.tool_max_bytes.fetch=102",
		"instructions.max_bytes=103", "instructions.head_chars=104", "prose.min_chars=105",
		"results.fetch.text_max_bytes=106", "results.fetch.text_max_chars=107", "results.search.structured_max_bytes=108",
		"resource_templates.max_bytes=109", "prompts.max_bytes=110", "prose.max_repeated_findings=111", "schema.max_portability_findings=112",
	} {
		k, v, err := budget.ParseOverride(kv)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	got := []int{l.ToolsList.MaxBytes, l.ToolsList.DescriptionMaxBytes, l.ToolsList.ToolMaxBytes["fetch"],
		l.Instructions.MaxBytes, l.Instructions.HeadChars, l.Prose.MinChars,
		l.Results["fetch"].TextMaxBytes, l.Results["fetch"].TextMaxChars, l.Results["search"].StructuredMaxBytes, l.Results["search"].TextMaxBytes,
		l.ResourceTemplates.MaxBytes, l.Prompts.MaxBytes, l.Prose.MaxRepeatedFindings, l.Schema.MaxPortabilityFindings}
	if diff := cmp.Diff([]int{100, 101, 102, 103, 104, 105, 106, 107, 108, 1800, 109, 110, 111, 112}, got); diff != "" {
		t.Errorf("after Set (-want +got):\n%s", diff)
	}

	for _, tt := range []struct{ kv, want string }{
		{"tools_list.max_bytes", "is not KEY=N"},
		{"=5", "is not KEY=N"},
		{"tools_list.max_bytes=big", `"big" is not a whole number`},
	} {
		if _, _, err := budget.ParseOverride(tt.kv); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseOverride(%q) = %v, want %q", tt.kv, err, tt.want)
		}
	}
	for _, tt := range []struct{ key, want string }{
		{"tools_list.max_byte", `unknown limit "tools_list.max_byte"`},
		{"results.fetch.text_bytes", "takes text_max_bytes, text_max_chars or structured_max_bytes"},
		{"results..text_max_bytes", "unknown limit"},
	} {
		if err := l.Set(tt.key, 1); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Set(%q) = %v, want %q", tt.key, err, tt.want)
		}
	}
}

// The budget file parser never panics; a file it accepts is valid, and
// every override it accepts leaves a file that Validate judges.
func FuzzParseLimits(f *testing.F) {
	f.Add([]byte(validFile), "tools_list.max_bytes=1")
	f.Add([]byte(`{"tools_list": {"tool_max_bytes": {"x": -1}}, "results": {"": {}}}`), "results.x.text_max_chars=-3")
	f.Add([]byte(`{} {}`), "=")
	f.Add([]byte(`null`), "prose.min_chars= 7 ")
	f.Fuzz(func(t *testing.T, src []byte, override string) {
		l, err := budget.ParseLimits(src)
		if err != nil {
			return
		}
		if err := l.Validate(l.PDPP); err != nil {
			t.Fatalf("accepted an invalid file: %v", err)
		}
		if key, n, err := budget.ParseOverride(override); err == nil {
			if err := l.Set(key, n); err == nil {
				_ = l.Validate(l.PDPP)
			}
		}
	})
}

func TestLimitLines(t *testing.T) {
	src := []byte("{\n  \"doc\": \"x\",\n  \"tools_list\": {\n    \"max_bytes\": 1,\n    \"tool_max_bytes\": {\"search\": 2,\n      \"fetch\": 3}\n  },\n  \"results\": {\"search\": {\"text_max_bytes\": 4}, \"list\": [1, {\"a\": 2}]}\n}\n")
	got := budget.LimitLines(src)
	for key, line := range map[string]int{
		"doc": 2, "tools_list": 3, "tools_list.max_bytes": 4, "tools_list.tool_max_bytes.search": 5,
		"tools_list.tool_max_bytes.fetch": 6, "results.search.text_max_bytes": 8, "results.list.a": 8,
	} {
		if got[key] != line {
			t.Errorf("%s on line %d, want %d (all: %v)", key, got[key], line, got)
		}
	}
	// The repository's budget file: every limit key a check can be named
	// by has a line.
	real, err := os.ReadFile(filepath.Join("..", "..", "budget.json"))
	if err != nil {
		t.Fatal(err)
	}
	lines := budget.LimitLines(real)
	for _, key := range []string{"tools_list.max_bytes", "tools_list.description_max_bytes", "tools_list.tool_max_bytes.search",
		"instructions.max_bytes", "results.search.text_max_bytes"} {
		if lines[key] == 0 {
			t.Errorf("no line for %s", key)
		}
	}
}
