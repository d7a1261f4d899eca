package rs

import (
	"io"
	"net/http"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

// BenchmarkCheckBody is the work Get does on a read 2xx body before handing
// it on (UTF-8 repair, redaction, depth, validity and envelope checks), on
// query_records' default page from the double (limit=25: its 15 messages,
// about 12 KB).
func BenchmarkCheckBody(b *testing.B) {
	d := pdpptest.New(b, pdpptest.Options{})
	tok := d.Token(pdpptest.TokenClient)
	req, err := http.NewRequest(http.MethodGet, d.URL()+"/v1/streams/messages/records?limit=25", nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("%d %v", resp.StatusCode, err)
	}
	k := newBearer(tok) // made once per token, as Client.bearer does
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		body := k.redact(validUTF8(raw))
		valid, deep, longest := scanJSON(body, MaxDepth)
		if !valid || deep || checkEnvelopeScanned(RouteRecords, body, false, longest) != "" {
			b.Fatal("the page did not pass")
		}
	}
}
