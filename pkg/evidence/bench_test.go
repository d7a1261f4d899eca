package evidence

import (
	"io"
	"net/http"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

// doublePage returns the double's answer to GET path (gmail dataset), the
// body a tool renders.
func doublePage(b *testing.B, path string) []byte {
	b.Helper()
	d := pdpptest.New(b, pdpptest.Options{})
	req, err := http.NewRequest(http.MethodGet, d.URL()+path, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+d.Token(pdpptest.TokenClient))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d %v: %.300s", path, resp.StatusCode, err, body)
	}
	return body
}

// BenchmarkPreview renders the text of query_records' default page from the
// double (limit=25: its 15 messages, about 12 KB), without and with the key
// fields the cached schema declares, then its ladder: the CPU query_records
// spends on text.
func BenchmarkPreview(b *testing.B) {
	body := doublePage(b, "/v1/streams/messages/records?limit=25")
	scope := Scope{Stream: "messages"}
	for _, bc := range []struct {
		name string
		keys []string
	}{
		{"page25", nil},
		{"page25-keys", []string{"subject", "sent_at", "received_at"}},
	} {
		opts := PreviewOptions{Label: `records from stream "messages"`, Scope: scope, KeyFields: bc.keys}
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				Preview(body, opts)
			}
		})
		b.Run("ladder-"+bc.name, func(b *testing.B) {
			p := Preview(body, opts)
			b.ReportAllocs()
			for b.Loop() {
				RecordSetFor(body, scope, p)
			}
		})
	}
}
