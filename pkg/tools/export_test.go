package tools

import "time"

// Test helpers shared with the external tools_test package.
var (
	Golden       = golden
	ReadTestdata = readTestdata
)

// NewBoundedCapabilityCache is a cache with the default age and the given
// entry and byte bounds.
func NewBoundedCapabilityCache(entries int, bytes int64) *CapabilityCache {
	return newCapabilityCache(DefaultCapabilityTTL, entries, bytes, nil)
}

// NewCapabilityCacheClock is a cache with the default bounds whose entries
// live ttl by the clock now.
func NewCapabilityCacheClock(ttl time.Duration, now func() time.Time) *CapabilityCache {
	return newCapabilityCache(ttl, DefaultCapabilityEntries, DefaultCapabilityBytes, now)
}

// SetRolesTimings sets how long a call waits for the declared roles after
// its own read, and how long their read may take.
func SetRolesTimings(e *Env, wait, timeout time.Duration) {
	e.rolesWait, e.rolesTimeout = wait, timeout
}

// RolesRetry is how long a failed read of the roles is remembered.
const RolesRetry = rolesRetry

// HeldBytes is what the cache counts its entries as holding.
func (c *CapabilityCache) HeldBytes() int64 { return c.lru.Bytes() }

// SettleRoles waits for the reads of roles under way to end.
func (c *CapabilityCache) SettleRoles() {
	c.mu.Lock()
	var fs []*roleFlight
	for _, f := range c.flights {
		fs = append(fs, f)
	}
	c.mu.Unlock()
	for _, f := range fs {
		<-f.done
	}
}
