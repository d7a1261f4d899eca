package evidence

import "github.com/pdpp-mcp/pdpp-mcp/pkg/visible"

// TextCut is a text field bounded for model-visible output, with the read that
// continues it.
type TextCut struct {
	// Text is the shown text: the whole field, or its first ShownChars code
	// points followed by "…".
	Text string
	// TotalChars and ShownChars count code points of the field.
	TotalChars, ShownChars int
	// Next continues the field with read_record_field at offset ShownChars in
	// windows of WindowChars; nil when the field is shown whole.
	Next *Read
}

// Cut reports whether the field was shortened.
func (c TextCut) Cut() bool { return c.Next != nil }

// BoundText bounds a text field of record id to at most limit code points
// ("…" included); limit <= 0 means no bound. Text is the field under the
// visible rule for text values (hidden characters and hidden HTML parts
// marked), and the bound counts what it shows, marks included, so
// hidden characters cannot make it longer. Offsets (ShownChars, Next) count
// code points of the field like the RS field-window route, so Next resumes
// exactly where Text stops.
func BoundText(id, fieldPath, text string, limit int) TextCut {
	total := Len(text)
	if visible.Text.Clean(text) {
		if limit <= 0 || total <= limit {
			return TextCut{Text: text, TotalChars: total, ShownChars: total}
		}
		shown, _ := Cut(text, limit)
		next := FieldRead(id, fieldPath, limit-1, WindowChars)
		return TextCut{Text: shown, TotalChars: total, ShownChars: limit - 1, Next: &next}
	}
	if limit <= 0 {
		return TextCut{Text: visible.Text.String(text), TotalChars: total, ShownChars: total}
	}
	b, _, whole := visible.Text.AppendPrefix(make([]byte, 0, min(len(text), 4*limit)+64), text, limit)
	if whole {
		return TextCut{Text: string(b), TotalChars: total, ShownChars: total}
	}
	b, shown, _ := visible.Text.AppendPrefix(b[:0], text, limit-1)
	next := FieldRead(id, fieldPath, shown, WindowChars)
	return TextCut{Text: string(b) + Ellipsis, TotalChars: total, ShownChars: shown, Next: &next}
}
