package hosted

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
	"golang.org/x/sync/singleflight"

	"github.com/pdpp-mcp/pdpp-mcp/internal/outbound"
)

// Metadata cache timings.
const (
	// metadataTTL is how long the RS's metadata is reused.
	metadataTTL = 5 * time.Minute
	// metadataFailTTL is how long a failed fetch is remembered: the route
	// is unauthenticated, so without it a hung RS would cost one fetch
	// per request.
	metadataFailTTL = 5 * time.Second
	// metadataFetchTimeout bounds one fetch, and so the wait of every
	// request that shares it.
	metadataFetchTimeout = 5 * time.Second
)

// metadataCache keeps the resource server's own protected-resource
// metadata, from which the /mcp document takes its authorization servers,
// name, core query base and MCP authorization hints. Concurrent misses
// share one fetch, which runs without the lock held, so no request waits
// longer than one fetch; a failure is remembered for metadataFailTTL, during
// which the last good copy (if any) is served.
type metadataCache struct {
	h     *Handler
	ttl   time.Duration
	now   func() time.Time
	group singleflight.Group

	mu      sync.Mutex
	body    []byte
	fetched time.Time
	err     error
	failed  time.Time
}

// rootMetadata returns the RS's metadata: the cached copy while fresh, else
// the result of one shared fetch. When the fetch fails it returns the
// previous copy if there is one, else the error.
func (m *metadataCache) rootMetadata(ctx context.Context) ([]byte, error) {
	m.mu.Lock()
	now := m.now()
	body, fetched, lastErr, failed := m.body, m.fetched, m.err, m.failed
	m.mu.Unlock()
	switch {
	case body != nil && now.Sub(fetched) < m.ttl:
		return body, nil
	case lastErr != nil && now.Sub(failed) < metadataFailTTL:
		if body != nil {
			return body, nil
		}
		return nil, lastErr
	}
	ch := m.group.DoChan("root", func() (any, error) {
		// Shared by every waiting request, so no one request's
		// cancellation ends it; fetchRoot bounds it.
		b, err := m.h.fetchRoot(context.WithoutCancel(ctx))
		m.mu.Lock()
		if err == nil {
			m.body, m.fetched, m.err = b, m.now(), nil
		} else {
			m.err, m.failed = err, m.now()
		}
		m.mu.Unlock()
		if err != nil {
			m.h.log.Warn("could not read the resource server's protected-resource metadata", "error", err)
		}
		return b, err
	})
	select {
	case r := <-ch:
		if r.Err == nil {
			return r.Val.([]byte), nil
		}
		if body != nil {
			return body, nil
		}
		return nil, r.Err
	case <-ctx.Done():
		return body, ctx.Err()
	}
}

func (h *Handler) fetchRoot(ctx context.Context) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, metadataFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.provider+"/.well-known/oauth-protected-resource", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := h.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if err := outbound.Redirect(resp, "the resource server's metadata route"); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || !gjson.ValidBytes(b) {
		return nil, &http.ProtocolError{ErrorString: "resource server metadata answered HTTP " + resp.Status}
	}
	return b, nil
}

// Metadata is the RFC 9728 document for the /mcp resource. Field order is
// fixed for stable output.
type Metadata struct {
	Resource                string          `json:"resource"`
	ResourceName            string          `json:"resource_name,omitempty"`
	AuthorizationServers    []string        `json:"authorization_servers"`
	BearerMethodsSupported  []string        `json:"bearer_methods_supported"`
	PDPPCoreQueryBase       string          `json:"pdpp_core_query_base,omitempty"`
	PDPPTokenKindsSupported []string        `json:"pdpp_token_kinds_supported"`
	PDPPProviderConnectVer  string          `json:"pdpp_provider_connect_version,omitempty"`
	PDPPAgentDiscovery      *AgentDiscovery `json:"pdpp_agent_discovery,omitempty"`
}

// AgentDiscovery carries the MCP hint of the metadata.
type AgentDiscovery struct {
	Advisory bool     `json:"advisory"`
	MCP      *MCPHint `json:"mcp"`
}

// MCPHint tells agents where the grant-scoped MCP endpoint is.
type MCPHint struct {
	Endpoint      string          `json:"endpoint"`
	Transport     string          `json:"transport"`
	NoOwnerToken  bool            `json:"no_owner_token"`
	SetupIntent   string          `json:"setup_intent"`
	ToolSurface   string          `json:"tool_surface"`
	Authorization json.RawMessage `json:"authorization,omitempty"`
}

// NewMCPHint returns the hint for an MCP endpoint at base+"/mcp", with the
// RS's authorization block (raw JSON) when there is one.
func NewMCPHint(base string, authorization json.RawMessage) *MCPHint {
	return &MCPHint{
		Endpoint: strings.TrimRight(base, "/") + PathMCP, Transport: "streamable_http", NoOwnerToken: true,
		SetupIntent: "grant_scoped_read", ToolSurface: "profile_free_normal_read", Authorization: authorization,
	}
}

// AddMCPHint sets pdpp_agent_discovery.mcp in an embedding RS's root
// metadata document so agents find /mcp, leaving every other field
// (pdpp_core_query_base stays at /v1) as it is.
func AddMCPHint(doc map[string]any, base string) {
	ad, _ := doc["pdpp_agent_discovery"].(map[string]any)
	if ad == nil {
		ad = map[string]any{"advisory": true}
		doc["pdpp_agent_discovery"] = ad
	}
	ad["mcp"] = NewMCPHint(base, nil)
}

