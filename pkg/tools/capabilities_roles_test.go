package tools

import (
	"slices"
	"testing"
	"time"
)

// The declared roles are read from a cached schema once and kept: a second
// read answers the same, an answer the caller appends to does not change
// what the next caller gets, and a replaced schema is read afresh.
func TestRoleFieldsMemo(t *testing.T) {
	now := time.Unix(0, 0)
	c := newCapabilityCache(time.Minute, 8, 1<<20, func() time.Time { return now })
	schema := func(title string) []byte {
		return []byte(`{"connectors":[{"streams":[{"name":"mail","field_capabilities":{` +
			`"` + title + `":"t=string,role=primary-title","name":"t=string,role=primary-title","label":"t=string,role=primary-title","at":"t=string,role=event-time","body":"t=string"}}]}]}`)
	}
	c.put(capabilityKey{"cred", "", ""}, schema("subject"))
	want := []string{"subject", "name", "label", "at"}
	first := c.keyFields("cred", "mail", "")
	if !slices.Equal(first, want) {
		t.Fatalf("keyFields = %q, want %q", first, want)
	}
	_ = append(c.roleFields("cred", "mail", "", "primary-title"), "scribble")
	if !slices.Equal(first, want) {
		t.Fatalf("an append by another caller changed an earlier answer to %q", first)
	}
	if got := c.keyFields("cred", "mail", "conn"); !slices.Equal(got, want) {
		t.Fatalf("after an append by a caller, keyFields = %q, want %q", got, want)
	}
	c.put(capabilityKey{"cred", "", ""}, schema("title"))
	if got := c.roleFields("cred", "mail", "", "primary-title"); !slices.Equal(got, []string{"title", "name", "label"}) {
		t.Fatalf("after the schema changed, roleFields = %q, want [title name label]", got)
	}
}
