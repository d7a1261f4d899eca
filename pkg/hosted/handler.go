// Package hosted serves the PDPP MCP tools over stateless Streamable HTTP at
// /mcp, for remote MCP hosts that cannot launch a local process.
//
// Every request is authorised before any MCP processing: the bearer is
// verified (Verifier), owner tokens are refused, and the verified client
// bearer is the one the tools send to the configured resource server, and
// only there. There are no sessions: one MCP server per credential and
// origin is built once and reused, each SDK request opens a throwaway
// session on it, and plain tools/call, tools/list and resources/read
// requests skip even that.
//
// [Serve] is the whole gateway: it listens, verifies bearers, serves until
// ctx ends and then drains the calls in flight.
//
//	err := hosted.Serve(ctx, hosted.ServeOptions{
//		Addr:    "127.0.0.1:8080",
//		Handler: hosted.Options{ProviderURL: "https://rs.example", PublicURL: "https://mcp.example"},
//	})
//
// A resource server that serves MCP itself builds the handler with [New]
// and mounts it. The Handler answers /mcp,
// /.well-known/oauth-protected-resource/mcp, /icon.svg, /healthz and
// /readyz; mount it at those paths (or only at /mcp and /icon.svg when the
// resource server serves its own metadata, with [AddMCPHint] in its root
// discovery document).
package hosted

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonkeys"
	"github.com/pdpp-mcp/pdpp-mcp/internal/outbound"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/server"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

// Paths the Handler answers.
const (
	PathMCP      = "/mcp"
	PathMetadata = "/.well-known/oauth-protected-resource/mcp"
	PathIcon     = "/icon.svg"
	PathHealth   = "/healthz"
	PathReady    = "/readyz"
)

// Defaults applied by New for zero options.
const (
	DefaultMaxBodyBytes        int64 = 1 << 20
	DefaultMaxInFlightPerToken       = 32
)

// PackageResolver gives the RS reader for an mcp_package principal (the
// package's member grants). Hosts that resolve packages pass one; without it
// package tokens are refused with 403.
type PackageResolver func(ctx context.Context, p *Principal, token string) (tools.RS, error)

