package visible

import "github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"

func jsonwAppend(b []byte, s string) []byte { return jsonw.AppendString(b, s) }
