package rs

import (
	"strconv"
	"strings"
	"testing"
)

// BenchmarkCheckEnvelope measures the shape and bounds check of a 100-record
// page (about 110 KB), which every list answer passes through once.
func BenchmarkCheckEnvelope(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"object":"list","has_more":true,"next_cursor":"eyJzbmFwIjoic25hcF82ZjFhMmIzYzRkNWU2ZjcwIiwib2ZmIjoyfQ","data":[`)
	for i := range 100 {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"object":"record","id":"m` + strconv.Itoa(i) + `","stream":"messages","connection_id":"cin_3f9a0c2b7d1e4a5b","data":{"subject":"Dinner on Friday?","body":"` +
			strings.Repeat("lorem ipsum ", 90) + `","labels":["a","b"]}}`)
	}
	sb.WriteString(`],"meta":{"count":100}}`)
	body := []byte(sb.String())
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if why := checkEnvelope(RouteRecords, body, false); why != "" {
			b.Fatal(why)
		}
	}
}
