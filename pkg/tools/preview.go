package tools

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// recordsPreview renders the model-visible text of a records page and its
// content ladder. Interim: replaced by pkg/evidence's preview.
func recordsPreview(body []byte, stream, connectionID string) (string, json.RawMessage) {
	doc := gjson.ParseBytes(body)
	rows := doc.Get("data")
	var b strings.Builder
	label := "records from stream " + jsonString(stream)
	n := len(rows.Array())
	b.WriteString(label + ": " + strconv.Itoa(n) + " record(s).")
	if doc.Get("has_more").Bool() {
		b.WriteString(" has_more=true.")
	}
	b.WriteString(" Showing up to " + strconv.Itoa(min(n, 5)) + ":")
	for i, r := range rows.Array() {
		if i == 5 {
			break
		}
		b.WriteString("\nrecord[" + strconv.Itoa(i) + "] " + r.Raw)
	}
	b.WriteString(warningsText(doc))
	return b.String(), nil
}

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
