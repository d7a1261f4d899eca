package evidence

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLen(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"abc", 3},
		{"café", 4},
		// one code point, two UTF-16 units: the RS counts 1, the TS adapter counted 2
		{"𝄞", 1},
		{"a😀b", 3},
		{"\xff\xfe", 2},
	}
	for _, tt := range tests {
		if got := Len(tt.in); got != tt.want {
			t.Errorf("Len(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestCut(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
		cut  bool
	}{
		{"hello", 5, "hello", false},
		{"hello", 10, "hello", false},
		{"hello", 4, "hel…", true},
		{"hello", 1, "…", true},
		{"hello", 0, "", true},
		{"", 0, "", false},
		{"😀😀😀😀", 3, "😀😀…", true},
		{"😀😀😀", 3, "😀😀😀", false},
		{"ééééé", 4, "ééé…", true},
	}
	for _, tt := range tests {
		got, cut := Cut(tt.in, tt.n)
		if got != tt.want || cut != tt.cut {
			t.Errorf("Cut(%q, %d) = %q, %v; want %q, %v", tt.in, tt.n, got, cut, tt.want, tt.cut)
		}
		if tt.n >= 1 && Len(got) > tt.n {
			t.Errorf("Cut(%q, %d) has %d code points", tt.in, tt.n, Len(got))
		}
	}
}

func TestCutBytes(t *testing.T) {
	s := strings.Repeat("a😀é", 50)
	for max := len(Ellipsis) + 1; max < len(s); max++ {
		got := cutBytes(s, max)
		if len(got) > max {
			t.Fatalf("cutBytes(_, %d) is %d bytes", max, len(got))
		}
		if !utf8.ValidString(got) || !strings.HasSuffix(got, Ellipsis) {
			t.Fatalf("cutBytes(_, %d) = %q splits a code point or lacks the ellipsis", max, got)
		}
	}
	if got := cutBytes("abc", 2); got != "" {
		t.Errorf("cutBytes with no room = %q, want empty", got)
	}
}