// Options configures New.
type Options struct {
	// ProviderURL is the resource server the tools read from, with the
	// caller's bearer. Required.
	ProviderURL string
	// PublicURL is the origin clients use to reach this handler
	// (https://mcp.example.com); /mcp, the metadata and the icon are
	// advertised under it. Empty: derived from each request's Host, which
	// is accepted only for loopback/private hosts or TrustedHosts.
	PublicURL string
	// ProviderPublicURL is the origin remote clients can open the resource
	// server at, which results cite (document urls, provider_url). Empty:
	// the resource named by the resource server's own protected-resource
	// metadata once read, else ProviderURL when its host is public; a
	// loopback or private provider is never cited (documents cite their
	// pdpp:// handles instead).
	ProviderPublicURL string
	// BlobMaxBytes bounds one blob read; 0 means tools.DefaultBlobMaxBytes.
	BlobMaxBytes int64
	// Verifier decides what each bearer is. Required; wrap it in a
	// CachedVerifier unless it caches itself.
	Verifier Verifier
	// Packages serves mcp_package tokens; nil refuses them.
	Packages PackageResolver
	// TrustedProxies are the peers whose X-Forwarded-Proto/Host are
	// believed. Requests from them skip the SDK's loopback Host check (the
	// proxy is expected to send the public Host).
	TrustedProxies []netip.Prefix
	// TrustedHosts lets a host-derived origin be used for these hosts
	// (exact host, host:port, or *.suffix).
	TrustedHosts []string
	// AllowedOrigins are browser origins accepted besides the public one.
	AllowedOrigins []string
	// AuthorizationServers is advertised in the metadata; empty means the
	// ones the resource server's own metadata names (fetched and cached).
	AuthorizationServers []string
	// AuthorizationServerAtOrigin advertises this handler's own public
	// origin as the authorization server, instead of AuthorizationServers:
	// for an embedding that serves its authorization server beside /mcp on
	// the same origin, whatever host the client used (the demo does).
	AuthorizationServerAtOrigin bool
	// CoreQueryBase is the public URL of the resource server's /v1 API
	// (https://pdpp.example.com/v1), advertised as pdpp_core_query_base.
	// Empty: the one the RS's own metadata names, or ProviderURL+"/v1",
	// whichever is not a private address (see Handler.coreQueryBase);
	// with neither the field is left out.
	CoreQueryBase string
	// HTTPClient is shared by every RS client of the handler (and its
	// metadata fetch), with redirects turned off whatever its own policy;
	// nil gives the handler one of its own.
	HTTPClient *http.Client
	// RSTimeout and RSMaxBodyBytes bound each RS call; 0 means the rs
	// package defaults.
	RSTimeout      time.Duration
	RSMaxBodyBytes int64
	// MaxBodyBytes bounds a request body; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxInFlightPerToken bounds concurrent /mcp requests per bearer
	// (excess gets 429) and, separately, the RS reads they make at once
	// (excess waits), so a batch of calls in one request is bounded too.
	// 0 means DefaultMaxInFlightPerToken.
	MaxInFlightPerToken int
	// Name and Version are serverInfo's; empty means the server defaults.
	Name, Version string
	// Logger receives one access line per request and diagnostics; nil
	// discards.
	Logger *slog.Logger
	// AccessLog turns the per-request access line on.
	AccessLog bool
	// Metrics, when set, is told about every request and RS call.
	Metrics *Metrics
	// DisableDirectCalls sends every request through the SDK's transport,
	// plain tool calls included (see direct.go); for comparisons.
	DisableDirectCalls bool
}

// Handler is the hosted MCP endpoint. It is safe for concurrent use.
type Handler struct {
	o        Options
	provider string
	public   *url.URL // nil: host-derived
	// citation is the configured public origin of the provider ("" when
	// none is configured).
	citation string
	hc       *http.Client
	log      *slog.Logger
	guarded  *mcp.StreamableHTTPHandler
	open     *mcp.StreamableHTTPHandler
	limiter  *limiter
	caps     *tools.CapabilityCache
	servers  *serverCache
	meta     *metadataCache
	// directCalls counts the calls the direct path answered.
	directCalls atomic.Uint64
	// metas remembers the _meta of 2026-07-28 requests already checked.
	metas metaMemo
}

