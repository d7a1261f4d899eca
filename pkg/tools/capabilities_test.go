package tools

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"
)

// clock is a hand-driven time source.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestCapabilityCacheExpires(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := newCapabilityCache(30*time.Second, 4, 1<<20, clk.now)
	k := capabilityKey{"", "messages", "cin_a"}
	c.put(k, []byte("a"))
	if _, ok := c.get(capabilityKey{"", "messages", ""}); ok {
		t.Error("a different connection_id hit the entry")
	}
	clk.advance(29 * time.Second)
	if b, ok := c.get(k); !ok || string(b) != "a" {
		t.Fatalf("get before expiry = %q, %v", b, ok)
	}
	clk.advance(time.Second)
	if _, ok := c.get(k); ok {
		t.Error("entry outlived its TTL")
	}
}

func TestCapabilityCacheIsBounded(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := newCapabilityCache(time.Minute, 3, 1<<20, clk.now)
	for i, s := range []string{"a", "b", "c", "d"} {
		c.put(capabilityKey{"", s, ""}, []byte(s))
		clk.advance(time.Duration(i+1) * time.Second)
	}
	if c.lru.Len() != 3 {
		t.Fatalf("%d entries, want 3", c.lru.Len())
	}
	if _, ok := c.get(capabilityKey{"", "a", ""}); ok {
		t.Error("the least recently used entry was kept over a newer one")
	}
	if _, ok := c.get(capabilityKey{"", "d", ""}); !ok {
		t.Error("the newest entry was dropped")
	}
}

func TestAdvertisedRelations(t *testing.T) {
	doc := unwrapSchema(readTestdata(t, "rs/schema-full-owner.json"))
	rels, found := advertisedRelations(doc, "messages")
	if !found {
		t.Fatal("messages not found under connectors[].streams")
	}
	want := []relationCap{
		{name: "attachments", usable: true, maxLimit: 50},
		{name: "message_bodies", usable: false, reason: "related_stream_not_granted"},
	}
	if diff := cmp.Diff(want, rels, cmp.AllowUnexported(relationCap{})); diff != "" {
		t.Errorf("relations (-want +got):\n%s", diff)
	}
	if rels, found := advertisedRelations(doc, "threads"); !found || len(rels) != 0 {
		t.Errorf("threads: %v, %v; want found with no relations", rels, found)
	}
	if _, found := advertisedRelations(doc, "nope"); found {
		t.Error("found a stream that is not there")
	}
	// Package-merged shapes list streams at the top level.
	top := gjson.Parse(`{"streams":[{"name":"orders","expand_capabilities":[{"relation":"lines","usable":true}]}]}`)
	if rels, found := advertisedRelations(top, "orders"); !found || len(rels) != 1 || rels[0].name != "lines" {
		t.Errorf("top-level streams: %v, %v", rels, found)
	}
}

// Answers read with one credential are never served for another.
func TestCapabilityCacheKeyedByCredential(t *testing.T) {
	c := NewCapabilityCache()
	c.put(capabilityKey{"key-a", "messages", ""}, []byte("a"))
	if _, ok := c.get(capabilityKey{"key-b", "messages", ""}); ok {
		t.Fatal("an answer read with credential a was served for credential b")
	}
	if b, ok := c.get(capabilityKey{"key-a", "messages", ""}); !ok || string(b) != "a" {
		t.Fatal("credential a lost its own answer")
	}
}

// The cache is bounded in bytes whatever the answers weigh: twenty streams
// of large answers (rendered, beside a role table each) stay within the bound,
// the most recent kept; an answer over the whole bound is rendered and
// returned but not kept, and does not push out what is kept.
func TestCapabilityCacheByteBound(t *testing.T) {
	const bound = 1 << 20
	clk := &clock{t: time.Unix(0, 0)}
	c := newCapabilityCache(time.Minute, DefaultCapabilityEntries, bound, clk.now)
	answer := func(stream string, n int) string {
		return `{"detail":"compact","connectors":[{"streams":[{"name":"` + stream + `","field_capabilities":{"subject":"t=string,role=primary-title"},"note":"` +
			strings.Repeat("x", n) + `"}]}]}`
	}
	render := func(raw string) func() schemaRendering {
		return func() schemaRendering { return schemaRendering{data: raw, text: strings.Repeat("t", len(raw)/4)} }
	}
	for i := range 20 {
		s := fmt.Sprintf("s%02d", i)
		raw := answer(s, 200<<10)
		k := capabilityKey{"cred", s, ""}
		if r := c.rendered(k, raw, render(raw)); r.data != raw {
			t.Fatalf("%s: rendering not returned", s)
		}
		c.storeRoles(fmt.Sprint("cred", i), newRoleTable(unwrapSchema([]byte(raw))))
		if b := c.lru.Bytes(); b > bound {
			t.Fatalf("after %d streams the cache holds %d bytes, over its %d", i+1, b, bound)
		}
		if _, ok := c.entry(k); !ok {
			t.Fatalf("%s: the newest answer was not kept", s)
		}
	}
	if _, ok := c.entry(capabilityKey{"cred", "s00", ""}); ok {
		t.Error("the oldest answer is still kept")
	}
	before := c.lru.Len()
	huge := answer("huge", bound)
	if r := c.rendered(capabilityKey{"cred", "huge", ""}, huge, render(huge)); r.data != huge || len(r.text) != len(huge)/4 {
		t.Fatal("an answer over the bound was not served")
	}
	if _, ok := c.entry(capabilityKey{"cred", "huge", ""}); ok {
		t.Error("an answer over the whole bound was kept")
	}
	if c.lru.Len() != before {
		t.Errorf("an answer that is not kept changed the entries from %d to %d", before, c.lru.Len())
	}
}
