// Package server builds the MCP server that exposes a PDPP grant: server
// identity, instructions, capabilities and the tools of package tools, and
// serves it over stdio.
//
//	srv := server.New(server.Options{RS: client, ProviderURL: providerURL})
//	err := server.RunStdio(ctx, srv, os.Stdin, os.Stdout, server.StdioOptions{})
//
// RunStdio frames, filters and answers the JSON-RPC lines itself (bounded
// lines, ids echoed as sent, calls in flight drained on shutdown). Refuse
// answers a stdio client the process cannot serve with the reason.
//
// New does no I/O, but registering the tools re-encodes their schemas, which
// costs about as much as a tool call; a hosted deployment therefore keeps one
// built server per credential (package hosted's server cache) instead of
// building one per request.
package server

import (
	"context"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/version"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

// DefaultName is the serverInfo name when Options.Name is empty.
const DefaultName = "pdpp-mcp"

// listTTLMs is how long clients may cache the tool and resource lists, which
// are fixed for the life of the process.
const listTTLMs = 5 * 60 * 1000

// icon is a 16×16 mark, small on purpose: protocol 2026-07-28 repeats
// serverInfo (icons included) in the _meta of every response.
var icon = mcp.Icon{
	Source: dataURI("image/svg+xml", `<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'>`+
		`<rect width='16' height='16' rx='3' fill='#234'/>`+
		`<path d='M5 12V4h3.5a2.5 2.5 0 0 1 0 5H5' fill='none' stroke='#fff' stroke-width='1.6'/></svg>`),
	MIMEType: "image/svg+xml",
	Sizes:    []string{"any"},
}

// dataURI is a percent-encoded data: URI of text. icons[].src is a
// format "uri" string in the MCP schema, and strict clients reject one with
// raw spaces or angle brackets; only RFC 3986 unreserved characters and the
// few delimiters SVG needs ('/:=.) pass unescaped, which keeps it short.
func dataURI(mime, text string) string {
	const hex = "0123456789ABCDEF"
	b := []byte("data:" + mime + ",")
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '.', c == '_', c == '~', c == '/', c == ':', c == '=', c == '\'':
			b = append(b, c)
		default:
			b = append(b, '%', hex[c>>4], hex[c&15])
		}
	}
	return string(b)
}

// Options configures New.
type Options struct {
	// RS is the resource-server client every tool reads through. Required
	// for tool calls; a server without one can only initialise and list.
	RS tools.RS
	// ProviderURL is the normalised provider URL, echoed in results and named
	// in advice (`pdpp connect <provider-url>`).
	ProviderURL string
	// Name is serverInfo.name; "" means DefaultName.
	Name string
	// Version is serverInfo.version; "" means Version().
	Version string
	// Logger receives SDK and tool diagnostics; nil discards. It must not
	// write to stdout in stdio mode.
	Logger *slog.Logger
	// Icons replaces the default icon; a non-nil empty slice sends none.
	Icons []mcp.Icon
	// Mode selects the advice for credential and grant failures: stdio
	// (the zero value) names `pdpp connect <provider-url>`, hosted says the
	// grant must be re-approved with the provider.
	Mode tools.Mode
	// Capabilities is the expand-check cache, keyed by CredentialKey, so
	// one may be shared by every server of a process (hosted mode keeps a
	// server per credential); nil gives this server its own.
	Capabilities *tools.CapabilityCache
	// CredentialKey returns an opaque key of the credential RS reads use
	// (credential.Key of the token, never the token). nil uses the RS's own
	// CredentialKey method when it has one.
	CredentialKey func() string
	// FetchTextChars bounds the text of a fetch document in characters;
	// 0 means tools.DefaultFetchTextChars (16,384). Longer text is cut and
	// its continuation named in the document's metadata.
	FetchTextChars int
	// BlobMaxBytes bounds the bytes read for one blob; 0 means
	// tools.DefaultBlobMaxBytes (8 MiB).
	BlobMaxBytes int64
	// CitationURL is the provider's public origin, which results cite
	// (see tools.Env.CitationURL).
	CitationURL string
	// Middleware runs around every request the server receives, inside
	// the server's own guards, on the SDK's path and on Direct's alike. A
	// middleware must not rely on the request's session: Direct's requests
	// have none.
	Middleware []mcp.Middleware
}

