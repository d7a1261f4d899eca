// Package server builds the MCP server that exposes a PDPP grant: server
// identity, instructions, capabilities and the tools of package tools.
//
// New is cheap (no I/O, no schema work: tool definitions are precomputed and
// shared), so a hosted deployment can build one server per request.
package server

import (
	"context"
	"log/slog"
	"runtime/debug"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
	Source: "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E" +
		"%3Crect width='16' height='16' rx='3' fill='%23234'/%3E" +
		"%3Cpath d='M5 12V4h3.5a2.5 2.5 0 0 1 0 5H5' fill='none' stroke='%23fff' stroke-width='1.6'/%3E%3C/svg%3E",
	MIMEType: "image/svg+xml",
	Sizes:    []string{"any"},
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
	// Capabilities is the expand-check cache. Share one per credential
	// across servers (hosted mode builds a server per request); nil gives
	// this server its own.
	Capabilities *tools.CapabilityCache
	// FetchTextChars bounds the text of a fetch document in characters;
	// 0 means tools.DefaultFetchTextChars (16,384). Longer text is cut and
	// its continuation named in the document's metadata.
	FetchTextChars int
}

// New returns an MCP server with the PDPP tools registered. It performs no
// I/O.
func New(o Options) *mcp.Server {
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
	s := mcp.NewServer(&mcp.Implementation{
		Name:    name,
		Title:   "PDPP",
		Version: version,
		Icons:   icons,
	}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       slog.New(sdkHandler{logger.Handler()}),
		// Explicit: tools and resource templates; no logging, no prompts,
		// and no listChanged because the lists never change while the
		// process runs.
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{},
			Resources: &mcp.ResourceCapabilities{},
		},
		SetCacheable: setCacheable,
	})
	s.AddReceivingMiddleware(checkResourceURI)
	tools.Register(s, &tools.Env{
		RS:             o.RS,
		ProviderURL:    o.ProviderURL,
		Logger:         logger,
		Capabilities:   o.Capabilities,
		FetchTextChars: o.FetchTextChars,
	})
	return s
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

// Version reports the module version the binary was built from: the
// release tag for `go install …@vX.Y.Z`, else a development version that
// names the VCS revision when the build recorded one.
func Version() string { return versionOnce() }

var versionOnce = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "0.0.0-devel"
	}
	return versionFrom(bi)
})

func versionFrom(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "0.0.0-devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v := "0.0.0-devel+" + rev
	if dirty {
		v += ".dirty"
	}
	return v
}

// sdkHandler keeps the SDK's per-session informational lines out of stderr
// unless debug logging is on: a stdio server should announce itself once, not
// several times per client session. Warnings and errors always pass.
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