// New validates o and returns a Handler.
func New(o Options) (*Handler, error) {
	if o.Verifier == nil {
		return nil, errors.New("hosted: Options.Verifier is required")
	}
	provider, err := normaliseOrigin(o.ProviderURL, true)
	if err != nil {
		return nil, fmt.Errorf("hosted: provider URL: %w", err)
	}
	h := &Handler{o: o, provider: provider, log: o.Logger}
	if o.CoreQueryBase != "" {
		if h.o.CoreQueryBase, err = normaliseOrigin(o.CoreQueryBase, true); err != nil {
			return nil, fmt.Errorf("hosted: core query base: %w", err)
		}
	}
	if o.ProviderPublicURL != "" {
		if h.citation, err = normaliseOrigin(o.ProviderPublicURL, false); err != nil {
			return nil, fmt.Errorf("hosted: provider public URL: %w", err)
		}
	}
	if o.PublicURL != "" {
		pub, err := normaliseOrigin(o.PublicURL, false)
		if err != nil {
			return nil, fmt.Errorf("hosted: public URL: %w", err)
		}
		h.public, _ = url.Parse(pub)
	}
	if o.HTTPClient != nil {
		// A caller's client may follow redirects; ours never does.
		h.hc = outbound.Wrap(o.HTTPClient)
	} else {
		h.hc = outbound.New(outbound.NewTransport(128, 64))
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.o.MaxBodyBytes <= 0 {
		h.o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if h.o.MaxInFlightPerToken <= 0 {
		h.o.MaxInFlightPerToken = DefaultMaxInFlightPerToken
	}
	sdkLog := server.SDKLogger(h.log)
	mk := func(disableLoopbackCheck bool) *mcp.StreamableHTTPHandler {
		return mcp.NewStreamableHTTPHandler(h.serverFor, &mcp.StreamableHTTPOptions{
			Stateless:                    true,
			JSONResponse:                 true,
			Logger:                       sdkLog,
			DisableLocalhostProtection:   disableLoopbackCheck,
			MaxRequestBodyBytes:          h.o.MaxBodyBytes,
			PropagateRequestCancellation: true,
		})
	}
	h.guarded, h.open = mk(false), mk(true)
	h.limiter = newLimiter(h.o.MaxInFlightPerToken)
	// One expand-check cache for every credential: its keys carry the
	// token hash, so no answer read with one token serves another.
	h.caps = tools.NewCapabilityCache()
	h.servers = newServerCache(DefaultServerCacheEntries)
	h.meta = &metadataCache{h: h, ttl: metadataTTL, now: time.Now}
	return h, nil
}

// normaliseOrigin checks an absolute http(s) URL without credentials, query
// or fragment and returns it without a trailing slash. A public URL must
// also have no path: it is an origin.
func normaliseOrigin(raw string, pathOK bool) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	switch {
	case err != nil:
		return "", errors.New("not a valid URL")
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return "", fmt.Errorf("%q is not an absolute http or https URL", u.Redacted())
	case u.User != nil, u.RawQuery != "", u.Fragment != "":
		return "", fmt.Errorf("%q must not carry credentials, a query or a fragment", u.Redacted())
	case !pathOK && strings.Trim(u.Path, "/") != "":
		return "", fmt.Errorf("%q must be an origin (scheme://host[:port]) without a path", u.Redacted())
	}
	return u.Scheme + "://" + u.Host + strings.TrimRight(u.EscapedPath(), "/"), nil
}

// ServeHTTP routes by path.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	st := &reqState{id: requestID(r)}
	rec.Header().Set("Request-Id", st.id)
	switch r.URL.Path {
	case PathMCP:
		h.serveMCP(rec, r, st)
	case PathMetadata:
		h.serveMetadata(rec, r, st)
	default:
		// Every route answers under the Host and Origin rules of /mcp.
		if _, ok := h.admitRoute(rec, r, st.id, true); !ok {
			st.reason = "host_or_origin"
			break
		}
		switch r.URL.Path {
		case PathIcon:
			serveIcon(rec, r)
		case PathHealth:
			writePlain(rec, http.StatusOK, "ok\n")
		case PathReady:
			h.serveReady(rec, r)
		default:
			writeError(rec, http.StatusNotFound, st.id, apiError{Code: "not_found", Message: "Route " + r.Method + " " + r.URL.Path + " not found"})
		}
	}
	d := time.Since(start)
	if h.o.Metrics != nil {
		h.o.Metrics.observeRequest(r.URL.Path, rec.status, st.tool, d)
	}
	if h.o.AccessLog {
		attrs := []slog.Attr{
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", rec.status),
			slog.Duration("latency", d), slog.Int64("bytes", rec.bytes),
		}
		if st.rpc != "" {
			attrs = append(attrs, slog.String("rpc", st.rpc))
		}
		if st.tool != "" {
			attrs = append(attrs, slog.String("tool", st.tool))
		}
		if st.hash != "" {
			attrs = append(attrs, slog.String("token", st.hash[:12]))
		}
		if st.reason != "" {
			attrs = append(attrs, slog.String("reason", st.reason))
		}
		attrs = append(attrs, slog.String("request_id", st.id))
		h.log.LogAttrs(r.Context(), slog.LevelInfo, "http", attrs...)
	}
}

