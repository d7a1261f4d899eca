package fanout_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// A blob read names its connection, and only the member holding that
// connection can serve it (each member's token sees one connection).
func TestBlobRoutesToTheMemberOfItsConnection(t *testing.T) {
	s := demoServer(t)
	_, c := demoPackage(t, s)
	// A blob referenced by records of both mail connections.
	byConn := map[string]map[string]bool{}
	mail := s.Dataset().Connector("mail")
	shared := ""
	for _, conn := range mail.Connections {
		for _, r := range mail.Records[conn.ID]["mail_attachments"] {
			id := gjson.GetBytes(r.Data, "blob_ref.blob_id").Str
			if id == "" {
				continue
			}
			if byConn[id] == nil {
				byConn[id] = map[string]bool{}
			}
			byConn[id][conn.ID] = true
			if len(byConn[id]) == 2 && shared == "" {
				shared = id
			}
		}
	}
	if shared == "" {
		t.Fatal("no blob shared by the two mail connections")
	}
	ctx := context.Background()
	path := rs.Path("v1", "blobs", shared)
	for _, conn := range []string{dataset.DemoPersonalMailConnection, dataset.DemoWorkMailConnection} {
		resp, err := c.Get(ctx, path, rs.Query{{Key: "connection_id", Value: conn}})
		if err != nil {
			t.Fatalf("%s: %v", conn, err)
		}
		if string(resp.Body) != string(s.Dataset().Blobs[shared].Bytes) {
			t.Errorf("%s: %d bytes, not the blob", conn, len(resp.Body))
		}
	}
	// Without a connection several members could hold it, and any of them
	// could have named the id: the read is ambiguous and offers no
	// connection to try, since trying them in turn would send each member's
	// token for an id another chose.
	s.ResetRequests()
	_, err := c.Get(ctx, path, nil)
	var re *rs.Error
	if !errors.As(err, &re) || re.Code != "ambiguous_connection" || len(re.AvailableConnections) != 0 || re.RetryWith != "" {
		t.Errorf("unscoped blob read: %v (options %v, retry_with %q)", err, re.AvailableConnections, re.RetryWith)
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("unscoped blob read sent %d request(s)", n)
	}
}

// A member whose blob answer spells its bearer (here in a Content-Type
// parameter, percent-encoded) is refused with the member's own
// rs_invalid_response, and stays a member: the next read still goes to it.
func TestBlobSpellingTheBearerIsRefusedThroughFanout(t *testing.T) {
	const tok = "tok_member/Secret+5f3c9a1e7b"
	var pct strings.Builder
	for i := 0; i < len(tok); i++ {
		pct.WriteString("%" + strconv.FormatUint(uint64(tok[i])|0x100, 16)[1:])
	}
	var reads atomic.Int32
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reads.Add(1)
		w.Header().Set("Content-Type", "text/plain; note*=utf-8''"+pct.String())
		_, _ = w.Write([]byte("hello"))
	}))
	t.Cleanup(hs.Close)
	c, err := fanout.New(fanout.Options{Members: []fanout.Member{
		{GrantID: "grt_a", ConnectionIDs: []string{"cin_a"}, ConnectorKey: "mail", RS: rsClient(t, hs.URL, tok)},
		{GrantID: "grt_b", ConnectionIDs: []string{"cin_b"}, ConnectorKey: "mail", RS: rsClient(t, hs.URL, "tok_other_member_0000")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	path := rs.Path("v1", "blobs", "blob_x")
	for range 2 {
		_, err := c.Get(context.Background(), path, rs.Query{{Key: "connection_id", Value: "cin_a"}})
		var te *rs.TransportError
		if !errors.As(err, &te) || te.Code != rs.CodeInvalidResponse || strings.Contains(err.Error(), tok) {
			t.Fatalf("Get = %v, want %s", err, rs.CodeInvalidResponse)
		}
	}
	if n := reads.Load(); n != 2 {
		t.Errorf("%d reads reached the member, want 2", n)
	}
	// The other member's token is not spelled by the same answer.
	resp, err := c.Get(context.Background(), path, rs.Query{{Key: "connection_id", Value: "cin_b"}})
	if err != nil || string(resp.Body) != "hello" {
		t.Errorf("the other member: %v", err)
	}
}
