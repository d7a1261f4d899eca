package rs_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// BenchmarkGet measures one Get against the double over loopback. The double
// runs in the same process, so allocs/op include its side of each exchange;
// the net/http baseline, over the same fixed answer, shows what the client
// adds on top of a bare keep-alive GET.
func BenchmarkGet(b *testing.B) {
	srv := pdpptest.New(b, pdpptest.Options{})
	tok := srv.Token(pdpptest.TokenClient)
	fixed := []byte(`{"object":"list","data":[{"object":"record","id":"p_msg_001","stream":"messages","data":{"subject":"Dinner on Friday?"}}],"has_more":false}`)
	srv.Fault(pdpptest.Fault{Path: "/v1/fixed", Body: fixed})
	q := rs.Query{{"limit", "2"}, {"connection_id", "cin_gmail_personal"}}

	b.Run("rs/fixed", func(b *testing.B) {
		c := newClient(b, srv, nil)
		path := rs.Path("v1", "fixed")
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Get(context.Background(), path, q); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("net-http/fixed", func(b *testing.B) {
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
		b.Cleanup(hc.CloseIdleConnections)
		target := srv.URL() + "/v1/fixed?" + q.Encode()
		b.ReportAllocs()
		for b.Loop() {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, target, nil)
			req.Header.Set("Accept", "application/json")
			req.Header.Set("Authorization", "Bearer "+tok)
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadAll(resp.Body); err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
		}
	})
	b.Run("rs/records", func(b *testing.B) {
		c := newClient(b, srv, nil)
		path := rs.Path("v1", "streams", "messages", "records")
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Get(context.Background(), path, q); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("rs/compact-schema", func(b *testing.B) {
		c := newClient(b, srv, nil)
		path, sq := rs.Path("v1", "schema"), rs.Query{{"view", "compact"}}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Get(context.Background(), path, sq); err != nil {
				b.Fatal(err)
			}
		}
	})
}
