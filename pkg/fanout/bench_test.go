package fanout_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/internal/cputime"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// cannedRS answers every search with the same page after delay. It stands in
// for a child whose own cost is known, so what a benchmark measures above
// that delay is the fan-out's: scheduling, parsing, fusion, the cursor and
// the merged envelope.
type cannedRS struct {
	body  []byte
	delay time.Duration
}

func (c *cannedRS) Get(ctx context.Context, _ string, _ rs.Query) (*rs.Response, error) {
	if c.delay > 0 {
		t := time.NewTimer(c.delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &rs.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: c.body}, nil
}

// searchPage is a realistic page of n hits from one connection.
func searchPage(conn string, n int) []byte {
	var data []map[string]any
	for i := range n {
		key := conn + "_" + strconv.Itoa(i)
		data = append(data, map[string]any{"object": "search_result", "stream": "mail_messages", "record_key": key,
			"connection_id": conn, "connector_id": "mail", "display_name": "Mail " + conn,
			"record_url":     "/v1/streams/mail_messages/records/" + key,
			"snippet":        map[string]any{"field": "subject", "text": "Quarterly <mark>invoice</mark> for the Harborview renewal, purchase order attached"},
			"matched_fields": []string{"subject"},
			"evidence_excerpts": []map[string]any{{"field_path": "subject", "object": "evidence_excerpt",
				"preview_text": "Quarterly <mark>invoice</mark> for the Harborview renewal", "provenance": "lexical_match"}},
			"score": map[string]any{"kind": "bm25", "order": "lower_is_better", "value": -3.5 + float64(i)*0.1}})
	}
	b, _ := json.Marshal(map[string]any{"object": "list", "url": "/v1/search", "has_more": true, "next_cursor": "c_" + conn, "data": data})
	return b
}

// benchClient is n members; with slowest > 0, member i answers after
// slowest*(i+1)/n, so the last one is the slowest and the others finish
// while it is still working.
func benchClient(b *testing.B, n int, slowest time.Duration) *fanout.Client {
	b.Helper()
	var ms []fanout.Member
	for i := range n {
		conn := "cin_" + strconv.Itoa(i)
		ms = append(ms, fanout.Member{GrantID: "g" + strconv.Itoa(i), ConnectionIDs: []string{conn}, ConnectorKey: "mail",
			RS: &cannedRS{body: searchPage(conn, 25), delay: slowest * time.Duration(i+1) / time.Duration(n)}})
	}
	c, err := fanout.New(fanout.Options{Members: ms})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkSearchFanout: with children that answer at once, ns/op and
// cpu-ns/op are the fan-out's own cost. With slowest=2ms, compare ns/op
// with BenchmarkSearchDirect (one child of 2ms read without a fan-out): the
// difference is the latency the fan-out adds over its slowest child.
func BenchmarkSearchFanout(b *testing.B) {
	q := rs.Query{{Key: "q", Value: "invoice"}, {Key: "limit", Value: "25"}}
	path := rs.Path("v1", "search")
	for _, slowest := range []time.Duration{0, 2 * time.Millisecond} {
		for _, n := range []int{1, 4, 8} {
			b.Run("members="+strconv.Itoa(n)+"/slowest="+slowest.String(), func(b *testing.B) {
				c := benchClient(b, n, slowest)
				ctx := context.Background()
				b.ReportAllocs()
				cpu0, _ := cputime.Self()
				for b.Loop() {
					if _, err := c.Get(ctx, path, q); err != nil {
						b.Fatal(err)
					}
				}
				// Wall time on a loaded machine includes waiting for a core;
				// CPU time per call is the cost the fan-out itself adds.
				if cpu1, ok := cputime.Self(); ok {
					b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
				}
			})
		}
	}
}

// BenchmarkSearchDirect is the baseline: one 2ms child read directly.
func BenchmarkSearchDirect(b *testing.B) {
	c := &cannedRS{body: searchPage("cin_0", 25), delay: 2 * time.Millisecond}
	ctx := context.Background()
	for b.Loop() {
		if _, err := c.Get(ctx, "/v1/search", nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAmbiguity is the 409 ambiguous_connection answer for a read that
// names no connection in a package of 15 members: built from metadata, with
// no child called (TestAmbiguityBoundedAt13PlusMembers checks that).
func BenchmarkAmbiguity(b *testing.B) {
	c := benchClient(b, 15, 0)
	path := rs.Path("v1", "streams", "mail_messages", "records")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Get(ctx, path, nil); err == nil {
			b.Fatal("no ambiguity error")
		}
	}
}

// BenchmarkRoutedRecords is a page of records read by connection_id through
// a package of four members: routing, and the check that every row is the
// member's own. Direct is the same page read from the member without a
// fan-out.
func BenchmarkRoutedRecords(b *testing.B) {
	path := rs.Path("v1", "streams", "mail_messages", "records")
	q := rs.Query{{Key: "connection_id", Value: "cin_1"}}
	for _, n := range []int{25, 100} {
		var ms []fanout.Member
		for i := range 4 {
			conn := "cin_" + strconv.Itoa(i)
			ms = append(ms, fanout.Member{GrantID: "g" + strconv.Itoa(i), ConnectionIDs: []string{conn}, ConnectorKey: "mail",
				RS: &cannedRS{body: fanout.RecordsPage(conn, n)}})
		}
		c, err := fanout.New(fanout.Options{Members: ms})
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		for name, rd := range map[string]fanout.RS{"fanout": c, "direct": ms[1].RS} {
			b.Run(name+"/rows="+strconv.Itoa(n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := rd.Get(ctx, path, q); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
