// Package tools holds the PDPP read tools an MCP server exposes: their
// definitions (name, title, description, annotations, input and output
// schemas), argument validation, the RS request each call maps to, and the
// shaping of the RS answer into a tool result.
//
// # Registration
//
// [Register] adds the six tools (schema, query_records, aggregate, search,
// fetch, read_record_field) and the resource templates to an MCP server, over
// an [Env] that holds the one credential's reader of the resource server:
//
//	client, err := rs.New(rs.Options{BaseURL: providerURL, Token: func() string { return token }})
//	if err != nil {
//		return err
//	}
//	s := mcp.NewServer(&mcp.Implementation{Name: "my-host", Version: "v1"}, nil)
//	tools.Register(s, &tools.Env{RS: client, ProviderURL: providerURL})
//
// Most embedders call server.New, which does this and adds the server's
// identity and instructions. Every tool is a row of one table, so tool
// membership is decided in one place. Tool definitions and their JSON
// Schemas are built once per process and shared read-only by every server.
//
// # Arguments
//
// Input schemas are written by hand (no inferred ["null", …] unions, no
// top-level anyOf/oneOf) and are strict: unknown arguments are rejected.
// Each call is validated in one step before run, the only part that may
// reach the RS: the schema, the shared name rule and size limits (one rule
// per argument name on every tool), then the tool's own check. A
// rejected call never reaches the RS and its error carries a PDPP code
// (invalid_arguments, argument_too_large, invalid_filter, invalid_expand)
// rather than a bare schema-validator message.
//
// # Results and output schemas
//
// A successful result has one text block (what a model reads: previews,
// counts and every paging handle) and structuredContent conforming to the
// tool's output schema. For schema, query_records and aggregate,
// structuredContent.data is the RS body as raw JSON: same keys in the same
// order, same values. (Its bytes may still differ: the
// SDK's result encoding compacts whitespace and spells <, > and & as \u003c,
// \u003e and \u0026.) The one documented projection is global schema
// discovery, which leaves out per-stream field detail and says so in
// structuredContent.omitted.
//
// search, fetch and read_record_field shape their answers differently:
// search's structuredContent.data is the RS envelope without its hits (they
// are structuredContent.results, each with an id that embeds its connection
// and that the text repeats byte for byte); fetch's structuredContent is
// exactly the document {id, title, text, url, metadata}, mirrored as JSON in
// content[]; read_record_field returns the record, the field and the RS
// window. Every text that cuts something names the read that continues it:
// content ladders (query_records, search, fetch metadata), fetch's
// metadata.next and more_fields, and read_record_field's next args. Each such
// read is a call the named tool accepts, and the tests follow them all. A
// field the RS will not window (not text) is windowed here over its compact
// JSON rendering. Binary values reach text only as metadata.
//
// # Resources
//
// pdpp://stream/{name}, pdpp://record/{handle} and pdpp://field-window/{handle}
// serve resource-aware hosts; each returns what a tool returns, so nothing is
// reachable only by resources/read. A failed read is a JSON-RPC error with
// the same code and advice a tool result would carry.
//
// An error result (isError: true) has one text block and
// structuredContent.error: the RS error envelope (code, message, type, param,
// retry_with, available_connections, http_status, request_id) or the local
// typed error, plus next, the step that fixes the call. MCP clients such as
// the official TypeScript SDK validate structuredContent against the output
// schema even on error results, so every output schema declares error and
// requires nothing. The text is complete on its own as well. One classifier
// decides code and advice for tool results and resource reads alike; advice
// about credentials follows Env.Mode. Errors are never retried, and never
// retried with other credentials. docs/tools.md lists the shared argument
// rules and limits.
package tools
