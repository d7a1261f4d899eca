package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/goldenfile"
)

// The README shows one panel of the tour between these markers, in a
// text fence.
const (
	readmePath   = "../../README.md"
	panelBegin   = "<!-- sample-panel:begin"
	panelEnd     = "<!-- sample-panel:end -->"
	samplePanel  = "╭─ 9 search "
	samplePanelW = "80"
)

// TestReadmeSamplePanel keeps the README's sample panel what the demo tour
// prints for that call (normalized, 80 columns), so the first output a
// newcomer compares with is current. UPDATE_GOLDEN=1 rewrites the README's
// copy.
func TestReadmeSamplePanel(t *testing.T) {
	isolate(t)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{cmdName, "--demo", "--color=never", "--normalize", "--width", samplePanelW}, nil, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("tour: exit %d\n%s", code, stderr.String())
	}
	got := panel(stdout.String(), samplePanel)
	if got == "" {
		t.Fatalf("the tour printed no panel starting %q:\n%s", samplePanel, stdout.String())
	}
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(readme)
	b := strings.Index(doc, panelBegin)
	e := strings.Index(doc, panelEnd)
	if b < 0 || e < b {
		t.Fatalf("%s has no %q … %q section", readmePath, panelBegin, panelEnd)
	}
	b += strings.Index(doc[b:], "\n") + 1 // after the marker's line
	section := "```text\n" + got + "```\n"
	if goldenfile.Update() {
		doc = doc[:b] + section + doc[e:]
		if err := os.WriteFile(readmePath, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if have := doc[b:e]; have != section {
		t.Errorf("the README's sample panel is not what the tour prints (-README +tour; UPDATE_GOLDEN=1 go test ./cmd/pdpp-mcp-probe rewrites it):\n%s",
			cmp.Diff(have, section))
	}
}

// panel is the panel of out whose first line starts with head, through its
// closing line, or "".
func panel(out, head string) string {
	i := strings.Index(out, head)
	if i < 0 {
		return ""
	}
	rest := out[i:]
	j := strings.Index(rest, "\n╰─")
	if j < 0 {
		return ""
	}
	k := strings.Index(rest[j+1:], "\n")
	if k < 0 {
		return rest
	}
	return rest[:j+1+k+1]
}
