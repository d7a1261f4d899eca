package evidence

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestLargePageIsNotCopied: rendering the preview and the ladder of a large
// page allocates far less than the page itself (gjson.ParseBytes copied the
// whole body once per parse).
func TestLargePageIsNotCopied(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"object":"list","has_more":false,"data":[`)
	for i := range 4000 {
		if i > 0 {
			b.WriteByte(',')
		}
		id := strconv.Itoa(i)
		b.WriteString(`{"object":"record","id":"r` + id + `","stream":"s","data":{"id":"r` + id +
			`","subject":"s ` + id + `","body":"` + strings.Repeat("x", 1000) + `"}}`)
	}
	b.WriteString(`]}`)
	body := []byte(b.String())
	scope := Scope{Stream: "s"}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p := Preview(body, PreviewOptions{Label: "records", Scope: scope})
	_ = RecordSetFor(body, scope, p)
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(body))/4 {
		t.Errorf("preview and ladder of a %d-byte page allocated %d bytes", len(body), alloc)
	}
}
