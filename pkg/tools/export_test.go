package tools

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

// HeldBytes is what the cache counts its entries as holding.
func (c *CapabilityCache) HeldBytes() int64 { return c.lru.Bytes() }
