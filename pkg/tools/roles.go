package tools

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/lru"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// Declared roles: the fields a stream's schema declares primary-title (a
// record's title) and event-time (when it happened). Titles and previews
// use them from a session's first call, whether or not the session ever
// calls schema: the first call that needs them reads the grant's compact
// schema once, beside its own read, and every call of the same credential
// in the process shares what was read for the cache's lifetime.

const (
	// rolesWait is how long a call waits for the roles after its own read
	// has answered; past it the call uses the titles it can make without
	// them, and the read goes on to serve later calls.
	rolesWait = time.Second
	// rolesTimeout bounds the read of the roles.
	rolesTimeout = 15 * time.Second
	// rolesRetry is how long a failed read is remembered: a slow or failing
	// RS is not asked again by every call.
	rolesRetry = 10 * time.Second
)

// Bounds on what a role table keeps of a hostile answer: names longer than
// any real stream, connection or field name, and rows past the limit, are
// not read (their records are titled without roles).
const (
	maxRoleRows      = 1024
	maxRoleNameBytes = 128
	maxRoleFields    = 4
)

// streamRoles are one stream's declared fields, in schema order.
type streamRoles struct {
	titles, times []string
}

// keyFields are the fields a preview keeps: titles before times.
func (r streamRoles) keyFields() []string {
	if len(r.times) == 0 {
		return r.titles
	}
	return append(slices.Clip(r.titles), r.times...)
}

// title is the declared primary-title field ("" when none).
func (r streamRoles) title() string {
	if len(r.titles) == 0 {
		return ""
	}
	return r.titles[0]
}

// time is the declared event-time field ("" when none).
func (r streamRoles) time() string {
	if len(r.times) == 0 {
		return ""
	}
	return r.times[0]
}

func (r streamRoles) equal(o streamRoles) bool {
	return slices.Equal(r.titles, o.titles) && slices.Equal(r.times, o.times)
}

type roleKey struct{ stream, connectionID string }

// roleTable is what one credential's schema declares, per stream and
// connection. A package's schema has one row per member, each naming its own
// connections, so a hit is titled by its own member's declaration.
type roleTable struct {
	byConnection map[roleKey]streamRoles
	// byStream holds the roles of a stream every row of which declares the
	// same; a stream whose rows differ is left out, and a hit whose
	// connection no row names is titled without roles.
	byStream map[string]streamRoles
	size     int64
}

// lookup returns the roles for a record of stream read under connectionID
// ("" when the record names none). A nil table knows none.
func (t *roleTable) lookup(stream, connectionID string) streamRoles {
	if t == nil {
		return streamRoles{}
	}
	if connectionID != "" {
		if r, ok := t.byConnection[roleKey{stream, connectionID}]; ok {
			return r
		}
	}
	return t.byStream[stream]
}

// newRoleTable reads the declared roles of a schema document (compact or
// full, single grant or package). A role counts only on a field the grant
// holds: a field flagged g=false (granted:false in the full view) is never a
// title or time, however it is declared.
func newRoleTable(doc gjson.Result) *roleTable {
	t := &roleTable{byConnection: map[roleKey]streamRoles{}, byStream: map[string]streamRoles{}}
	ambiguous := map[string]bool{}
	rows, _ := schemaRows(doc)
	for i, r := range rows {
		if i == maxRoleRows {
			break
		}
		stream := streamName(r.stream)
		if stream == "" || len(stream) > maxRoleNameBytes {
			continue
		}
		roles := declaredRoles(r.stream)
		for _, c := range rowConnectionIDs(r) {
			k := roleKey{stream, c}
			if _, ok := t.byConnection[k]; !ok && len(t.byConnection) < maxRoleRows {
				t.byConnection[k] = roles
				t.size += int64(len(stream)+len(c)) + 64
			}
		}
		switch prev, ok := t.byStream[stream]; {
		case ambiguous[stream]:
		case !ok:
			t.byStream[stream] = roles
			t.size += int64(len(stream)) + 64
		case !prev.equal(roles):
			delete(t.byStream, stream)
			ambiguous[stream] = true
		}
		for _, f := range roles.titles {
			t.size += int64(len(f)) + 16
		}
		for _, f := range roles.times {
			t.size += int64(len(f)) + 16
		}
	}
	return t
}

// declaredRoles reads one stream row's granted primary-title and event-time
// fields.
func declaredRoles(stream gjson.Result) streamRoles {
	var r streamRoles
	stream.Get("field_capabilities").ForEach(func(k, v gjson.Result) bool {
		name := k.String()
		if name == "" || len(name) > maxRoleNameBytes {
			return true
		}
		flags := "," + fieldFlags(v) + ","
		if strings.Contains(flags, ",g=false,") {
			return true
		}
		if strings.Contains(flags, ",role=primary-title,") && len(r.titles) < maxRoleFields && !slices.Contains(r.titles, name) {
			r.titles = append(r.titles, name)
		}
		if strings.Contains(flags, ",role=event-time,") && len(r.times) < maxRoleFields && !slices.Contains(r.times, name) {
			r.times = append(r.times, name)
		}
		return true
	})
	// No spare capacity: a caller's append copies instead of writing into
	// the shared table.
	r.titles, r.times = slices.Clip(r.titles), slices.Clip(r.times)
	return r
}

