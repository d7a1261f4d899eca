package pdpptest

// GET /v1/schema (rs-contract §3).

func (s *Server) handleSchema(c *call) error { return notImplemented(c) }