// reqState is what one request accumulates on its way through.
type reqState struct {
	id     string
	base   string // public origin for this request
	hash   string
	rpc    string
	tool   string
	reason string

	token     string
	principal *Principal
	pkgRS     tools.RS

	once  sync.Once
	built *built
}

type stateKey struct{}

func requestID(r *http.Request) string {
	if id := r.Header.Get("Request-Id"); id != "" && len(id) <= 200 && isPrintable(id) {
		return id
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "req_" + hex.EncodeToString(b)
}

func isPrintable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// serveMCP authorises the request, then hands it to the SDK. Each step
// answers the request itself when it stops it.
func (h *Handler) serveMCP(w *recorder, r *http.Request, st *reqState) {
	open, ok := h.admitOrigin(w, r, st)
	if !ok || r.Method == http.MethodOptions {
		return
	}
	if !h.authorize(w, r, st) {
		return
	}
	release, ok := h.limiter.acquire(st.hash)
	if !ok {
		st.reason = "too_many_in_flight"
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusTooManyRequests, st.id, apiError{Code: "rate_limit_exceeded",
			Message: fmt.Sprintf("More than %d requests with this token are in flight; retry when one finishes", h.o.MaxInFlightPerToken)})
		return
	}
	defer release()

	if r.Method == http.MethodPost {
		body, ok := h.readBody(w, r, st)
		if !ok {
			return
		}
		var dup string
		var repeated bool
		st.rpc, st.tool, dup, repeated = rpcNames(body)
		if repeated && gjson.ValidBytes(body) {
			// The log and metrics would name one method while the SDK
			// ran another: refuse rather than guess.
			st.reason, st.rpc, st.tool = "duplicate_key", "", ""
			writeJSONRPCError(w, http.StatusBadRequest, jsonrpcInvalidRequest,
				"Invalid request: the key "+strconv.Quote(boundText(dup, 64))+" appears twice in one message; send each key once")
			return
		}
		if h.serveDirect(w, r, st, body, open) {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	r = r.WithContext(context.WithValue(r.Context(), stateKey{}, st))
	if open {
		h.open.ServeHTTP(w, r)
		return
	}
	h.guarded.ServeHTTP(w, r)
}

// admitOrigin resolves the public origin of r and checks its Origin header,
// answering CORS preflights. open says the SDK's loopback Host check is to
// be skipped (a trusted proxy sent the request).
func (h *Handler) admitOrigin(w *recorder, r *http.Request, st *reqState) (open, ok bool) {
	base, open, herr := h.resolveOrigin(r)
	if herr != nil {
		st.reason = "host"
		writeError(w, http.StatusMisdirectedRequest, st.id, *herr)
		return false, false
	}
	st.base = base
	w.Header().Set("Link", "<"+base+PathIcon+`>; rel="icon"; type="image/svg+xml"`)
	if !h.originAllowed(r, base) {
		st.reason = "origin"
		writeError(w, http.StatusForbidden, st.id, apiError{Code: "forbidden_origin",
			Message: "Origin " + strconv.Quote(r.Header.Get("Origin")) + " is not allowed to call this MCP endpoint"})
		return false, false
	}
	if o := r.Header.Get("Origin"); o != "" {
		// An allowed browser origin may read the answer, the challenge
		// included.
		w.Header().Set("Access-Control-Allow-Origin", o)
		w.Header().Set("Access-Control-Expose-Headers", "WWW-Authenticate, Link, Request-Id, Retry-After")
		w.Header().Add("Vary", "Origin")
	}
	if r.Method == http.MethodOptions {
		// CORS preflight carries no credentials; it reveals nothing.
		w.Header().Set("Access-Control-Allow-Methods", "POST")
		w.Header().Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Request-Id")
		w.Header().Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
	}
	return open, true
}

// authorize verifies the bearer and decides from its kind what serves it:
// the provider's RS for a client token, the package resolver for a package
// token. It sets st.token and st.principal (and st.pkgRS) when it admits.
func (h *Handler) authorize(w *recorder, r *http.Request, st *reqState) bool {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	token = strings.TrimSpace(token)
	if !ok || token == "" {
		st.reason = "no_bearer"
		h.refuse(w, st, errMissingBearer)
		return false
	}
	st.hash = TokenHash(token)
	p, err := h.o.Verifier.Verify(r.Context(), token)
	if err != nil {
		var ae *AuthError
		if errors.As(err, &ae) {
			st.reason = ae.Code
			h.refuse(w, st, ae)
			return false
		}
		if r.Context().Err() != nil {
			st.reason = "canceled"
			w.status = 499
			return false
		}
		st.reason = "verifier_unavailable"
		h.log.Warn("could not verify a bearer", "token", st.hash[:12], "error", err, "request_id", st.id)
		msg := "The resource server could not confirm this token right now; retry shortly"
		if loc, ok := redirectedTo(err); ok {
			msg = "The token verifier answered with a redirect to " + loc +
				", which is not followed: a bearer is only ever sent to the configured address. The operator must configure the verifier's final URL"
		}
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, st.id, apiError{Code: "verifier_unavailable", Message: msg})
		return false
	}
	if !h.audienceOK(p, st.base) {
		st.reason = "audience"
		h.refuse(w, st, &AuthError{Status: http.StatusUnauthorized, Code: "invalid_token",
			Message: "This token was issued for another resource: every audience it names must be " + st.base + PathMCP +
				" or the resource server behind it, and it names another. Obtain a token for " + st.base + PathMCP + " alone."})
		return false
	}
	switch p.Kind {
	case KindClient:
	case KindPackage:
		if !h.resolvePackage(w, r, st, p, token) {
			return false
		}
	default:
		st.reason = "kind_" + string(p.Kind)
		writeError(w, http.StatusForbidden, st.id, apiError{Code: "permission_error",
			Message: "MCP requires a grant-scoped client or MCP package token. Owner-agent bearers are REST/control-plane credentials; use owner-agent REST onboarding for local owner automation."})
		return false
	}
	st.token, st.principal = token, p
	return true
}

// resolvePackage sets st.pkgRS to the package's reader, or refuses.
func (h *Handler) resolvePackage(w *recorder, r *http.Request, st *reqState, p *Principal, token string) bool {
	if h.o.Packages == nil {
		st.reason = "package_token"
		writeError(w, http.StatusForbidden, st.id, apiError{Code: "package_tokens_unsupported",
			Message: "This MCP gateway serves grant-scoped client tokens only. MCP package tokens are served by the provider's own /mcp endpoint; connect to that, or authorize a single grant (client token) for this endpoint."})
		return false
	}
	var err error
	if st.pkgRS, err = h.o.Packages(r.Context(), p, token); err != nil {
		var ae *AuthError
		if errors.As(err, &ae) {
			st.reason = ae.Code
			h.refuse(w, st, ae)
			return false
		}
		st.reason = "package_unavailable"
		writeError(w, http.StatusServiceUnavailable, st.id, apiError{Code: "package_unavailable", Message: "The grant package could not be resolved right now; retry shortly"})
		return false
	}
	return true
}

// readBody reads a POST body within MaxBodyBytes.
func (h *Handler) readBody(w *recorder, r *http.Request, st *reqState) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.o.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			st.reason = "body_too_large"
			writeError(w, http.StatusRequestEntityTooLarge, st.id, apiError{Code: "request_entity_too_large",
				Message: fmt.Sprintf("Request body larger than %d bytes", h.o.MaxBodyBytes)})
			return nil, false
		}
		st.reason = "body_unreadable"
		writeError(w, http.StatusBadRequest, st.id, apiError{Code: "invalid_request", Message: "Request body could not be read"})
		return nil, false
	}
	return body, true
}

