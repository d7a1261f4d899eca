package fanout

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// Child describes a package member by its bearer, as a host that resolves
// packages knows it. BaseURL is the RS the child's token reads; "" means the
// host's own.
type Child struct {
	GrantID       string
	ConnectionIDs []string
	ConnectorKey  string
	DisplayName   string
	Streams       []string
	BaseURL       string
	Token         string
	// Unusable is why the child's grant cannot be used ("" when it can).
	Unusable string
}

// Discover fills in what members do not say about themselves (connections,
// streams, connector key, display name) from each one's compact schema,
// read concurrently, each within timeout. A member whose grant is refused
// (revoked, expired, invalid, or the bearer rejected) comes back Unusable
// with the reason; one that cannot be read for another reason keeps its
// unknown metadata (every stream, no connection), so it is still searched.
// Members that already name their connections are not read.
func Discover(ctx context.Context, members []Member, timeout time.Duration) []Member {
	out := slices.Clone(members)
	if timeout <= 0 {
		timeout = DefaultChildTimeout
	}
	var wg sync.WaitGroup
	for i := range out {
		m := &out[i]
		if m.Unusable != "" || len(m.ConnectionIDs) > 0 || m.RS == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			resp, err := m.RS.Get(cctx, rs.Path("v1", "schema"), rs.Query{{Key: "view", Value: "compact"}})
			if err != nil {
				m.Unusable = grantFailure(err)
				return
			}
			fillFromSchema(m, schemaDoc(resp.Body))
		}()
	}
	wg.Wait()
	return out
}

// fillFromSchema reads a member's connections and streams from its schema.
func fillFromSchema(m *Member, doc gjson.Result) {
	var conns, streams, keys []string
	name := ""
	addConns := func(list gjson.Result) {
		list.ForEach(func(_, gc gjson.Result) bool {
			id := gc.Get("connection_id").Str
			if id != "" && !slices.Contains(conns, id) {
				conns = append(conns, id)
				if name == "" {
					name = gc.Get("display_name").Str
				}
			}
			return true
		})
	}
	doc.Get("connectors").ForEach(func(_, c gjson.Result) bool {
		key := c.Get("connector_key").Str
		if key == "" {
			key = c.Get("source.id").Str
		}
		if key != "" && !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
		addConns(c.Get("granted_connections"))
		c.Get("streams").ForEach(func(_, s gjson.Result) bool {
			if n := s.Get("name").Str; n != "" && !slices.Contains(streams, n) {
				streams = append(streams, n)
			}
			addConns(s.Get("granted_connections"))
			return true
		})
		return true
	})
	addConns(doc.Get("granted_connections"))
	m.ConnectionIDs = conns
	if streams != nil {
		m.Streams = streams
	}
	if m.ConnectorKey == "" && len(keys) == 1 {
		m.ConnectorKey = keys[0]
	}
	if m.DisplayName == "" && len(conns) == 1 {
		m.DisplayName = name
	}
}
