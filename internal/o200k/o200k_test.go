package o200k_test

import (
	"strings"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/internal/o200k"
)

// The counts match OpenAI's tiktoken for o200k_base ("hello world" is the
// two tokens 24912 and 2375 there).
func TestCount(t *testing.T) {
	tok, err := o200k.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{`{"name":"schema"}`, 5},
		{strings.Repeat("connection_id ", 10), 21},
		{"Read-only tools over one person's PDPP grant.", 10},
		{"\xff\xfe invalid", 2}, // invalid UTF-8 is counted, not an error,
	} {
		got, err := tok.Count(tt.text)
		if err != nil {
			t.Errorf("Count(%q): %v", tt.text, err)
			continue
		}
		if got != tt.want {
			t.Errorf("Count(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
	if !strings.HasPrefix(tok.Name(), "o200k_base") {
		t.Errorf("Name() = %q", tok.Name())
	}
}
