package cmdexit

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNote(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, tt := range []struct {
		name, text, want string
	}{
		{"one line", "ready", "cmd: ready\n"},
		{"wrapped at the last space that fits",
			"serving hosted MCP at http://127.0.0.1:42377/mcp for http://127.0.0.1:34883 (listening on 127.0.0.1:42377)",
			"cmd: serving hosted MCP at http://127.0.0.1:42377/mcp for http://127.0.0.1:34883\n  (listening on 127.0.0.1:42377)\n"},
		{"a word wider than a line stays whole", "at " + long + " now", "cmd: at\n  " + long + "\n  now\n"},
		{"runes, not bytes", strings.Repeat("é", 74) + " ü", "cmd: " + strings.Repeat("é", 74) + "\n  ü\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Note("cmd", tt.text)
			if got != tt.want {
				t.Errorf("Note:\n%q\nwant\n%q", got, tt.want)
			}
			// Nothing lost, every line fits unless it is one long word.
			if strings.Join(strings.Fields(got), " ") != "cmd: "+strings.Join(strings.Fields(tt.text), " ") {
				t.Errorf("words changed: %q", got)
			}
			for _, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
				if n := utf8.RuneCountInString(line); n > HelpWidth && strings.TrimSpace(line) != long {
					t.Errorf("line %d wide: %q", n, line)
				}
			}
		})
	}
}