// metadataFor builds the document for the public origin base. Without
// configured authorization servers the RS's metadata is needed: an error
// then means there is no document to give.
func (h *Handler) metadataFor(ctx context.Context, base string) (*Metadata, error) {
	raw, err := h.meta.rootMetadata(ctx)
	if err != nil && len(h.o.AuthorizationServers) == 0 && !h.o.AuthorizationServerAtOrigin {
		return nil, err
	}
	root := gjson.ParseBytes(raw)
	md := &Metadata{
		Resource:                base + PathMCP,
		AuthorizationServers:    h.o.AuthorizationServers,
		BearerMethodsSupported:  []string{"header"},
		PDPPCoreQueryBase:       h.coreQueryBase(base, root.Get("pdpp_core_query_base").Str),
		PDPPTokenKindsSupported: []string{"client", "mcp_package"},
		PDPPProviderConnectVer:  root.Get("pdpp_provider_connect_version").Str,
	}
	if h.o.AuthorizationServerAtOrigin {
		md.AuthorizationServers = []string{base}
	}
	if len(md.AuthorizationServers) == 0 {
		for _, a := range root.Get("authorization_servers").Array() {
			if a.Type == gjson.String {
				md.AuthorizationServers = append(md.AuthorizationServers, a.Str)
			}
		}
	}
	if md.AuthorizationServers == nil {
		md.AuthorizationServers = []string{}
	}
	if name := root.Get("resource_name").Str; name != "" {
		md.ResourceName = strings.TrimSuffix(name, " Resource Server") + " Hosted MCP Resource"
	}
	var authz json.RawMessage
	// The RS's authorization block names its own authorization server's
	// endpoints: not the one advertised when that is this origin.
	if a := root.Get("pdpp_agent_discovery.mcp.authorization"); a.IsObject() && !h.o.AuthorizationServerAtOrigin {
		// Resource indicators name the RS's /mcp; re-point them at ours.
		authz = json.RawMessage(strings.ReplaceAll(a.Raw, `"`+h.provider+PathMCP+`"`, `"`+base+PathMCP+`"`))
	}
	md.PDPPAgentDiscovery = &AgentDiscovery{Advisory: true, MCP: NewMCPHint(base, authz)}
	return md, nil
}

// coreQueryBase is the /v1 base the metadata advertises: the configured
// one, else the one the RS's own metadata names, else the provider's /v1.
// The document is public, so a base on a private address (loopback, RFC
// 1918, a single-label or cluster-internal name) is only published to a
// public origin that is private too; otherwise the field is left out
// rather than tell the world where the RS sits.
func (h *Handler) coreQueryBase(base, fromRS string) string {
	if h.o.CoreQueryBase != "" {
		return h.o.CoreQueryBase
	}
	pub, err := url.Parse(base)
	privateOK := err == nil && internalHost(pub.Hostname())
	for _, c := range []string{fromRS, h.provider + "/v1"} {
		u, err := url.Parse(c)
		if c == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			continue
		}
		if privateOK || !internalHost(u.Hostname()) {
			return c
		}
	}
	return ""
}

// internalHost reports a host that only a private network can reach: a
// private or loopback address, or a name with no dot or under a suffix
// that is never public DNS.
func internalHost(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if isPrivateHost(host) || !strings.Contains(host, ".") {
		return true
	}
	for _, s := range []string{".internal", ".svc", ".cluster.local", ".lan", ".home.arpa", ".intranet", ".corp"} {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}

func (h *Handler) serveMetadata(w *recorder, r *http.Request, st *reqState) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodOptions:
		w.Header().Set("Access-Control-Allow-Methods", "GET, OPTIONS")
		w.Header().Set("Access-Control-Allow-Headers", "MCP-Protocol-Version")
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		w.Header().Set("Allow", "GET, HEAD, OPTIONS")
		writeError(w, http.StatusMethodNotAllowed, st.id, apiError{Code: "method_not_allowed", Message: "Use GET"})
		return
	}
	base, ok := h.admitRoute(w, r, st.id, false)
	if !ok {
		st.reason = "host_or_origin"
		return
	}
	md, err := h.metadataFor(r.Context(), base)
	if err != nil {
		st.reason = "metadata_unavailable"
		msg := "The resource server's own metadata could not be read, so the authorization servers for this resource are not known right now; retry shortly"
		if loc, ok := redirectedTo(err); ok {
			msg = "The resource server's metadata route answered with a redirect to " + loc +
				", which is not followed; the operator must point --provider-url at the resource server itself"
		}
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, st.id, apiError{Code: "verifier_unavailable", Message: msg})
		return
	}
	b, _ := json.Marshal(md)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(append(b, '\n'))
	}
}

// serveReady answers 200 when the resource server answers its metadata
// route (no bearer needed), else 503.
func (h *Handler) serveReady(w *recorder, r *http.Request) {
	if _, err := h.fetchRoot(r.Context()); err != nil {
		writePlain(w, http.StatusServiceUnavailable, "resource server not reachable\n")
		return
	}
	writePlain(w, http.StatusOK, "ok\n")
}

// iconSVG is the hosted serverInfo icon: the same mark stdio sends as a data
// URI, served as a file because hosted clients fetch icons by URL.
const iconSVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#234"/><path d="M5 12V4h3.5a2.5 2.5 0 0 1 0 5H5" fill="none" stroke="#fff" stroke-width="1.6"/></svg>
`

func serveIcon(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writePlain(w, http.StatusMethodNotAllowed, "method not allowed\n")
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "public, max-age=86400")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = io.WriteString(w, iconSVG)
	}
}
