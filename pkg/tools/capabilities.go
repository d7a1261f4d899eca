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

	"github.com/pdpp-mcp/pdpp-mcp/internal/lru"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// Capability cache bounds. Answers live briefly so that a schema change on
// the RS is enforced within seconds, without a restart. The byte bound holds
// whatever the RS sends: an answer (with what is made of it) larger than the
// whole bound is served but not kept.
const (
	DefaultCapabilityTTL           = 30 * time.Second
	DefaultCapabilityEntries       = 256
	DefaultCapabilityBytes   int64 = 8 << 20
)

// CapabilityCache keeps recent compact schema answers of single streams,
// keyed by credential (Env.CredentialKey, a hash, never the token), stream
// and connection_id, for the expand check, with the schema tool's rendering
// of them; and each credential's declared roles, which titles and previews
// read (roles.go). What was read with one credential is never served for
// another, so one cache may serve many credentials; it is bounded in
// entries, bytes and age either way, and drops the least recently used
// entries first. It is safe for concurrent use.
type CapabilityCache struct {
	ttl time.Duration
	lru *lru.Cache[cacheKey, cacheValue]

	mu sync.Mutex
	// flights are the role reads under way, by credential.
	flights map[string]*roleFlight
}

type capabilityKey struct{ credential, stream, connectionID string }

// cacheKey names an answer, or (roles) the role table of a credential.
type cacheKey struct {
	capabilityKey
	roles bool
}

// size counts the key's strings, which the cache keeps too.
func (k cacheKey) size() int64 {
	return int64(len(k.credential) + len(k.stream) + len(k.connectionID))
}

// cacheValue is one entry: an answer, or a role table (nil when the read of
// the roles failed).
type cacheValue struct {
	answer *capabilityEntry
	table  *roleTable
}

// capabilityEntry is a cached answer. It is never changed once stored: a new
// rendering stores a new entry.
type capabilityEntry struct {
	body []byte
	// rendering is what the schema tool made of body (nil until it has).
	rendering *schemaRendering
}

// size counts the bytes the entry keeps.
func (e *capabilityEntry) size() int64 {
	n := int64(len(e.body))
	if r := e.rendering; r != nil {
		n += int64(len(r.data) + len(r.text))
	}
	return n
}

// schemaRendering is what the schema tool makes of one compact answer: the
// data it passes on and its text. Both depend on the answer's bytes and the
// cache key alone, so an answer that repeats the cached one repeats them.
type schemaRendering struct {
	data, text string
	// dataIsBody: data is the cached answer itself (kept once, as body).
	dataIsBody bool
}

// NewCapabilityCache returns a cache with the default TTL and bounds.
func NewCapabilityCache() *CapabilityCache {
	return newCapabilityCache(DefaultCapabilityTTL, DefaultCapabilityEntries, DefaultCapabilityBytes, time.Now)
}

func newCapabilityCache(ttl time.Duration, entries int, bytes int64, now func() time.Time) *CapabilityCache {
	return &CapabilityCache{ttl: ttl, lru: lru.New[cacheKey, cacheValue](entries, bytes, now), flights: map[string]*roleFlight{}}
}

func (c *CapabilityCache) get(k capabilityKey) ([]byte, bool) {
	e, ok := c.entry(k)
	if !ok {
		return nil, false
	}
	return e.body, true
}

func (c *CapabilityCache) entry(k capabilityKey) (*capabilityEntry, bool) {
	v, ok := c.lru.Get(cacheKey{capabilityKey: k})
	if !ok || v.answer == nil {
		return nil, false
	}
	return v.answer, true
}

func (c *CapabilityCache) put(k capabilityKey, body []byte) {
	c.store(k, &capabilityEntry{body: body})
}

func (c *CapabilityCache) store(k capabilityKey, e *capabilityEntry) {
	ck := cacheKey{capabilityKey: k}
	c.lru.Put(ck, cacheValue{answer: e}, e.size()+ck.size()+lru.EntryOverhead, c.ttl)
}

// rendered caches the compact schema answer raw under k, as put does, and
// returns what render makes of it. When raw repeats the answer cached under
// k, the rendering made of that answer is returned instead of calling
// render, and the entry lives on from now. raw's bytes
// are the whole key: nothing rendered for another answer is ever returned.
func (c *CapabilityCache) rendered(k capabilityKey, raw string, render func() schemaRendering) schemaRendering {
	if e, ok := c.entry(k); ok && e.rendering != nil && string(e.body) == raw {
		c.store(k, e)
		r := *e.rendering
		if r.dataIsBody {
			r.data = raw
		}
		return r
	}
	r := render()
	kept := r
	if kept.data == raw {
		// Data passed on unchanged is the cached body: not kept twice.
		kept.data, kept.dataIsBody = "", true
	}
	c.store(k, &capabilityEntry{body: []byte(raw), rendering: &kept})
	return r
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
