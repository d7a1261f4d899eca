package tools

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// RS is the resource-server client the tools read through. Errors are
// *rs.Error (a non-2xx answer), *rs.TransportError (no usable answer), or any
// error with an ErrorCode() string method (for example a guard that refuses
// owner credentials); each is rendered as an actionable error result.
type RS interface {
	Get(ctx context.Context, path string, q rs.Query) (*rs.Response, error)
}

// Mode is how the server is deployed. It decides the advice a caller gets
// when the credential or grant must change.
type Mode int

const (
	// ModeStdio: a local user runs the server with a cached grant, and
	// `pdpp connect <provider-url>` replaces it.
	ModeStdio Mode = iota
	// ModeHosted: remote callers cannot run a command; a grant is changed
	// by re-approving it with the provider.
	ModeHosted
)

// Env is what the tool handlers of one server share. One Env serves one
// credential: its capability cache holds answers read with that credential.
type Env struct {
	RS RS
	// ProviderURL is echoed in results as provider_url and named in advice.
	ProviderURL string
	// Mode selects the advice for credential and grant failures.
	Mode Mode
	// Logger receives debug records about tool calls; nil discards.
	Logger *slog.Logger
	// Capabilities caches stream capability answers for the expand check
	// and the declared roles titles use; nil gives the server a cache of
	// its own. Servers of one process may share one (keyed by
	// CredentialKey), so a grant's roles are read once for all of them.
	Capabilities *CapabilityCache
	// CredentialKey names the credential RS reads use, for cache keys: an
	// opaque hash (credential.Key), never the token. nil uses the RS's own
	// CredentialKey method when it has one (the credential guard does), and
	// otherwise one key for everything (one credential per Env).
	CredentialKey func() string
	// FetchTextChars bounds fetch's document text in code points; 0 means
	// DefaultFetchTextChars. Longer text is cut and continued by
	// read_record_field.
	FetchTextChars int
	// BlobMaxBytes bounds the bytes read for one blob (fetch of a
	// pdpp://blob/ handle, or a read of the blob resource); 0 means
	// DefaultBlobMaxBytes. A larger blob is an error that says its size.
	BlobMaxBytes int64
	// CitationURL is the public origin of the provider, for the url of
	// search and fetch documents. "" uses the provider URL the answer
	// came from, except in hosted mode when that is internal (see
	// citationBase).
	CitationURL string

	// rolesWait and rolesTimeout, when set, replace the defaults of the
	// same names (tests).
	rolesWait, rolesTimeout time.Duration
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

// Register adds every tool of the table, and the resource templates, to s,
// and returns the tool handlers it added by name, for callers that dispatch
// a tools/call themselves (the hosted gateway's direct path). The tool
// definitions are shared, precomputed values; Register does no schema work.
func Register(s *mcp.Server, env *Env) map[string]mcp.ToolHandler {
	return RegisterAll(s, env).Tools
}

// RegisterAll is Register, returning the resource templates' read
// handlers too.
func RegisterAll(s *mcp.Server, env *Env) Registered {
	e := *env
	if e.Logger == nil {
		e.Logger = slog.New(slog.DiscardHandler)
	}
	if e.Capabilities == nil {
		e.Capabilities = NewCapabilityCache()
	}
	if e.CredentialKey == nil {
		if k, ok := e.RS.(interface{ CredentialKey() string }); ok {
			e.CredentialKey = k.CredentialKey
		} else {
			e.CredentialKey = func() string { return "" }
		}
	}
	handlers := make(map[string]mcp.ToolHandler, len(table))
	for _, t := range table {
		h := t.handler(&e)
		s.AddTool(t.definition(), h)
		handlers[t.definition().Name] = h
	}
	return Registered{Tools: handlers, Templates: registerResources(s, &e)}
}

// spec describes one tool: its MCP definition and its handler over typed
// arguments A. A call is validated in one step before run, which is the only
// part that may reach the RS: args checks each argument against the schema
// and the shared rules (limits.go), then check, when set, checks what the
// schema cannot say (combinations, id syntax).
type spec[A any] struct {
	def   *mcp.Tool
	args  *lazyArgSpec
	check func(a *A) error
	run   func(ctx context.Context, env *Env, a *A) (*mcp.CallToolResult, error)
}

// validate decodes and checks the arguments of one call; nothing here
// reaches the RS.
func (s *spec[A]) validate(raw json.RawMessage, a *A) error {
	if err := s.args.decode(raw, a); err != nil {
		return err
	}
	if s.check != nil {
		return s.check(a)
	}
	return nil
}

func (s *spec[A]) definition() *mcp.Tool { return s.def }

func (s *spec[A]) handler(env *Env) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a A
		if err := s.validate(req.Params.Arguments, &a); err != nil {
			return shown(errorResult(env, err)), nil
		}
		res, err := s.run(ctx, env, &a)
		if err != nil {
			env.Logger.DebugContext(ctx, "tool call failed", append([]any{"tool", s.def.Name}, errorAttrs(env, err)...)...)
			return shown(errorResult(env, err)), nil
		}
		if len(res.Content) > 1 && !linksAllowed(req) {
			res.Content = withoutLinks(res.Content)
		}
		return shown(res), nil
	}
}

// shown finishes the text blocks of a result under the visible rule. Each
// string from the RS was rendered as the text was built; this marks any
// hidden character that still got through, and ends a text that holds marks
// with the note that says how many, so the model knows it is reading text
// written to hide something. A JSON document (fetch) gets the same from
// documentResult, with the note in its metadata.
func shown(res *mcp.CallToolResult) *mcp.CallToolResult {
	for _, c := range res.Content {
		t, ok := c.(*mcp.TextContent)
		if !ok {
			continue
		}
		// Only fetch's document starts with "{", and documentResult has
		// passed it through the net already (as JSON, in text and
		// structured copy alike): scanning it twice would only cost time.
		if strings.HasPrefix(t.Text, "{") {
			continue
		}
		t.Text = finishText(t.Text)
	}
	return res
}

// finishText is shown for one text that is not a JSON document: any hidden
// character left marked, and the note when it holds marks (unless the text
// ends with it already: a bounded text counts it in its budget).
func finishText(s string) string {
	s = visible.MarkHidden(s)
	if n := visible.Count(s); n > 0 && !strings.Contains(s, "\nhidden_marks=") {
		s += "\n" + visible.Note(n)
	}
	return s
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
