package fanout

import "time"

// SetClock gives c its own clock and cursor store, so a test can move time
// past StoredCursorTTL without sleeping and without touching other tests'
// cursors.
func SetClock(c *Client, now func() time.Time) {
	c.now = now
	c.store = newCursorStore()
}