// rpcNames reads the JSON-RPC method and, for tools/call, the tool name, for
// the access log and metrics, and reports a key that a message, or its
// params, holds twice (repeated; dup is the key). The SDK's decoder keeps
// the last of duplicate keys and matches them exactly (after unescaping),
// which is how keys are read here too; nothing else of the body is looked
// at.
func rpcNames(body []byte) (method, tool, dup string, repeated bool) {
	b := bytes.TrimSpace(body)
	if len(b) > 0 && b[0] == '[' {
		gjson.ParseBytes(b).ForEach(func(_, m gjson.Result) bool {
			_, _, dup, repeated = messageNames(m)
			return !repeated
		})
		return "batch", "", dup, repeated
	}
	method, tool, dup, repeated = messageNames(gjson.ParseBytes(b))
	if len(method) > 64 {
		method = method[:64]
	}
	if len(tool) > 64 {
		tool = tool[:64]
	}
	return method, tool, dup, repeated
}

// messageNames reads one message's method and tool name, and the first key
// it or its params repeats.
func messageNames(m gjson.Result) (method, tool, dup string, repeated bool) {
	var params gjson.Result
	dup, repeated = jsonkeys.Each(m, func(k string, v gjson.Result) {
		switch k {
		case "method":
			method = v.Str
		case "params":
			params = v
		}
	})
	if !repeated {
		dup, repeated = jsonkeys.Each(params, func(k string, v gjson.Result) {
			if k == "name" {
				tool = v.Str
			}
		})
		if repeated {
			dup = "params." + dup
		}
	}
	if method != "tools/call" {
		tool = ""
	}
	return method, tool, dup, repeated
}

