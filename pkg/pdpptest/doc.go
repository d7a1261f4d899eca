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
// The double is also its own OAuth authorization server (oauth.go): RFC 8414
// metadata, dynamic registration of public clients, the authorization code
// grant with PKCE S256, a consent page that lists the dataset's connections
// (one picked gives a client token, several an mcp_package token) and
// rotating refresh tokens. A gateway serves it on its own origin with
// MountAuthorizationServer. Options.TokenSeed makes the tokens issued at
// start the same on every start.
//
// # Files
//
// A route's behaviour lives in one file: auth.go (bearers, the client ban),
// envelope.go (errors, warnings, links/meta finalizer), query.go (qs-style
// parsing), scope.go (grant and connection resolution, visibility), store.go
// (records and change history), cursor.go, filters.go, expand.go, schema.go,
// streams.go, records.go, changes.go, aggregate.go, search.go (shared by
// search_lexical.go, search_semantic.go, search_hybrid.go), fieldwindow.go,
// blobs.go, metadata.go, faults.go, oauth.go. Datasets live in package dataset.
//
// # Adding a route
//
// Register it in the area's mount function (or routes in server.go) with
// s.read(handler) for bearer-protected reads or s.public(handler) for open
// ones. A handler is func(c *call) error:
//
//   - c.who is the authenticated principal (c.who.owner(), c.who.client(),
//     c.who.grant); c.q is the parsed query (c.q.single, c.q.list, c.q.csv,
//     c.q.node for bracketed keys like filter[f][op], c.q.unknown for
//     allowlists); c.reqID, c.r (c.r.Context() for cancellation), c.w.
//   - clientBan(c.who, c.q) is the 400 for client filter/expand/expand_limit;
//     check it first.
//   - c.streamScope(name, scopeOptions{...}) resolves a stream for the caller
//     (401 context.* for clients, 404 for the owner) and returns the connector,
//     declaration, grant entry and connections in scope; sc.granted(field),
//     sc.visible(record) and c.rows(sc, connID) give grant-visible records;
//     c.connectionParam() reads connection_id and its alias.
//   - c.findRecord(sc, key) looks a record up across the connections in scope
//     (404 not_found, 409 ambiguous_connection); c.projection(sc, fields) is the
//     field list a read emits; c.wrapRecord(sc, conn, rec, fields) builds the
//     record wrapper (projection, identity fields, blob fetch_url injection).
//   - c.readableStreams(connID, connectorID) lists every stream the caller can
//     read (search fans out over these).
//   - Return errf(status, code, format, ...) (with .param(p) or .with(k, v)),
//     badRequest(...), notFound(...) or failedClosed(c.r, code) for errors; the
//     envelope's type comes from the status.
//   - Build the body as an ordered *object (obj(k, v, ...), o.set) and finish
//     with c.ok(body): it adds links.self, links.next (when the body has
//     has_more), meta.count and meta.warnings. Put warnings in
//     body meta.warnings yourself (warning(...), limitClampedWarning(...)).
package pdpptest
