package tools

import (
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Definitions returns the definitions of the tools Register adds, ordered
// by name as the SDK lists them, for a transport that answers tools/list
// itself. The definitions are shared: callers must not change them.
func Definitions() []*mcp.Tool {
	defs := make([]*mcp.Tool, 0, len(table))
	for _, t := range table {
		defs = append(defs, t.definition())
	}
	slices.SortFunc(defs, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	return defs
}

// Registered is what RegisterAll added to a server, for a transport that
// dispatches some requests itself.
type Registered struct {
	// Tools are the tool handlers by name.
	Tools map[string]mcp.ToolHandler
	// Templates are the resource templates with their read handlers.
	Templates []Template
}

// Template is one resource template and the handler that reads its URIs.
// The template is shared: callers must not change it.
type Template struct {
	Template *mcp.ResourceTemplate
	Read     mcp.ResourceHandler
}