// serverFor is the SDK's getServer (asked twice per POST): the server of
// this request's credential and origin, reused across its requests.
func (h *Handler) serverFor(r *http.Request) *mcp.Server {
	st, _ := r.Context().Value(stateKey{}).(*reqState)
	if st == nil || st.principal == nil {
		return nil // not reachable: serveMCP authorises first
	}
	if b := h.builtFor(st); b != nil {
		return b.srv
	}
	return nil
}

// builtFor is the server (and direct tool entry) of an authorised request.
func (h *Handler) builtFor(st *reqState) *built {
	st.once.Do(func() {
		if st.pkgRS != nil {
			// Package readers are resolved per request; do not keep them.
			st.built = h.newServer(st)
			return
		}
		st.built = h.servers.get(serverKey{st.hash, st.base}, func() *built { return h.newServer(st) })
	})
	return st.built
}

func (h *Handler) newServer(st *reqState) *built {
	var reader tools.RS = st.pkgRS
	if reader == nil {
		token := st.token
		c, err := rs.New(rs.Options{
			BaseURL:      h.provider,
			Token:        func() string { return token },
			HTTPClient:   h.hc,
			Timeout:      h.o.RSTimeout,
			MaxBodyBytes: h.o.RSMaxBodyBytes,
			Logger:       h.log,
		})
		if err != nil {
			// The provider URL was validated in New.
			h.log.Error("build RS client", "error", err)
			return nil
		}
		reader = c
		if h.o.Metrics != nil {
			reader = h.o.Metrics.wrapRS(c)
		}
	}
	reader = boundedRS{next: reader, l: h.limiter, key: st.hash}
	srv, direct := server.NewWithDirect(server.Options{
		RS:            reader,
		ProviderURL:   h.provider,
		Name:          h.o.Name,
		Version:       h.o.Version,
		Logger:        h.log,
		Icons:         []mcp.Icon{{Source: st.base + PathIcon, MIMEType: "image/svg+xml", Sizes: []string{"any"}}},
		Mode:          tools.ModeHosted,
		CitationURL:   h.citationURL(),
		BlobMaxBytes:  h.o.BlobMaxBytes,
		Capabilities:  h.caps,
		CredentialKey: func() string { return st.hash },
	})
	return &built{srv: srv, direct: direct}
}