// rowConnectionIDs are the connections a schema row speaks for: the
// stream's own granted_connections, else its connector's, and the connection
// a package tags the row's source with.
func rowConnectionIDs(r schemaRow) []string {
	var out []string
	add := func(id string) {
		if id != "" && len(id) <= maxRoleNameBytes && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	list := r.stream.Get("granted_connections")
	if !list.IsArray() || len(list.Array()) == 0 {
		list = r.connector.Get("granted_connections")
	}
	list.ForEach(func(_, c gjson.Result) bool {
		if c.Type == gjson.String {
			add(c.Str)
		} else {
			add(c.Get("connection_id").String())
		}
		return len(out) < maxRoleRows
	})
	for _, v := range []gjson.Result{r.stream.Get("connection_id"), r.stream.Get("connector_instance_id"),
		r.stream.Get("source.connection_id"), r.connector.Get("source.connection_id")} {
		if v.Type == gjson.String {
			add(v.Str)
		}
	}
	return out
}

// rolesKey is where a credential's role table is cached.
func rolesKey(credential string) cacheKey {
	return cacheKey{capabilityKey: capabilityKey{credential: credential}, roles: true}
}

// roleFlight is one read of a credential's roles; the calls that need them
// meanwhile wait for it rather than read again.
type roleFlight struct {
	done  chan struct{}
	table *roleTable // set before done is closed; nil when the read failed
}

// pendingRoles is a credential's role table, known or being read.
type pendingRoles struct {
	table  *roleTable
	flight *roleFlight
	wait   time.Duration
}

// roles returns the table the read pending has made, or nil when it failed,
// or has not answered within the wait after the caller's own read, or ctx
// ended first.
func (p pendingRoles) roles(ctx context.Context) *roleTable {
	if p.flight == nil {
		return p.table
	}
	select {
	case <-p.flight.done:
		return p.flight.table
	default:
	}
	t := time.NewTimer(p.wait)
	defer t.Stop()
	select {
	case <-p.flight.done:
		return p.flight.table
	case <-t.C:
	case <-ctx.Done():
	}
	return nil
}

// startRoles returns the credential's role table, starting its read when it
// is neither cached nor being read. The read runs apart from the call (its
// end does not cancel it) so that a call cut short still leaves the roles
// for the next.
func (e *Env) startRoles(ctx context.Context) pendingRoles {
	c, cred := e.Capabilities, e.CredentialKey()
	k := rolesKey(cred)
	if v, ok := c.lru.Get(k); ok {
		return pendingRoles{table: v.table}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.flights[cred]
	if f == nil {
		// A read may have finished since the look above.
		if v, ok := c.lru.Get(k); ok {
			return pendingRoles{table: v.table}
		}
		f = &roleFlight{done: make(chan struct{})}
		c.flights[cred] = f
		go c.readRoles(rs.Background(context.WithoutCancel(ctx)), e, cred, f)
	}
	return pendingRoles{flight: f, wait: cmp.Or(e.rolesWait, rolesWait)}
}

// readRoles reads the credential's compact schema and caches its role table,
// or remembers briefly that it could not.
func (c *CapabilityCache) readRoles(ctx context.Context, e *Env, cred string, f *roleFlight) {
	defer func() {
		if p := recover(); p != nil {
			e.Logger.ErrorContext(ctx, "titles: reading the declared roles panicked", "panic", fmt.Sprint(p))
			f.table = nil
			c.lru.Put(rolesKey(cred), cacheValue{}, lru.EntryOverhead, rolesRetry)
		}
		c.mu.Lock()
		delete(c.flights, cred)
		c.mu.Unlock()
		close(f.done)
	}()
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(e.rolesTimeout, rolesTimeout))
	defer cancel()
	body, err := readCompactSchema(ctx, e)
	k := rolesKey(cred)
	if err != nil {
		e.Logger.DebugContext(ctx, "titles: declared roles unavailable; titles name source, stream and time", "error", err)
		c.lru.Put(k, cacheValue{}, int64(len(cred))+lru.EntryOverhead, rolesRetry)
		return
	}
	t := newRoleTable(unwrapSchema(body))
	if !c.storeRoles(cred, t) {
		// Too large to keep: used by the calls waiting now, and not read
		// again by every call.
		c.lru.Put(k, cacheValue{}, int64(len(cred))+lru.EntryOverhead, rolesRetry)
	}
	f.table = t
}

// readCompactSchema reads the grant's compact schema, or its full schema
// from an RS without the compact view.
func readCompactSchema(ctx context.Context, e *Env) ([]byte, error) {
	resp, err := getSchema(ctx, e, rs.Query{{Key: "view", Value: "compact"}})
	if err != nil {
		return nil, err
	}
	return objectBody(rs.Path("v1", "schema"), resp)
}

// storeRoles caches a credential's role table, and reports whether it fit.
func (c *CapabilityCache) storeRoles(cred string, t *roleTable) bool {
	return c.lru.Put(rolesKey(cred), cacheValue{table: t}, t.size+int64(len(cred))+lru.EntryOverhead, c.ttl)
}

// rolesOf returns the cached role table of cred; ok is false when none is
// cached, and the table is nil when the last read failed.
func (c *CapabilityCache) rolesOf(cred string) (*roleTable, bool) {
	v, ok := c.lru.Get(rolesKey(cred))
	return v.table, ok
}

// learnRoles caches the role table of a compact schema the schema tool read,
// unless a fresh one is cached: a session that starts with schema needs no
// read of its own for titles.
func (c *CapabilityCache) learnRoles(cred string, doc gjson.Result) {
	if t, ok := c.rolesOf(cred); ok && t != nil {
		return
	}
	c.storeRoles(cred, newRoleTable(doc))
}
