package tools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// Capability cache bounds. Answers live briefly so that a schema change on
// the RS is enforced within seconds, without a restart.
const (
	DefaultCapabilityTTL     = 30 * time.Second
	DefaultCapabilityEntries = 256
)

// CapabilityCache keeps recent compact schema answers of single streams,
// keyed by credential (Env.CredentialKey, a hash, never the token), stream
// and connection_id, for the expand check. Answers read with one credential
// are never served for another, so one cache may serve many credentials; it
// is bounded in entries and age either way. It is safe for concurrent use.
type CapabilityCache struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu      sync.Mutex
	entries map[capabilityKey]capabilityEntry
}

type capabilityKey struct{ credential, stream, connectionID string }

// maxRoleMemos bounds the role answers memoised per cached schema.
const maxRoleMemos = 256

type capabilityEntry struct {
	body    []byte
	expires time.Time
	// roles memoises roleFields per stream and roles: titles read it for
	// every hit and record, and scanning the schema each time cost more
	// than rendering the answer. Guarded by the cache's mu.
	roles map[string][]string
	// rendering is what the schema tool made of body (nil until it has).
	rendering *schemaRendering
}

// schemaRendering is what the schema tool makes of one compact answer: the
// data it passes on and its text. Both depend on the answer's bytes and the
// cache key alone, so an answer that repeats the cached one repeats them.
type schemaRendering struct {
	data, text string
	// dataIsBody: data is the cached answer itself (kept once, as body).
	dataIsBody bool
}

// NewCapabilityCache returns a cache with the default TTL and size.
func NewCapabilityCache() *CapabilityCache {
	return newCapabilityCache(DefaultCapabilityTTL, DefaultCapabilityEntries, time.Now)
}

func newCapabilityCache(ttl time.Duration, max int, now func() time.Time) *CapabilityCache {
	return &CapabilityCache{ttl: ttl, max: max, now: now, entries: map[capabilityKey]capabilityEntry{}}
}

func (c *CapabilityCache) get(k capabilityKey) ([]byte, bool) {
	e, ok := c.entry(k)
	return e.body, ok
}

func (c *CapabilityCache) entry(k capabilityKey) (capabilityEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok {
		return capabilityEntry{}, false
	}
	if !c.now().Before(e.expires) {
		delete(c.entries, k)
		return capabilityEntry{}, false
	}
	return e, true
}

func (c *CapabilityCache) put(k capabilityKey, body []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(k, body, nil)
}

// rendered caches the compact schema answer raw under k, as put does, and
// returns what render makes of it. When raw repeats the answer cached under
// k, the rendering made of that answer is returned instead of calling
// render, and the entry (with its role memo) lives on from now. raw's bytes
// are the whole key: nothing rendered for another answer is ever returned.
func (c *CapabilityCache) rendered(k capabilityKey, raw string, render func() schemaRendering) schemaRendering {
	c.mu.Lock()
	if e, ok := c.entries[k]; ok && e.rendering != nil && c.now().Before(e.expires) && string(e.body) == raw {
		e.expires = c.now().Add(c.ttl)
		c.entries[k] = e
		c.mu.Unlock()
		r := *e.rendering
		if r.dataIsBody {
			r.data = raw
		}
		return r
	}
	c.mu.Unlock()
	r := render()
	kept := r
	if kept.data == raw {
		// Data passed on unchanged is the cached body: not kept twice.
		kept.data, kept.dataIsBody = "", true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(k, []byte(raw), &kept)
	return r
}

func (c *CapabilityCache) putLocked(k capabilityKey, body []byte, r *schemaRendering) {
	now := c.now()
	if len(c.entries) >= c.max {
		// Drop expired entries first; if none, drop the one closest to
		// expiry. The cache is small, so a scan is cheap.
		var oldest capabilityKey
		var oldestAt time.Time
		for key, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, key)
				continue
			}
			if oldestAt.IsZero() || e.expires.Before(oldestAt) {
				oldest, oldestAt = key, e.expires
			}
		}
		if len(c.entries) >= c.max {
			delete(c.entries, oldest)
		}
	}
	c.entries[k] = capabilityEntry{body: body, expires: now.Add(c.ttl), roles: map[string][]string{}, rendering: r}
}

// streamSchemaQuery is the compact, stream-scoped schema request shared by
// the schema tool and the expand check, so one can warm the cache for the
// other.
func streamSchemaQuery(stream, connectionID string) rs.Query {
	q := rs.Query{{Key: "view", Value: "compact"}, {Key: "stream", Value: stream}}
	if connectionID != "" {
		q.Add("connection_id", connectionID)
	}
	return q
}