// refuse answers a refused bearer: 401 with the RFC 9728 challenge, or 403.
func (h *Handler) refuse(w *recorder, st *reqState, ae *AuthError) {
	e := apiError{Code: ae.Code, Message: ae.Message}
	if ae.Status == http.StatusUnauthorized {
		prm := st.base + PathMetadata
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+quoteEscape(prm)+`"`)
		e.ResourceMetadata = prm
		e.NextStep = "Fetch error.resource_metadata, then obtain a grant-scoped client token from one of its authorization_servers for the resource it names; owner tokens are refused."
	}
	writeError(w, ae.Status, st.id, e)
}

func quoteEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}

// apiError is the PDPP error object, in the reference's key order.
type apiError struct {
	Code             string `json:"code"`
	Message          string `json:"message"`
	Type             string `json:"type"`
	ResourceMetadata string `json:"resource_metadata,omitempty"`
	NextStep         string `json:"next_step,omitempty"`
	RequestID        string `json:"request_id"`
}

// errorType derives the error type from the status, as the RS does.
func errorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 410:
		return "gone_error"
	case 413:
		return "request_entity_too_large_error"
	case 429:
		return "rate_limit_error"
	}
	return "api_error"
}

func writeError(w http.ResponseWriter, status int, id string, e apiError) {
	e.Type = errorType(status)
	e.RequestID = id
	b, _ := json.Marshal(struct {
		Error apiError `json:"error"`
	}{e})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func writePlain(w http.ResponseWriter, status int, s string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, s)
}

// recorder notes the status and size of the answer for the access log.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// citationURL is the provider origin results cite: the configured one, the
// resource the RS's own metadata publishes (when already read; building a
// server never waits for it), or the provider URL itself, each only when
// its host is public.
func (h *Handler) citationURL() string {
	if h.citation != "" {
		return h.citation
	}
	h.meta.mu.Lock()
	body := h.meta.body
	h.meta.mu.Unlock()
	for _, c := range []string{gjson.GetBytes(body, "resource").Str, h.provider} {
		u, err := url.Parse(c)
		if c == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || isPrivateHost(u.Hostname()) {
			continue
		}
		return u.Scheme + "://" + u.Host + strings.TrimRight(u.EscapedPath(), "/")
	}
	return ""
}

// redirectedTo returns where a redirect that was not followed pointed
// (quoted, without its query), when err is one: from the introspection
// client or metadata fetch, or from an RS read.
func redirectedTo(err error) (string, bool) {
	var re *outbound.RedirectError
	if errors.As(err, &re) {
		return re.Location, true
	}
	var te *rs.TransportError
	if errors.As(err, &te) && te.Code == rs.CodeRedirect {
		return te.Location, true
	}
	return "", false
}

// audienceOK reports whether p may be served at the public origin base: a
// verifier that names no audience leaves the check to the resource server
// (which sees the same bearer on every read); one that names any must name
// only this resource, each entry being this server's /mcp or the provider,
// itself or its own /mcp, compared without a trailing slash. A token also
// meant for another server is not for this one (RFC 8707, RFC 9068), and
// a stated audience that names nothing (an empty list, a non-string)
// names no resource of ours either.
func (h *Handler) audienceOK(p *Principal, base string) bool {
	if p.Audience == nil {
		return true
	}
	if len(p.Audience) == 0 {
		return false
	}
	for _, a := range p.Audience {
		switch strings.TrimRight(a, "/") {
		case base + PathMCP, h.provider, h.provider + PathMCP:
		default:
			return false
		}
	}
	return true
}

// jsonrpcInvalidRequest is JSON-RPC's code for a message that is not a
// valid request.
const jsonrpcInvalidRequest = -32600

// writeJSONRPCError answers a request the gateway refuses before the SDK
// sees it with a JSON-RPC error (id null: which id the client meant is not
// known).
func writeJSONRPCError(w http.ResponseWriter, status, code int, msg string) {
	b, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
