package pdpptest

import (
	"io"
	"net/http"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// benchGet measures one route end to end over loopback.
func benchGet(b *testing.B, target string, kind TokenKind) {
	srv := New(b, Options{})
	req, err := http.NewRequest(http.MethodGet, srv.URL()+target, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+srv.Token(kind))
	b.ReportAllocs()
	for b.Loop() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
		b.SetBytes(n)
	}
}

func BenchmarkRecordsPage(b *testing.B) {
	benchGet(b, "/v1/streams/messages/records?connection_id=cin_gmail_personal&limit=3", TokenClient)
}

func BenchmarkRecordsFanInExpand(b *testing.B) {
	benchGet(b, "/v1/streams/messages/records?connector_id=gmail&expand=attachments&expand=message_bodies&count=exact", TokenOwner)
}

func BenchmarkSchemaCompact(b *testing.B) {
	benchGet(b, "/v1/schema?view=compact", TokenClient)
}

func BenchmarkSchemaFull(b *testing.B) {
	benchGet(b, "/v1/schema", TokenClient)
}

func BenchmarkAggregateGroupByTime(b *testing.B) {
	benchGet(b, "/v1/streams/messages/aggregate?metric=count&group_by_time=received_at&granularity=week&time_zone=Europe/Rome", TokenClient)
}

// BenchmarkStartDemo measures start-up over the demo dataset (decoding every
// record into the store).
func BenchmarkStartDemo(b *testing.B) {
	ds, err := dataset.Demo()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		s, err := Start(Options{Dataset: ds})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