// checkExpand verifies the requested expand relations (and expand_limit
// caps) against the stream's advertised expand_capabilities, read from the
// stream row under connectors[].streams. When the schema cannot be read or
// does not list the stream, the RS decides (fail open).
func checkExpand(ctx context.Context, env *Env, stream, connectionID string, expand []string, limits []rs.Param) error {
	k := capabilityKey{env.CredentialKey(), stream, connectionID}
	body, ok := env.Capabilities.get(k)
	if !ok {
		resp, err := env.RS.Get(ctx, rs.Path("v1", "schema"), streamSchemaQuery(stream, connectionID))
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return err
			}
			env.Logger.DebugContext(ctx, "expand check skipped: schema unavailable", "stream", stream, "error", err)
			return nil
		}
		b, err := objectBody("/v1/schema", resp)
		if err != nil {
			env.Logger.DebugContext(ctx, "expand check skipped: schema unreadable", "stream", stream, "error", err)
			return nil
		}
		body = b
		env.Capabilities.put(k, body)
	}

	rels, found := advertisedRelations(unwrapSchema(body), stream)
	if !found {
		return nil
	}
	byName := map[string]relationCap{}
	var usable []string
	for _, r := range rels {
		byName[r.name] = r
		if r.usable {
			usable = append(usable, r.name)
		}
	}
	advertised := "none"
	if len(usable) > 0 {
		advertised = strings.Join(usable, ", ")
	}
	next := "drop expand, or use only relations schema(stream) lists as usable (usable here: " + advertised + ")"
	for _, rel := range expand {
		r, ok := byName[rel]
		switch {
		case len(rels) == 0:
			return &toolError{Code: CodeInvalidExpand, Param: "expand",
				Message: fmt.Sprintf("stream %s advertises no expand_capabilities, so relation %s cannot be expanded; "+
					"schema(stream) lists the relations a stream can expand (expand=)", quoteArg(stream), quoteArg(rel)),
				Next: "drop expand; read the related stream with query_records instead"}
		case !ok:
			return &toolError{Code: CodeInvalidExpand, Param: "expand",
				Message: fmt.Sprintf("stream %s does not advertise relation %s in expand_capabilities", quoteArg(stream), quoteArg(rel)),
				Next:    next}
		case !r.usable:
			why := ""
			if r.reason != "" {
				why = " (" + r.reason + ")"
			}
			return &toolError{Code: CodeInvalidExpand, Param: "expand",
				Message: fmt.Sprintf("relation %s of stream %s is advertised but not usable with this grant%s", quoteArg(rel), quoteArg(stream), why),
				Next:    next}
		}
	}
	for _, p := range limits {
		rel := relation(p)
		r := byName[rel]
		n, _ := strconv.Atoi(p.Value)
		if r.maxLimit > 0 && n > r.maxLimit {
			return &toolError{Code: CodeInvalidExpand, Param: "expand_limit",
				Message: fmt.Sprintf("expand_limit.%s is %d but relation %s allows at most %d (max_limit)", rel, n, quoteArg(rel), r.maxLimit),
				Next:    fmt.Sprintf("set expand_limit.%s to at most %d", rel, r.maxLimit)}
		}
	}
	return nil
}

type relationCap struct {
	name     string
	usable   bool
	reason   string
	maxLimit int
}

// advertisedRelations collects the expand capabilities of every row named
// stream, under connectors[].streams or a top-level streams[]. found is false
// when no row names the stream.
func advertisedRelations(doc gjson.Result, stream string) (rels []relationCap, found bool) {
	visit := func(s gjson.Result) {
		if streamName(s) != stream {
			return
		}
		found = true
		s.Get("expand_capabilities").ForEach(func(_, e gjson.Result) bool {
			name := first(e, "name", "relation").String()
			if name == "" || slices.ContainsFunc(rels, func(r relationCap) bool { return r.name == name && r.usable }) {
				return true
			}
			rels = append(rels, relationCap{
				name:     name,
				usable:   e.Get("usable").Type != gjson.False && e.Get("granted").Type != gjson.False,
				reason:   e.Get("reason").String(),
				maxLimit: int(e.Get("max_limit").Int()),
			})
			return true
		})
	}
	doc.Get("connectors").ForEach(func(_, c gjson.Result) bool {
		c.Get("streams").ForEach(func(_, s gjson.Result) bool { visit(s); return true })
		return true
	})
	doc.Get("streams").ForEach(func(_, s gjson.Result) bool {
		if s.IsObject() {
			visit(s)
		}
		return true
	})
	return rels, found
}

// keyFields names the fields a cached stream schema marks as the record's
// title or event time (role=primary-title, role=event-time), so a tight
// preview keeps them. It never makes a request: no cached answer, no names.
func (c *CapabilityCache) keyFields(credential, stream, connectionID string) []string {
	// Titles before times: the preview leads with them in this order.
	return append(c.roleFields(credential, stream, connectionID, "primary-title"),
		c.roleFields(credential, stream, connectionID, "event-time")...)
}

// roleFields names, in schema order, the fields a cached stream schema
// declares with any of roles (role=<role> in the compact flags). It never
// makes a request: no cached answer, no names.
func (c *CapabilityCache) roleFields(credential, stream, connectionID string, roles ...string) []string {
	e, ok := c.entry(capabilityKey{credential, stream, connectionID})
	if !ok {
		// The global compact schema (schema without stream) names every
		// stream's roles too.
		if e, ok = c.entry(capabilityKey{credential, "", ""}); !ok {
			return nil
		}
	}
	memo := stream + "\x00" + strings.Join(roles, ",")
	c.mu.Lock()
	names, done := e.roles[memo]
	c.mu.Unlock()
	if done {
		return names
	}
	names = scanRoles(e.body, stream, roles)
	c.mu.Lock()
	if len(e.roles) < maxRoleMemos { // stream names come from callers too
		e.roles[memo] = names
	}
	c.mu.Unlock()
	return names
}

// scanRoles reads roleFields' answer from a cached schema body. The slice
// has no spare capacity, so a caller's append copies it instead of writing
// into the memo.
func scanRoles(body []byte, stream string, roles []string) []string {
	var names []string
	doc := unwrapSchema(body)
	visit := func(s gjson.Result) {
		if streamName(s) != stream {
			return
		}
		s.Get("field_capabilities").ForEach(func(k, v gjson.Result) bool {
			flags := "," + fieldFlags(v) + ","
			if slices.ContainsFunc(roles, func(r string) bool { return strings.Contains(flags, ",role="+r+",") }) &&
				!slices.Contains(names, k.String()) {
				names = append(names, k.String())
			}
			return true
		})
	}
	doc.Get("connectors").ForEach(func(_, c gjson.Result) bool {
		c.Get("streams").ForEach(func(_, s gjson.Result) bool { visit(s); return true })
		return true
	})
	return slices.Clip(names)
}
