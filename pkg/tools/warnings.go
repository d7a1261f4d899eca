package tools

import (
	"strings"

	"github.com/tidwall/gjson"
)

// warningsText renders the RS's meta.warnings (limit_clamped,
// partial_results, count_downgraded, …) so that no clamp or partial answer
// goes unmentioned. It returns "" when there are none.
func warningsText(doc gjson.Result) string {
	var b strings.Builder
	doc.Get("meta.warnings").ForEach(func(_, w gjson.Result) bool {
		b.WriteString("\nwarning code=" + inline(w.Get("code").String()))
		if p := w.Get("param").String(); p != "" {
			b.WriteString(" param=" + inline(p))
		}
		if id := w.Get("connection_id").String(); id != "" {
			b.WriteString(" connection_id=" + inline(id))
		}
		if m := w.Get("message").String(); m != "" {
			b.WriteString(": " + m)
		}
		if w.Get("code").String() == "partial_results" {
			b.WriteString(" (page one connection at a time: call again with connection_id)")
		}
		return true
	})
	return b.String()
}
