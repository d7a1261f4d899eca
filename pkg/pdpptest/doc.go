// Package pdpptest is an in-process PDPP resource server (RS) for tests and the
// demo: a real HTTP server on 127.0.0.1 that behaves like the reference RS
// request for request. It stores records with a change history, enforces
// grants, pages with stable keyset cursors, aggregates, and answers with the
// reference's envelopes and error codes. It is a test double, not a mock: tests
// of the adapter talk to it over loopback HTTP.
//
// It is not test-only code: `pdpp-mcp --demo`, the probe's demo and
// `cmd/pdpptest` serve it from their binaries through Start; New is the same
// server bound to a test's lifetime.
//
//	srv := pdpptest.New(t, pdpptest.Options{}) // gmail dataset
//	req.Header.Set("Authorization", "Bearer "+srv.Token(pdpptest.TokenClient))
//
// Where the reference RS's captured answers and its written contract
// disagree, the double follows the captures. Notably a client
// token naming a stream outside its grant, or a connection outside the stream's
// instance_ids, fails closed with 401 "Token introspection failed closed"
// (codes context.stream_not_allowed, context.instance_mismatch), and an unknown
// or revoked token answers 401 context.active_false. Grants issued against a
// "legacy connector projection" (the gmail client grant) are described on the
// discovery surfaces (schema, stream metadata) by that projection: empty
// property schemas, no keys or query declarations, compact flags "declared".
//
// # Multi-connector grants
//
// The reference binds a client grant to a single source. The double extends
// that: a grant's streams are resolved to connectors through their
// instance_ids (every connection belongs to one connector), so one grant may
// span several connectors with distinct stream names (the demo dataset's
// client grant does). The client's /v1/schema then lists one connector item
// per connector that has granted streams, and record detail reports each
// connector's own SourceID as connector_key.
//
// # Authorization server
//
// The double is also its own OAuth authorization server: RFC 8414
// metadata, dynamic registration of public clients, the authorization code
// grant with PKCE S256, a consent page that lists the dataset's connections
// (one picked gives a client token, several an mcp_package token) and
// rotating refresh tokens. A gateway serves it on its own origin with
// MountAuthorizationServer. Options.TokenSeed makes the tokens issued at
// start the same on every start.
package pdpptest
