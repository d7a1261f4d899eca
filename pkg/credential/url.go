package credential

import (
	"net"
	"net/url"
	"strconv"
	"strings"
)

// NormalizeProviderURL returns the canonical form of a provider URL, the one
// `pdpp connect` keys its cache by and the adapter uses as the RS base URL:
//
//   - a value without "://" gets "https://" in front;
//   - only http and https are accepted;
//   - user info, query and fragment are dropped;
//   - the host is lower-cased and a default port (80, 443) is dropped;
//   - dot segments are resolved and trailing slashes removed, so a bare "/"
//     path becomes empty.
//
// "pdpp.example.com/" becomes "https://pdpp.example.com". The path is kept:
// a resource server mounted under a prefix keeps it.
//
// Hostnames must be ASCII (pass the punycode form of an internationalised
// name): `pdpp connect` keys the cache by the punycode host, and translating it
// here would need a dependency the adapter does not otherwise carry.
func NormalizeProviderURL(raw string) (string, error) {
	v := strings.TrimSpace(raw)
	if v == "" {
		return "", errNoProviderURL()
	}
	shown := redactUserinfo(v)
	if !strings.Contains(v, "://") {
		v = "https://" + v
	}
	u, err := url.Parse(v)
	if err != nil {
		return "", errInvalidProviderURL(shown, "not a valid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", errInvalidProviderURL(shown, "only http and https are supported")
	}
	if u.Opaque != "" {
		return "", errInvalidProviderURL(shown, "not a valid URL")
	}
	host, err := normalizeHost(u)
	if err != nil {
		return "", errInvalidProviderURL(shown, err.Error())
	}
	p := u.EscapedPath()
	if p != "" {
		// Resolving the path against itself removes "." and ".." segments the
		// way a browser URL parser does.
		p = u.ResolveReference(&url.URL{Path: u.Path, RawPath: u.RawPath}).EscapedPath()
	}
	p = strings.TrimRight(p, "/")
	return u.Scheme + "://" + host + p, nil
}

type hostError string

func (e hostError) Error() string { return string(e) }

// normalizeHost returns host[:port] lower-cased, with a default port removed.
func normalizeHost(u *url.URL) (string, error) {
	name := strings.ToLower(u.Hostname())
	port := u.Port()
	if name == "" {
		return "", hostError("no host")
	}
	if strings.HasPrefix(u.Host, "[") {
		ip := net.ParseIP(name)
		if ip == nil || !strings.Contains(name, ":") {
			return "", hostError("invalid IPv6 address")
		}
		name = "[" + name + "]"
	} else {
		for i := 0; i < len(name); i++ {
			c := name[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
				if c >= 0x80 {
					return "", hostError("non-ASCII host name (use its punycode form, xn--…)")
				}
				return "", hostError("invalid character in host name")
			}
		}
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 0 || n > 65535 {
			return "", hostError("port out of range")
		}
		port = strconv.Itoa(n) // "08080" and "8080" are the same port
		if u.Scheme == "http" && n == 80 || u.Scheme == "https" && n == 443 {
			port = ""
		}
	}
	host := name
	if port != "" {
		host += ":" + port
	}
	// The host names the cache file (HostKey + ".json"), and a file name has
	// at most 255 bytes.
	if len(host) > maxHost {
		return "", hostError("host (with its port) longer than 250 characters")
	}
	return host, nil
}

// maxHost keeps <host>.json within the 255-byte file name limit.
const maxHost = 255 - len(".json")

// redactUserinfo hides anything before an '@' in the authority part so an error
// message never repeats a password typed into the URL.
func redactUserinfo(v string) string {
	start := 0
	if i := strings.Index(v, "://"); i >= 0 {
		start = i + 3
	}
	end := len(v)
	if i := strings.IndexAny(v[start:], "/?#"); i >= 0 {
		end = start + i
	}
	if at := strings.LastIndexByte(v[start:end], '@'); at >= 0 {
		return v[:start] + "…@" + v[start+at+1:]
	}
	return v
}

// HostKey is the cache file stem for a normalised provider URL: the URL's host
// (name and port) with every character outside [A-Za-z0-9.-] replaced by '_'.
// "http://localhost:7662" gives "localhost_7662". The path is not part of the
// key, so two providers on one host share a cache file, as with `pdpp connect`.
func HostKey(providerURL string) string {
	u, err := url.Parse(providerURL)
	if err != nil {
		return ""
	}
	h := []byte(u.Host)
	for i, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			h[i] = '_'
		}
	}
	return string(h)
}
