package rs

import (
	"strconv"
	"strings"
	"testing"
)

// BenchmarkRedact is the redaction of a read answer that holds no token:
// a page of records with no escape, one whose links are percent-encoded,
// and one with JSON escapes as well (the case where every string is
// decoded and looked at).
func BenchmarkRedact(b *testing.B) {
	const tok = "tok_client_5f3c9a1e7b2d4c6e8a0f1234"
	page := func(rec string) []byte {
		var s strings.Builder
		s.WriteString(`{"object":"list","data":[`)
		for i := range 100 {
			if i > 0 {
				s.WriteByte(',')
			}
			s.WriteString(strings.ReplaceAll(rec, "#", strconv.Itoa(i)))
		}
		s.WriteString(`],"has_more":false}`)
		return []byte(s.String())
	}
	for _, c := range []struct{ name, rec string }{
		{"plain", `{"id":"m#","stream":"messages","data":{"subject":"Dinner on Friday #","from":"ana@example.com","snippet":"See you at eight, the table is booked"}}`},
		{"percent", `{"id":"m#","stream":"messages","data":{"subject":"50% off #","link":"https://x.example/a%20b?q=%C3%A9#","snippet":"See you at eight"}}`},
		{"escaped", `{"id":"m#","stream":"messages","data":{"subject":"Caf\u00e9 #","body":"Hi,\nsee https:\/\/x.example\/a%20b\n-- \nAna","snippet":"50% off"}}`},
	} {
		body := page(c.rec)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if out := redact(body, tok); len(out) != len(body) {
					b.Fatal("changed")
				}
			}
		})
	}
}
