package hosted

// len reports how many bearers have something in flight, so tests can see
// that every slot taken is given back.
func (l *limiter) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.n)
}

// len reports how many servers the cache holds.
func (c *serverCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
