package mcptarget

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitCommand(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
		err  string
	}{
		{in: "pdpp-mcp --demo", want: []string{"pdpp-mcp", "--demo"}},
		{in: "  npx  -y  @pdpp/mcp-server\t--provider-url https://x ", want: []string{"npx", "-y", "@pdpp/mcp-server", "--provider-url", "https://x"}},
		{in: `node 'my server.js' "--name=A \"B\"" x\ y`, want: []string{"node", "my server.js", `--name=A "B"`, "x y"}},
		{in: `a '' ""`, want: []string{"a", "", ""}},
		{in: `a 'x'"y"z`, want: []string{"a", "xyz"}},
		{in: `a "$HOME \$x \n"`, want: []string{"a", `$HOME $x \n`}},
		{in: `a '\'`, want: []string{"a", `\`}},
		{in: "a *.go ~ $PATH", want: []string{"a", "*.go", "~", "$PATH"}},
		{in: "", err: "no command"},
		{in: "   ", err: "no command"},
		{in: "a 'b", err: "unterminated ' quote"},
		{in: `a "b`, err: `unterminated " quote`},
		{in: `a \`, err: `a \ ends the command`},
	} {
		got, err := SplitCommand(tt.in)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("SplitCommand(%q) = %q, %v; want error %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || !cmp.Equal(got, tt.want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// quoteArg quotes s for SplitCommand the way a shell user would.
func quoteArg(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// FuzzSplitCommand checks that splitting never panics and that words quoted
// with single quotes come back as they were.
func FuzzSplitCommand(f *testing.F) {
	f.Add("pdpp-mcp --demo", "x y")
	f.Add(`node "a b" 'c'`, `it's`)
	f.Fuzz(func(t *testing.T, line, word string) {
		SplitCommand(line)
		got, err := SplitCommand("cmd " + quoteArg(word) + " " + quoteArg(line))
		if err != nil || !cmp.Equal(got, []string{"cmd", word, line}) {
			t.Fatalf("quoted words %q, %q split to %q, %v", word, line, got, err)
		}
	})
}
