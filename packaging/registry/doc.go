// Package registry holds the MCP Registry entry for pdpp-mcp (server.json)
// and the registry's published schema it is checked against; see README.md.
package registry
