// Package tools holds the PDPP read tools an MCP server exposes: their
// definitions (name, title, description, annotations, input and output
// schemas), argument validation, the RS request each call maps to, and the
// shaping of the RS answer into a tool result.
//
// # Registration
//
// Every tool is a row of one table (see [Names]); [Register] adds exactly
// those rows to a server, so tool membership is decided in one place. Tool
// definitions and their JSON Schemas are built once per process and shared
// read-only by every server, which keeps per-request servers cheap.
//
// # Arguments
//
// Input schemas are written by hand (no inferred ["null", …] unions, no
// top-level anyOf/oneOf) and are strict: unknown arguments are rejected.
// Handlers validate arguments themselves before any RS request, so a rejected
// call never reaches the RS and its error carries a PDPP code
// (invalid_arguments, invalid_filter, invalid_expand) rather than a bare
// schema-validator message.
//
// # Results and output schemas
//
// A successful result has one text block (what a model reads: previews,
// counts and every paging handle) and structuredContent conforming to the
// tool's output schema; structuredContent.data is the RS body byte for byte
// (authored key order kept), except where a tool documents a projection.
//
// An error result (isError: true) has one text block and no
// structuredContent. MCP clients such as the official TypeScript SDK validate
// structuredContent against the output schema whenever it is present, even on
// error results; carrying the error in structuredContent would therefore
// require every output schema to admit an error shape as well. Instead the
// error text is complete on its own: the code, the message, the HTTP status
// and RS request id when there was an RS answer, the offending parameter,
// candidate connection_ids when the RS named them, and one "next:" line with
// the step that fixes the call. Errors are never retried, and never retried
// with other credentials.
package tools
