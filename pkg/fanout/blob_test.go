package fanout_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tidwall/gjson"

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