// New returns an MCP server with the PDPP tools registered. It performs no
// I/O.
func New(o Options) *mcp.Server {
	s, _ := NewWithDirect(o)
	return s
}

// NewWithDirect is New, plus a Direct that calls the same server's tools
// without a session.
func NewWithDirect(o Options) (*mcp.Server, *Direct) {
	name := o.Name
	if name == "" {
		name = DefaultName
	}
	version := o.Version
	if version == "" {
		version = Version()
	}
	icons := o.Icons
	if icons == nil {
		icons = []mcp.Icon{icon}
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	env := &tools.Env{
		RS:             o.RS,
		ProviderURL:    o.ProviderURL,
		Logger:         logger,
		Mode:           o.Mode,
		Capabilities:   o.Capabilities,
		CredentialKey:  o.CredentialKey,
		FetchTextChars: o.FetchTextChars,
		BlobMaxBytes:   o.BlobMaxBytes,
		CitationURL:    o.CitationURL,
	}
	impl := &mcp.Implementation{
		Name:    name,
		Title:   "PDPP",
		Version: version,
		Icons:   icons,
	}
	s := mcp.NewServer(impl, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       SDKLogger(logger),
		// Explicit: tools, resource templates (with completion of stream
		// names) and an empty prompts list; no logging, and no listChanged
		// because the lists never change while the process runs. The SDK
		// answers prompts/list whatever is declared, and a server must not
		// answer a method whose capability it did not declare.
		Capabilities: &mcp.ServerCapabilities{
			Tools:       &mcp.ToolCapabilities{},
			Resources:   &mcp.ResourceCapabilities{},
			Prompts:     &mcp.PromptCapabilities{},
			Completions: &mcp.CompletionCapabilities{},
		},
		CompletionHandler: tools.Completion(env),
		SetCacheable:      setCacheable,
	})
	mw := receiving(logger, o.Middleware)
	s.AddReceivingMiddleware(mw...)
	return s, newDirect(impl, tools.RegisterAll(s, env), tools.Definitions(), mw)
}

// receiving is the one list of what runs around every request the server
// receives, whichever path decoded it: the SDK's session, or Direct (which
// wraps its calls in the same list). A middleware added to the server any
// other way would be skipped by Direct. Order: the answer guard outermost,
// so a panic anywhere inside becomes an answer.
func receiving(log *slog.Logger, extra []mcp.Middleware) []mcp.Middleware {
	return append([]mcp.Middleware{answer(log), checkResourceURI, revisionFields}, extra...)
}

// setCacheable lets clients cache the fixed lists; everything else (resource
// reads of personal data) stays uncached and private.
func setCacheable(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
	switch req.(type) {
	case *mcp.ListToolsRequest, *mcp.ListResourceTemplatesRequest, *mcp.ListResourcesRequest, *mcp.ListPromptsRequest,
		*mcp.ServerRequest[*mcp.DiscoverParams]:
		c.TTLMs = listTTLMs
	default:
		c.TTLMs = 0
		c.CacheScope = "private"
	}
}

// Version reports the version the binary was built from: the stamped
// release version, the tag of `go install …@vX.Y.Z`, else a development
// version (see internal/version).
func Version() string { return version.Version() }

// SDKLogger is l for the go-sdk's own logging (servers and transports):
// its per-session informational lines pass only when l logs debug, since a
// server should announce itself once, not per client session or per hosted
// request. Warnings and errors always pass.
func SDKLogger(l *slog.Logger) *slog.Logger { return slog.New(sdkHandler{l.Handler()}) }

type sdkHandler struct{ slog.Handler }

func (h sdkHandler) Enabled(ctx context.Context, l slog.Level) bool {
	if l < slog.LevelWarn && !h.Handler.Enabled(ctx, slog.LevelDebug) {
		return false
	}
	return h.Handler.Enabled(ctx, l)
}

func (h sdkHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return sdkHandler{h.Handler.WithAttrs(as)}
}
func (h sdkHandler) WithGroup(n string) slog.Handler { return sdkHandler{h.Handler.WithGroup(n)} }
