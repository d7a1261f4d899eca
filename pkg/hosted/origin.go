package hosted

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/pdpp-mcp/pdpp-mcp/internal/loopback"
)

// resolveOrigin returns the public origin to advertise for r, and whether the
// SDK's loopback Host check can be skipped for it (a trusted proxy, the
// configured public host, or an allowlisted host). A host-derived origin (no public URL, or a
// loopback public URL rebased onto a proxy's forwarded host) is accepted only
// for a loopback/private host or an allowlisted one: otherwise an attacker
// choosing the Host header would choose where clients are sent for
// authorization.
func (h *Handler) resolveOrigin(r *http.Request) (string, bool, *apiError) {
	viaProxy := h.fromTrustedProxy(r)
	fwdProto, fwdHost := "", ""
	if viaProxy {
		fwdProto = strings.ToLower(firstValue(r.Header.Get("X-Forwarded-Proto")))
		fwdHost = firstValue(r.Header.Get("X-Forwarded-Host"))
		if fwdProto != "http" && fwdProto != "https" {
			fwdProto = ""
		}
	}
	if h.public != nil && !(loopback.Host(h.public.Hostname()) && fwdHost != "") {
		// A request for the configured public host cannot be a DNS
		// rebinding attack, so the SDK's loopback Host check may let it in.
		return h.public.Scheme + "://" + h.public.Host, viaProxy || strings.EqualFold(r.Host, h.public.Host), nil
	}
	host := r.Host
	if fwdHost != "" {
		host = fwdHost
	}
	proto := "http"
	switch {
	case fwdProto != "":
		proto = fwdProto
	case r.TLS != nil:
		proto = "https"
	}
	if !validHost(host) || !(isPrivateHost(hostOnly(host)) || h.hostAllowed(host)) {
		return "", viaProxy, &apiError{Code: "misdirected_request",
			Message: "Host-derived metadata requires a local/private request host or a trusted-hosts allowlist; configure the public URL"}
	}
	// An allowlisted host was named by the operator: the SDK's loopback
	// Host check would refuse it behind a same-host proxy.
	return proto + "://" + strings.ToLower(host), viaProxy || h.hostAllowed(host), nil
}

func firstValue(v string) string {
	v, _, _ = strings.Cut(v, ",")
	return strings.TrimSpace(v)
}

// validHost accepts host[:port] with no path, userinfo or spaces.
func validHost(h string) bool {
	if h == "" || strings.ContainsAny(h, "/\\@ \t\"<>") {
		return false
	}
	u, err := url.Parse("http://" + h)
	return err == nil && u.Host == h
}

func hostOnly(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		return host
	}
	return strings.Trim(h, "[]")
}

func (h *Handler) fromTrustedProxy(r *http.Request) bool {
	if len(h.o.TrustedProxies) == 0 {
		return false
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	a := ap.Addr().Unmap()
	for _, p := range h.o.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func (h *Handler) hostAllowed(hostport string) bool {
	hostport = strings.ToLower(hostport)
	host := hostOnly(hostport)
	for _, t := range h.o.TrustedHosts {
		t = strings.ToLower(strings.TrimSpace(t))
		if u, err := url.Parse(t); err == nil && u.Host != "" {
			t = u.Host
		}
		switch {
		case t == "":
		case strings.HasPrefix(t, "*."):
			if strings.HasSuffix(host, t[1:]) {
				return true
			}
		case t == hostport || t == host:
			return true
		}
	}
	return false
}

// isPrivateHost: loopback, .local names, unspecified, RFC 1918, link-local
// and unique-local addresses.
func isPrivateHost(host string) bool {
	host = strings.ToLower(host)
	if loopback.Host(host) || strings.HasSuffix(host, ".local") {
		return true
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	a = a.Unmap()
	return a.IsUnspecified() || a.IsPrivate() || a.IsLinkLocalUnicast()
}

// originAllowed: no Origin (non-browser clients), the public origin, an
// allowlisted one, or a loopback origin when the public origin is loopback.
func (h *Handler) originAllowed(r *http.Request, base string) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	o = strings.ToLower(strings.TrimRight(o, "/"))
	if o == strings.ToLower(base) {
		return true
	}
	for _, a := range h.o.AllowedOrigins {
		if strings.EqualFold(strings.TrimRight(strings.TrimSpace(a), "/"), o) {
			return true
		}
	}
	ou, err := url.Parse(o)
	bu, err2 := url.Parse(base)
	return err == nil && err2 == nil && loopback.Host(bu.Hostname()) && loopback.Host(ou.Hostname())
}

// admitRoute applies the Host and Origin rules of /mcp to a route the SDK
// does not serve (metadata, icon, health, the routes of
// ServeOptions.Mount), so that a page on another site, or one that
// rebinds its own name to this machine, gets no more from them than from
// /mcp: the Host must give a usable public origin (resolveOrigin); on a
// loopback listener it must be a loopback one unless it is the configured
// public host or a trusted proxy sent the request (the SDK's DNS-rebinding
// rule); and a browser Origin must be allowed. A request without a Host
// (an HTTP/1.0 health probe; browsers always send one) passes when
// hostless is set, for the routes that derive nothing from the Host.
// It answers a refused request itself and returns the public origin.
func (h *Handler) admitRoute(w http.ResponseWriter, r *http.Request, id string, hostless bool) (string, bool) {
	if hostless && r.Host == "" {
		return "", true
	}
	base, open, herr := h.resolveOrigin(r)
	if herr != nil {
		writeError(w, http.StatusMisdirectedRequest, id, *herr)
		return "", false
	}
	if !open {
		if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil && isLoopback(la.String()) && !isLoopback(r.Host) {
			writeError(w, http.StatusForbidden, id, apiError{Code: "forbidden_host",
				Message: "Host " + strconv.Quote(boundText(r.Host, 100)) + " is not served on this loopback address"})
			return "", false
		}
	}
	if !h.originAllowed(r, base) {
		writeError(w, http.StatusForbidden, id, apiError{Code: "forbidden_origin",
			Message: "Origin " + strconv.Quote(boundText(r.Header.Get("Origin"), 100)) + " is not allowed to call this server"})
		return "", false
	}
	return base, true
}

// mountedOrigin is the context key under which a mounted route finds the
// public origin the gateway resolved for its request.
type mountedOrigin struct{}

// RequestOrigin is the public origin (scheme://host[:port]) the gateway
// resolved for r, a request it passed to a route of ServeOptions.Mount;
// "" for any other request. An authorization server mounted beside /mcp
// names itself by it, so its issuer is the origin the protected-resource
// metadata advertises.
func RequestOrigin(r *http.Request) string {
	o, _ := r.Context().Value(mountedOrigin{}).(string)
	return o
}

// withMounted serves the routes of mounted beside h: a request for one of
// them passes admitRoute first, every other request goes to h.
func (h *Handler) withMounted(mounted *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mounted.Handler(r); pattern == "" {
			h.ServeHTTP(w, r)
			return
		}
		base, ok := h.admitRoute(w, r, requestID(r), false)
		if !ok {
			return
		}
		mounted.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), mountedOrigin{}, base)))
	})
}
