package pdpptest

// GET /v1/streams and GET /v1/streams/{stream} (rs-contract §2.1, §2.2).

func (s *Server) handleStreams(c *call) error        { return notImplemented(c) }
func (s *Server) handleStreamMetadata(c *call) error { return notImplemented(c) }
