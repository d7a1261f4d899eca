package hosted

import (
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/server"
)

// DefaultServerCacheEntries bounds the MCP servers kept for reuse.
const DefaultServerCacheEntries = 128

// serverCache keeps built MCP servers by credential and public origin.
// Registering the tools re-encodes every schema, which was most of the
// cost of a tool call when each request built its own server. A server
// holds only its RS client (one bearer) and the origin of its icon, and a
// stateless request opens its own session on it, so requests with the same
// bearer may share one. The bearer is verified on every request before its
// server is looked up; the least recently used server is dropped when full.
type serverCache struct {
	max  int
	mu   sync.Mutex
	tick uint64
	m    map[serverKey]*serverEntry
}

type serverKey struct{ hash, base string }

// built is one credential's MCP server and the direct entry to its tools.
type built struct {
	srv    *mcp.Server
	direct *server.Direct
}

type serverEntry struct {
	s    *built
	used uint64
}

func newServerCache(max int) *serverCache {
	return &serverCache{max: max, m: map[serverKey]*serverEntry{}}
}

func (c *serverCache) get(k serverKey, build func() *built) *built {
	c.mu.Lock()
	c.tick++
	if e, ok := c.m[k]; ok {
		e.used = c.tick
		c.mu.Unlock()
		return e.s
	}
	c.mu.Unlock()
	s := build() // outside the lock: building takes a while
	if s == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[k]; ok { // another request built one meanwhile
		return e.s
	}
	if len(c.m) >= c.max {
		var oldK serverKey
		old := ^uint64(0)
		for k, e := range c.m {
			if e.used < old {
				oldK, old = k, e.used
			}
		}
		delete(c.m, oldK)
	}
	c.m[k] = &serverEntry{s: s, used: c.tick}
	return s
}
