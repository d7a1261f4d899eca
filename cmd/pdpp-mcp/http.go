package main

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pdpp-mcp/pdpp-mcp/internal/cmdexit"
	"github.com/pdpp-mcp/pdpp-mcp/internal/loopback"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/hosted"
)

// Hosted mode: --http ADDR serves /mcp over Streamable HTTP instead of
// stdio. The flags below only matter with --http.

const (
	// hostedGCPercent is GOGC in hosted mode unless the environment sets it.
	hostedGCPercent = 400
	// hostedMemoryLimit is the soft memory limit that goes with it.
	hostedMemoryLimit = 48 << 20
)

func httpFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "http", EnvVars: []string{"PDPP_MCP_HTTP"},
			Usage: "serve hosted MCP over Streamable HTTP on `ADDR` (host:port, default host 127.0.0.1) instead of stdio"},
		&cli.StringFlag{Name: "public-url", EnvVars: []string{"PDPP_MCP_PUBLIC_URL"},
			Usage: "with --http: the `URL` (origin) clients reach this server at, normally https behind a TLS proxy; required for a non-loopback ADDR"},
		&cli.StringFlag{Name: "provider-public-url", EnvVars: []string{"PDPP_MCP_PROVIDER_PUBLIC_URL"},
			Usage: "with --http: the `URL` (origin) remote clients can open the resource server at, which results cite (default: what its metadata publishes, never a loopback or private address)"},
		&cli.StringFlag{Name: "introspection-url", EnvVars: []string{"PDPP_MCP_INTROSPECTION_URL"},
			Usage: "with --http: RFC 7662 endpoint `URL` that decides bearer kinds (default: ask the resource server)"},
		&cli.StringFlag{Name: "introspection-client-id", EnvVars: []string{"PDPP_MCP_INTROSPECTION_CLIENT_ID"},
			Usage: "with --introspection-url: Basic client `ID`"},
		&cli.StringFlag{Name: "introspection-client-secret-file", EnvVars: []string{"PDPP_MCP_INTROSPECTION_CLIENT_SECRET_FILE"},
			Usage: "with --introspection-url: `FILE` holding the Basic client secret (or set PDPP_MCP_INTROSPECTION_CLIENT_SECRET)"},
		&cli.StringSliceFlag{Name: "trusted-proxies", EnvVars: []string{"PDPP_MCP_TRUSTED_PROXIES"},
			Usage: "with --http: `CIDR`s whose X-Forwarded-Proto/Host are believed (comma-separated or repeated)"},
		&cli.StringSliceFlag{Name: "trusted-hosts", EnvVars: []string{"PDPP_TRUSTED_HOSTS"},
			Usage: "with --http and no --public-url: public `HOST`s (host, host:port, *.suffix) a Host-derived URL may use"},
		&cli.StringSliceFlag{Name: "allowed-origins", EnvVars: []string{"PDPP_MCP_ALLOWED_ORIGINS"},
			Usage: "with --http: browser `ORIGIN`s allowed besides the public URL"},
		&cli.StringSliceFlag{Name: "authorization-server", EnvVars: []string{"PDPP_MCP_AUTHORIZATION_SERVERS"},
			Usage: "with --http: issuer `URL`s advertised in the metadata (default: those of the resource server's own metadata)"},
		&cli.StringFlag{Name: "core-query-base", EnvVars: []string{"PDPP_MCP_CORE_QUERY_BASE"},
			Usage: "with --http: public `URL` of the resource server's /v1 API, advertised in the metadata (default: the RS's own, or --provider-url's when it is not a private address)"},
		&cli.Int64Flag{Name: "max-body-bytes", EnvVars: []string{"PDPP_MCP_MAX_BODY_BYTES"}, Value: hosted.DefaultMaxBodyBytes,
			Usage: "with --http: largest request body, in `BYTES` (413 above)"},
		&cli.IntFlag{Name: "max-in-flight-per-token", EnvVars: []string{"PDPP_MCP_MAX_IN_FLIGHT_PER_TOKEN"}, Value: hosted.DefaultMaxInFlightPerToken,
			Usage: "with --http: concurrent requests per bearer, `N` (429 above)"},
		&cli.StringFlag{Name: "metrics-addr", EnvVars: []string{"PDPP_MCP_METRICS_ADDR"},
			Usage: "with --http: serve Prometheus /metrics on this separate `ADDR` (off by default)"},
		&cli.DurationFlag{Name: "shutdown-timeout", EnvVars: []string{"PDPP_MCP_SHUTDOWN_TIMEOUT"}, Value: hosted.DefaultShutdownTimeout,
			Usage: "with --http: how long (`DURATION`) a SIGTERM waits for calls in flight"},
		&cli.BoolFlag{Name: "access-log", EnvVars: []string{"PDPP_MCP_ACCESS_LOG"}, Value: true,
			Usage: "with --http: one stderr line per request (never the token or arguments)"},
		&cli.StringFlag{Name: "cursor-key-file", EnvVars: []string{"PDPP_MCP_CURSOR_KEY_FILE"},
			Usage: "with --http: `FILE` holding the key that signs package search cursors (at least 32 random bytes, not readable by others); every replica behind one URL needs the same one (default: a key per process)"},
	}
}

