package fanout

import (
	"encoding/json"
	"strconv"
	"testing"
)

// RecordsPage is a realistic page of n mail records of connection conn, for
// the benchmarks inside the package and out.
func RecordsPage(conn string, n int) []byte {
	var data []map[string]any
	for i := range n {
		id := conn + "_m" + strconv.Itoa(i)
		data = append(data, map[string]any{"object": "record", "id": id, "stream": "mail_messages",
			"emitted_at": "2026-04-06T15:01:00.120Z", "connection_id": conn, "connector_instance_id": conn, "display_name": "Mail " + conn,
			"data": map[string]any{"id": id, "subject": "Quarterly invoice for the Harborview renewal",
				"from": "billing@harborview.example", "to": []string{"me@example.com"}, "received_at": "2026-04-01T09:30:00Z",
				"snippet":  "Please find attached the quarterly invoice for the Harborview renewal; the purchase order is attached as well.",
				"labels":   []string{"INBOX", "IMPORTANT"},
				"blob_ref": map[string]any{"blob_id": "blob_" + id, "mime_type": "application/pdf", "size_bytes": 48213, "fetch_url": "/v1/blobs/blob_" + id}}})
	}
	b, _ := json.Marshal(map[string]any{"object": "list", "url": "/v1/streams/mail_messages/records", "has_more": true,
		"next_cursor": "c_" + conn, "data": data, "meta": map[string]any{"warnings": []any{}}})
	return b
}

// BenchmarkAttest compares, on one page of 100 records, the quick scan
// every answer gets (quick) with the structural walk an answer naming
// another connection gets (walk).
func BenchmarkAttest(b *testing.B) {
	c := &Client{members: []Member{{GrantID: "g0", ConnectionIDs: []string{"cin_0"}}, {GrantID: "g1", ConnectionIDs: []string{"cin_1"}}}}
	c.disputed.Store(c.findDisputed())
	body := RecordsPage("cin_0", 100)
	b.Run("quick", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if !c.allClaimed(0, view(body)) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("walk", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			s := &sifter{c: c, idx: 0, body: view(body)}
			if s.top(parseRoot(body), shapeRecords); s.foreign || s.left > 0 {
				b.Fatal("refused")
			}
		}
	})
}
