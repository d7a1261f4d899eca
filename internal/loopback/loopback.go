// Package loopback holds the project's one rule for whether a host name
// names this machine. It decides when an http:// provider URL may carry a
// bearer, when the hosted gateway may skip --public-url, which Host and
// Origin values count as local, and where the demo authorization server
// accepts a plain http redirect URI.
//
// The hosted handler's fast path keeps its own, narrower copy of the MCP
// SDK's rule, because it must refuse exactly the Host headers the SDK
// refuses; everything else uses Host.
package loopback

import (
	"net/netip"
	"strings"
)

// Host reports whether host (a name or an IP literal, with or without
// brackets, without a port) is a loopback host: "localhost", a name under
// ".localhost" (which resolvers keep on this machine), or a loopback
// address, IPv4-mapped ones included. Case does not matter.
func Host(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}
