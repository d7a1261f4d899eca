package tools

import (
	"context"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// RS is the resource-server client the tools read through. Errors are
// *rs.Error (a non-2xx answer), *rs.TransportError (no usable answer), or any
// error with an ErrorCode() string method (for example a guard that refuses
// owner credentials); each is rendered as an actionable error result.
type RS interface {
	Get(ctx context.Context, path string, q rs.Query) (*rs.Response, error)
}

// Env is what the tool handlers of one server share. One Env serves one
// credential: its capability cache holds answers read with that credential.
type Env struct {
	RS RS
	// ProviderURL is echoed in results as provider_url and named in advice.
	ProviderURL string
	// Logger receives debug records about tool calls; nil discards.
	Logger *slog.Logger
	// Capabilities caches stream capability answers for the expand check;
	// nil gives the server a cache of its own.
	Capabilities *CapabilityCache
	// FetchTextChars bounds fetch's document text in code points; 0 means
	// DefaultFetchTextChars. Longer text is cut and continued by
	// read_record_field.
	FetchTextChars int
}

// tool is one row of the registration table.
type tool interface {
	definition() *mcp.Tool
	handler(env *Env) mcp.ToolHandler
}

// table is the tool surface, in the order the tools are documented. Adding a
// tool means adding a row here; nothing else registers tools.
var table = []tool{
	schemaTool,
	queryRecordsTool,
	aggregateTool,
	searchTool,
	fetchTool,
	readFieldTool,
}

// Names returns the registered tool names in table order.
func Names() []string {
	names := make([]string, len(table))
	for i, t := range table {
		names[i] = t.definition().Name
	}
	return names
}

// Register adds every tool of the table, and the resource templates, to s.
// The tool definitions are shared, precomputed values; Register does no
// schema work.
func Register(s *mcp.Server, env *Env) {
	e := *env
	if e.Logger == nil {
		e.Logger = slog.New(slog.DiscardHandler)
	}
	if e.Capabilities == nil {
		e.Capabilities = NewCapabilityCache()
	}
	for _, t := range table {
		s.AddTool(t.definition(), t.handler(&e))
	}
	registerResources(s, &e)
}

// spec describes one tool: its MCP definition and its handler over typed
// arguments A.
type spec[A any] struct {
	def  *mcp.Tool
	args *argSpec
	run  func(ctx context.Context, env *Env, a *A) (*mcp.CallToolResult, error)
}

func (s *spec[A]) definition() *mcp.Tool { return s.def }

func (s *spec[A]) handler(env *Env) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a A
		if err := s.args.decode(req.Params.Arguments, &a); err != nil {
			return errorResult(env, err), nil
		}
		res, err := s.run(ctx, env, &a)
		if err != nil {
			env.Logger.DebugContext(ctx, "tool call failed", append([]any{"tool", s.def.Name}, errorAttrs(err)...)...)
			return errorResult(env, err), nil
		}
		return res, nil
	}
}

// readOnly is the annotation block every PDPP tool carries: the tools only
// read, a repeated call has no further effect, and they reach nothing but the
// configured resource server.
func readOnly(title string) *mcp.ToolAnnotations {
	f := false
	return &mcp.ToolAnnotations{
		Title:           title,
		ReadOnlyHint:    true,
		IdempotentHint:  true,
		DestructiveHint: &f,
		OpenWorldHint:   &f,
	}
}
