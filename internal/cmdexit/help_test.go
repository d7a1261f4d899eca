package cmdexit

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/urfave/cli/v2"
)

// TestHelpFitsWidth: flags with long names, long usage, a word longer than
// the usage column, repeatable flags and categories all fit HelpWidth, and
// nothing of the usage is lost.
func TestHelpFitsWidth(t *testing.T) {
	long := strings.Repeat("word ", 40)
	for _, tt := range []struct {
		name  string
		flags []cli.Flag
		want  []string
	}{
		{"plain", []cli.Flag{
			&cli.StringFlag{Name: "short", Usage: "a short `VALUE`"},
			&cli.StringFlag{Name: "a-very-long-flag-name-that-needs-its-own-line", Usage: long},
			&cli.StringSliceFlag{Name: "repeat", EnvVars: []string{"REPEAT_ENV"}, Usage: "repeatable `URL`" + strings.Repeat(" x", 50)},
			&cli.StringFlag{Name: "unbreakable", Usage: strings.Repeat("y", 120)},
		}, []string{"--repeat URL ...", "[$REPEAT_ENV]", "--a-very-long-flag-name-that-needs-its-own-line value\n", strings.Repeat("y", 120)}},
		{"categories", []cli.Flag{
			&cli.BoolFlag{Name: "one", Category: "first", Usage: long},
			&cli.BoolFlag{Name: "two", Category: "second", Usage: "short"},
		}, []string{"   first:\n", "   second:\n"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			app := &cli.App{Name: "x", Usage: "test", Flags: tt.flags,
				Description: "A description. " + long, Action: func(*cli.Context) error { return nil }}
			Configure(app, &out, &errOut)
			if code := Run(context.Background(), app, []string{"x", "--help"}, &errOut, nil); code != OK {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			help := out.String()
			for i, line := range strings.Split(help, "\n") {
				if n := utf8.RuneCountInString(line); n > HelpWidth && !strings.Contains(line, strings.Repeat("y", 120)) {
					t.Errorf("line %d is %d wide: %q", i+1, n, line)
				}
			}
			if strings.Contains(help, "\t") {
				t.Errorf("help holds a tab:\n%s", help)
			}
			for _, w := range tt.want {
				if !strings.Contains(help, w) {
					t.Errorf("help lacks %q:\n%s", w, help)
				}
			}
			// Every word of the long usage is there, in order.
			if got := strings.Count(help, "word"); got < 80 {
				t.Errorf("%d words of usage, want at least 80:\n%s", got, help)
			}
		})
	}
}
