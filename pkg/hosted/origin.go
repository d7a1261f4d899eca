package hosted

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
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
