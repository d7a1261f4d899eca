package fanout

import "time"

// SetClock gives c its own clock and cursor store, so a test can move time
// past StoredCursorTTL without sleeping and without touching other tests'
// cursors.
func SetClock(c *Client, now func() time.Time) {
	c.now = now
	c.store = newCursorStore()
}

// ShareSmallStore gives the clients one cursor store of maxEntries entries,
// shareEntries of them for one principal, so a test reaches its bounds with
// a few searches.
func ShareSmallStore(maxEntries, shareEntries int, cs ...*Client) {
	s := newBoundedStore(maxEntries, storedCursorMaxBytes, shareEntries, storedCursorShareBytes)
	for _, c := range cs {
		c.store = s
	}
}
