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
// read concurrently, each within timeout. A member whose grant the RS
// refuses for good (revoked, expired, invalid, or the bearer rejected with
// no local credential to re-read) comes back Unusable with the reason. One
// that cannot be read for another reason, or whose local credential may be
// replaced (a credential guard re-reads its cache on every refusal), comes
// back Undiscovered: it is still searched, and asked again before a read is
// routed by connection_id. Members that already name their connections are
// not read.
func Discover(ctx context.Context, members []Member, timeout time.Duration) []Member {
	out := slices.Clone(members)
	var wg sync.WaitGroup
	for i := range out {
		m := &out[i]
		if m.Unusable != "" || len(m.ConnectionIDs) > 0 || m.RS == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			discoverOne(ctx, m, timeout)
		}()
	}
	wg.Wait()
	return out
}

// discoverOne reads m's compact schema into m, or says why it could not.
func discoverOne(ctx context.Context, m *Member, timeout time.Duration) {
	if timeout <= 0 {
		timeout = DefaultChildTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := m.RS.Get(cctx, rs.Path("v1", "schema"), rs.Query{{Key: "view", Value: "compact"}})
	if err != nil {
		if why := grantFailure(err); why != "" {
			m.Unusable = why
			return
		}
		m.Undiscovered = errCode(err)
		return
	}
	m.Undiscovered = ""
	fillFromSchema(m, schemaDoc(resp.Body))
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
