package pdpptest

// GET /v1/streams/{stream}/aggregate (rs-contract §4).

func (s *Server) handleAggregate(c *call) error { return notImplemented(c) }