// httpConfig is what the hosted flags resolved to.
type httpConfig struct {
	addr            string
	publicURL       string
	providerURL     string
	introspection   *hosted.Introspector
	trustedProxies  []netip.Prefix
	trustedHosts    []string
	allowedOrigins  []string
	authServers     []string
	coreQueryBase   string
	maxBody         int64
	maxPerToken     int
	metricsAddr     string
	shutdownTimeout time.Duration
	accessLog       bool
	demo            bool
	providerPublic  string
	cursorKey       []byte
}

func parseHTTPConfig(c *cli.Context) (*httpConfig, error) {
	hc := &httpConfig{
		addr:            strings.TrimSpace(c.String("http")),
		publicURL:       strings.TrimSpace(c.String("public-url")),
		providerPublic:  strings.TrimSpace(c.String("provider-public-url")),
		providerURL:     firstProviderURL(c),
		trustedHosts:    splitList(c.StringSlice("trusted-hosts")),
		allowedOrigins:  splitList(c.StringSlice("allowed-origins")),
		authServers:     splitList(c.StringSlice("authorization-server")),
		coreQueryBase:   strings.TrimSpace(c.String("core-query-base")),
		maxBody:         c.Int64("max-body-bytes"),
		maxPerToken:     c.Int("max-in-flight-per-token"),
		metricsAddr:     strings.TrimSpace(c.String("metrics-addr")),
		shutdownTimeout: c.Duration("shutdown-timeout"),
		accessLog:       c.Bool("access-log"),
		demo:            c.Bool("demo"),
	}
	host, port, err := net.SplitHostPort(hc.addr)
	if err != nil {
		// A bare port means the loopback default.
		if _, perr := netip.ParseAddrPort("127.0.0.1:" + hc.addr); perr != nil {
			return nil, usageErrorf("--http %q is not host:port", hc.addr)
		}
		host, port = "", hc.addr
	}
	if host == "" {
		host = "127.0.0.1"
	}
	hc.addr = net.JoinHostPort(host, port)
	if !loopback.Host(host) && hc.publicURL == "" {
		return nil, usageErrorf("--http %s is not a loopback address: pass --public-url with the URL clients use (normally https behind a TLS proxy)", hc.addr)
	}
	for _, p := range splitList(c.StringSlice("trusted-proxies")) {
		pfx, err := netip.ParsePrefix(p)
		if err != nil {
			a, aerr := netip.ParseAddr(p)
			if aerr != nil {
				return nil, usageErrorf("--trusted-proxies: %q is not a CIDR or an IP address", p)
			}
			pfx = netip.PrefixFrom(a, a.BitLen())
		}
		hc.trustedProxies = append(hc.trustedProxies, pfx)
	}
	switch {
	case hc.maxBody <= 0:
		return nil, usageErrorf("--max-body-bytes must be positive, got %d", hc.maxBody)
	case hc.maxPerToken <= 0:
		return nil, usageErrorf("--max-in-flight-per-token must be positive, got %d", hc.maxPerToken)
	case hc.shutdownTimeout <= 0:
		return nil, usageErrorf("--shutdown-timeout must be positive, got %s", hc.shutdownTimeout)
	case !hc.demo && hc.providerURL == "":
		return nil, usageErrorf("--http needs --provider-url (or PDPP_PROVIDER_URL): the resource server the tools read from; to try it, add --demo")
	}
	if u := strings.TrimSpace(c.String("introspection-url")); u != "" && !hc.demo {
		secret := os.Getenv("PDPP_MCP_INTROSPECTION_CLIENT_SECRET")
		if f := c.String("introspection-client-secret-file"); f != "" {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, usageErrorf("--introspection-client-secret-file: %v", err)
			}
			secret = strings.TrimSpace(string(b))
		}
		id := strings.TrimSpace(c.String("introspection-client-id"))
		if id == "" || secret == "" {
			return nil, usageErrorf("--introspection-url needs --introspection-client-id and a secret (--introspection-client-secret-file or PDPP_MCP_INTROSPECTION_CLIENT_SECRET)")
		}
		hc.introspection = &hosted.Introspector{URL: u, ClientID: id, ClientSecret: secret}
	}
	if f := strings.TrimSpace(c.String("cursor-key-file")); f != "" {
		key, err := fanout.ReadCursorKey(f)
		if err != nil {
			return nil, usageErrorf("--cursor-key-file: %v", err)
		}
		hc.cursorKey = key
	}
	if len(providerURLs(c)) > 1 {
		return nil, usageErrorf("--http serves one resource server: pass --provider-url once (several providers are served over stdio, or as a package by the provider's own /mcp)")
	}
	return hc, nil
}

