// Package outbound builds every HTTP client the process sends requests with.
//
// A bearer token, or the gateway's own introspection credentials, must only
// ever reach the origin they were configured for. Go's http.Client follows
// redirects by default and resends the request body, and the Authorization
// header to the same host on another port or scheme; so no client of the
// process may follow one, whoever builds it. New and Wrap are the only ways
// production code obtains an *http.Client (a test in this package scans the
// module for any other), and both hand every 3xx back to the caller, which
// turns it into an error with Redirect.
package outbound

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// New returns a client over rt (http.DefaultTransport when nil) that never
// follows a redirect and has no overall timeout: callers bound each request
// with its context.
func New(rt http.RoundTripper) *http.Client {
	return &http.Client{Transport: rt, CheckRedirect: refuseRedirect}
}

// Wrap returns a copy of c that never follows a redirect, sharing c's
// transport (and so its pool of connections). The caller's client keeps its
// own policy. nil gives Shared.
func Wrap(c *http.Client) *http.Client {
	if c == nil {
		return Shared()
	}
	cp := *c
	cp.CheckRedirect = refuseRedirect
	return &cp
}

// Shared is the one client every caller that was given none uses, so the
// process keeps one pool of kept-alive connections.
var Shared = sync.OnceValue(func() *http.Client { return New(NewTransport(32, 16)) })

// NewTransport returns a transport for a few upstream origins with calls
// arriving in parallel: maxIdle kept-alive connections in all and perHost
// to one origin (Go's default of 2 per host would churn connections).
func NewTransport(maxIdle, perHost int) *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          maxIdle,
		MaxIdleConnsPerHost:   perHost,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// refuseRedirect hands the 3xx answer itself back to the caller.
func refuseRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// RedirectError is a 3xx answer that was not followed.
type RedirectError struct {
	// What names the endpoint asked ("the introspection endpoint").
	What string
	// Status is the HTTP status of the answer.
	Status int
	// Location is where it pointed: scheme, host and path, without the
	// query, quoted and bounded (see Location).
	Location string
	// Origin is where the request was sent, and the only place it is.
	Origin string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("%s answered HTTP %d redirecting to %s; redirects are not followed, so nothing is sent anywhere but %s",
		e.What, e.Status, e.Location, e.Origin)
}

// Redirect returns a *RedirectError when resp is a 3xx, else nil. what
// names the endpoint for the message.
func Redirect(resp *http.Response, what string) error {
	if resp.StatusCode < 300 || resp.StatusCode > 399 {
		return nil
	}
	origin := ""
	if resp.Request != nil && resp.Request.URL != nil {
		origin = resp.Request.URL.Scheme + "://" + resp.Request.URL.Host
	}
	return &RedirectError{What: what, Status: resp.StatusCode, Origin: origin,
		Location: fmt.Sprintf("%q", Location(resp.Header.Get("Location")))}
}

// maxLocation bounds a rendered redirect target.
const maxLocation = 200

// Location renders a redirect target for a message: scheme, host and path
// only (a query may carry data or a token, so it shows as "?…"), without
// control characters, at most maxLocation bytes.
func Location(loc string) string {
	if loc == "" {
		return "(no Location header)"
	}
	u, err := url.Parse(loc)
	if err != nil {
		return "(an unparseable Location header)"
	}
	s := u.EscapedPath()
	if u.Host != "" {
		s = u.Scheme + "://" + u.Host + s
	}
	if u.RawQuery != "" || u.ForceQuery {
		s += "?…"
	}
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			return -1
		}
		return r
	}, s)
	if len(s) > maxLocation {
		cut := maxLocation
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
