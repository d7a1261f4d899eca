package evidence

import (
	"strings"
	"testing"
)

func TestBoundTextUnbounded(t *testing.T) {
	c := BoundText("s:r", "body", strings.Repeat("x", 100000), 0)
	if c.Cut() || c.ShownChars != 100000 {
		t.Errorf("limit 0 must not bound: %+v", c.ShownChars)
	}
}

// window returns what the RS field-window route answers: code points
// [offset, offset+limit) of text.
func window(text string, offset, limit int) string {
	r := []rune(text)
	start := min(offset, len(r))
	end := min(start+limit, len(r))
	return string(r[start:end])
}

func TestBoundTextContinuesExactly(t *testing.T) {
	long := strings.Repeat("Lisbon 😀 café — ", 3000) // 48,000 code points, many multi-byte
	tests := []struct {
		name, text string
		limit      int
		cut        bool
	}{
		{"fits", "short text", 16384, false},
		{"exactly the limit", strings.Repeat("é", 100), 100, false},
		{"one over", strings.Repeat("é", 101), 100, true},
		{"limit one shows only the ellipsis", "abc", 1, true},
		{"fifty thousand characters", long + strings.Repeat("x", 2000), 16384, true},
	}
	for _, tt := range tests {
		c := BoundText("cin_a/notes:n1", "body", tt.text, tt.limit)
		if c.Cut() != tt.cut || Len(c.Text) > tt.limit || c.TotalChars != Len(tt.text) {
			t.Fatalf("%s: cut %v, %d shown chars of limit %d, total %d", tt.name, c.Cut(), Len(c.Text), tt.limit, c.TotalChars)
		}
		if !tt.cut {
			if c.Text != tt.text || c.ShownChars != c.TotalChars {
				t.Errorf("%s: whole text altered", tt.name)
			}
			continue
		}
		a := c.Next.Args
		if c.Next.Tool != ToolReadRecordField || a.ID != "cin_a/notes:n1" || a.FieldPath != "body" || *a.OffsetChars != c.ShownChars {
			t.Fatalf("%s: next = %+v", tt.name, c.Next)
		}
		// Follow the continuation to the end, the way a model would.
		got := strings.TrimSuffix(c.Text, Ellipsis)
		for off := *a.OffsetChars; off < c.TotalChars; off += a.LimitChars {
			got += window(tt.text, off, a.LimitChars)
		}
		if got != tt.text {
			t.Errorf("%s: shown text plus windows does not rebuild the field", tt.name)
		}
	}
}