// splitList accepts repeated flags and comma/space-separated values.
func splitList(vs []string) []string {
	var out []string
	for _, v := range vs {
		out = append(out, strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })...)
	}
	return out
}

// serveHTTP runs hosted mode until ctx ends (a signal); hosted.Serve does
// the serving and the graceful shutdown.
func serveHTTP(c *cli.Context, cfg config) error {
	hc, err := parseHTTPConfig(c)
	if err != nil {
		return err
	}
	if err := credential.CheckOwnerEnv(os.Getenv); err != nil {
		return err
	}
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		// Each hosted request allocates a few hundred KB, most of it in
		// the MCP SDK's JSON decoding, and frees it at once. Collecting
		// less often cut gateway CPU per call by about a quarter in
		// scripts/bench-hosted; the lower soft limit makes the collector
		// work harder only once the heap nears it, which keeps a busy
		// gateway's RSS where the default pacing would.
		debug.SetGCPercent(hostedGCPercent)
		debug.SetMemoryLimit(hostedMemoryLimit)
	}
	o := hosted.ServeOptions{
		Handler: hosted.Options{
			ProviderURL:          hc.providerURL,
			PublicURL:            hc.publicURL,
			ProviderPublicURL:    hc.providerPublic,
			BlobMaxBytes:         cfg.blobMax,
			TrustedProxies:       hc.trustedProxies,
			TrustedHosts:         hc.trustedHosts,
			AllowedOrigins:       hc.allowedOrigins,
			AuthorizationServers: hc.authServers,
			CoreQueryBase:        hc.coreQueryBase,
			HTTPClient:           hosted.NewHTTPClient(),
			RSTimeout:            cfg.timeout,
			RSMaxBodyBytes:       cfg.maxBytes,
			MaxBodyBytes:         hc.maxBody,
			MaxInFlightPerToken:  hc.maxPerToken,
			Name:                 cfg.name,
			Logger:               cfg.log,
			AccessLog:            hc.accessLog,
		},
		Addr:            hc.addr,
		Introspection:   hc.introspection,
		MetricsAddr:     hc.metricsAddr,
		ShutdownTimeout: hc.shutdownTimeout,
	}
	var banner func(base string)
	if hc.demo {
		d, err := startDemoDouble(cfg, hc.publicURL)
		if err != nil {
			return err
		}
		defer d.Close()
		if banner, err = demoHosted(cfg, d, &o, hc.cursorKey); err != nil {
			return err
		}
	}
	o.Started = func(at hosted.Listening) {
		if at.MetricsAddr != nil {
			cmdexit.Notef(cfg.stderr, cmdName, "metrics at http://%s/metrics", at.MetricsAddr)
		}
		cmdexit.Notef(cfg.stderr, cmdName, "serving hosted MCP at %s/mcp for %s (listening on %s)", at.Base, o.Handler.ProviderURL, at.Addr)
		if banner != nil {
			banner(at.Base)
		}
	}
	err = hosted.Serve(c.Context, o)
	var oe *hosted.OptionError
	switch {
	case errors.As(err, &oe) && oe.Field == "ProviderURL":
		return usageErrorf("--provider-url: %v", oe.Err)
	case errors.As(err, &oe):
		return usageErrorf("%v", oe.Err)
	case err != nil:
		return cmdexit.Errorf(cmdexit.Failure, "%v", err)
	}
	return nil
}
