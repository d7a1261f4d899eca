package pdpptest

import (
	"net/url"
	"slices"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// TestServeDemoDataset checks the double against the demo dataset's shape
// without hard-coding its content: the client grant spans several connectors,
// withholds streams and fields, and every granted stream reads.
func TestServeDemoDataset(t *testing.T) {
	ds, err := dataset.Demo()
	if err != nil {
		t.Fatal(err)
	}
	srv := New(t, Options{Dataset: ds, Now: dataset.DemoTime})
	client, owner := srv.Token(TokenClient), srv.Token(TokenOwner)
	grant := ds.Grants["client"]

	// The connectors the grant's streams resolve to, in first-seen order.
	var want []string
	granted := map[string]bool{}
	for i := range grant.Streams {
		gs := &grant.Streams[i]
		granted[gs.Name] = true
		if cs := srv.connectorForGrantStream(grant, gs); cs != nil && !slices.Contains(want, cs.key()) {
			want = append(want, cs.key())
		}
	}
	if len(want) < 2 {
		t.Fatalf("the demo client grant should span several connectors: %v", want)
	}
	a := get(t, srv, client, "/v1/schema?view=compact")
	wantOK(t, a)
	var got []string
	for _, k := range a.j("connectors.#.connector_key").Array() {
		got = append(got, k.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("schema connectors = %v, want %v", got, want)
	}
	if a.j("stream_count").Int() != int64(len(grant.Streams)) {
		t.Errorf("stream_count = %s, want %d", a.j("stream_count"), len(grant.Streams))
	}

	// Every granted stream reads on each of its connections, with the grant's
	// projection; a declared stream outside the grant fails closed.
	withheld := 0
	for _, c := range ds.Connectors {
		m, err := dataset.ParseManifest(c.Manifest)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range m.Streams {
			if !granted[s.Name] {
				withheld++
				wantError(t, get(t, srv, client, "/v1/streams/"+s.Name+"/records?limit=1"), 401, "context.stream_not_allowed", "")
				wantOK(t, get(t, srv, owner, "/v1/streams/"+s.Name+"/records?limit=1&connector_id="+c.Key))
				continue
			}
			gs := grant.Stream(s.Name)
			for _, conn := range gs.InstanceIDs {
				a := get(t, srv, client, "/v1/streams/"+s.Name+"/records?limit=5&connection_id="+url.QueryEscape(conn))
				wantOK(t, a)
				for _, r := range a.j("data").Array() {
					for k := range r.Get("data").Map() {
						if gs.Fields != nil && !slices.Contains(gs.Fields, k) {
							t.Errorf("%s/%s: field %s is outside the grant", s.Name, r.Get("id"), k)
						}
					}
				}
			}
		}
	}
	if withheld == 0 {
		t.Error("the demo client grant should withhold a stream")
	}
}
