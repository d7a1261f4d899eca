package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pdpp-mcp/pdpp-mcp/internal/cmdexit"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout/fanouttest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/hosted"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// Hosted mode: --http ADDR serves /mcp over Streamable HTTP instead of
// stdio. The flags below only matter with --http.

// Server-side bounds of the HTTP listener. A tool call may make two RS
// requests, so the write timeout allows for two RS timeouts.
const (
	httpReadHeaderTimeout = 10 * time.Second
	httpReadTimeout       = 30 * time.Second
	httpIdleTimeout       = 120 * time.Second
	// httpWriteSlack covers writing an answer after the RS call that made it
	// used its whole timeout.
	httpWriteSlack     = 5 * time.Second
	httpMaxHeaderBytes = 64 << 10
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
		&cli.Int64Flag{Name: "max-body-bytes", EnvVars: []string{"PDPP_MCP_MAX_BODY_BYTES"}, Value: hosted.DefaultMaxBodyBytes,
			Usage: "with --http: largest request body, in `BYTES` (413 above)"},
		&cli.IntFlag{Name: "max-in-flight-per-token", EnvVars: []string{"PDPP_MCP_MAX_IN_FLIGHT_PER_TOKEN"}, Value: hosted.DefaultMaxInFlightPerToken,
			Usage: "with --http: concurrent requests per bearer, `N` (429 above)"},
		&cli.StringFlag{Name: "metrics-addr", EnvVars: []string{"PDPP_MCP_METRICS_ADDR"},
			Usage: "with --http: serve Prometheus /metrics on this separate `ADDR` (off by default)"},
		&cli.DurationFlag{Name: "shutdown-timeout", EnvVars: []string{"PDPP_MCP_SHUTDOWN_TIMEOUT"}, Value: 30 * time.Second,
			Usage: "with --http: how long (`DURATION`) a SIGTERM waits for calls in flight"},
		&cli.BoolFlag{Name: "access-log", EnvVars: []string{"PDPP_MCP_ACCESS_LOG"}, Value: true,
			Usage: "with --http: one stderr line per request (never the token or arguments)"},
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
	maxBody         int64
	maxPerToken     int
	metricsAddr     string
	shutdownTimeout time.Duration
	accessLog       bool
	demo            bool
	providerPublic  string
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
	if !isLoopback(host) && hc.publicURL == "" {
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

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && a.IsLoopback()
}

// serveHTTP runs hosted mode until ctx ends (a signal), then shuts down
// gracefully: the listener closes at once and calls in flight get up to
// --shutdown-timeout.
func serveHTTP(c *cli.Context, cfg config) error {
	hc, err := parseHTTPConfig(c)
	if err != nil {
		return err
	}
	ctx := c.Context
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
	// One client for every RS call of the process.
	rsHTTP := &http.Client{Transport: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 128,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   true,
		TLSHandshakeTimeout: 10 * time.Second,
	}}
	var demoTokens map[pdpptest.TokenKind]string
	var packages hosted.PackageResolver
	if hc.demo {
		d, err := startDemoDouble(cfg)
		if err != nil {
			return err
		}
		defer d.Close()
		hc.providerURL = d.URL()
		hc.introspection = &hosted.Introspector{URL: d.IntrospectionURL(),
			ClientID: pdpptest.IntrospectionClientID, ClientSecret: pdpptest.IntrospectionClientSecret}
		// The double knows its packages' child grants, as a provider's RS
		// does, so the demo serves mcp_package tokens by fanning out.
		packages, err = hosted.FanoutResolver(hosted.FanoutOptions{ProviderURL: d.URL(), HTTPClient: rsHTTP,
			RSTimeout: cfg.timeout, RSMaxBodyBytes: cfg.maxBytes, Logger: cfg.log,
			Lookup: func(_ context.Context, _ *hosted.Principal, token string) (string, []fanout.Child, error) {
				return fanouttest.PackageChildren(d, token)
			}})
		if err != nil {
			return err
		}
		demoTokens = map[pdpptest.TokenKind]string{}
		for _, k := range []pdpptest.TokenKind{pdpptest.TokenClient, pdpptest.TokenOwner, pdpptest.TokenPackage, pdpptest.TokenRevoked} {
			demoTokens[k] = d.Token(k)
		}
	}
	var inner hosted.Verifier
	if hc.introspection != nil {
		hc.introspection.HTTPClient = rsHTTP
		hc.introspection.Timeout = cfg.timeout
		inner = hc.introspection
	} else {
		probe, err := hosted.SchemaProbe(hc.providerURL, rsHTTP, rs.Options{Timeout: cfg.timeout, MaxBodyBytes: cfg.maxBytes, Logger: cfg.log})
		if err != nil {
			return usageErrorf("--provider-url: %v", err)
		}
		inner = hosted.RSVerifier{Probe: probe}
	}
	verifier := hosted.NewCachedVerifier(inner, hosted.CacheOptions{})
	var metrics *hosted.Metrics
	if hc.metricsAddr != "" {
		metrics = hosted.NewMetrics(verifier)
	}
	h, err := hosted.New(hosted.Options{
		ProviderURL:          hc.providerURL,
		PublicURL:            hc.publicURL,
		ProviderPublicURL:    hc.providerPublic,
		BlobMaxBytes:         cfg.blobMax,
		Verifier:             verifier,
		Packages:             packages,
		TrustedProxies:       hc.trustedProxies,
		TrustedHosts:         hc.trustedHosts,
		AllowedOrigins:       hc.allowedOrigins,
		AuthorizationServers: hc.authServers,
		HTTPClient:           rsHTTP,
		RSTimeout:            cfg.timeout,
		RSMaxBodyBytes:       cfg.maxBytes,
		MaxBodyBytes:         hc.maxBody,
		MaxInFlightPerToken:  hc.maxPerToken,
		Name:                 cfg.name,
		Logger:               cfg.log,
		AccessLog:            hc.accessLog,
		Metrics:              metrics,
	})
	if err != nil {
		return usageErrorf("%v", err)
	}
	ln, err := net.Listen("tcp", hc.addr)
	if err != nil {
		return cmdexit.Errorf(cmdexit.Failure, "listen on %s: %v", hc.addr, err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: httpReadHeaderTimeout,
		ReadTimeout:       httpReadTimeout,
		WriteTimeout:      2*cfg.timeout + httpWriteSlack,
		IdleTimeout:       httpIdleTimeout,
		MaxHeaderBytes:    httpMaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(cfg.log.Handler(), slog.LevelDebug),
	}
	servers := []*http.Server{srv}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	if metrics != nil {
		mln, err := net.Listen("tcp", hc.metricsAddr)
		if err != nil {
			_ = srv.Close()
			return cmdexit.Errorf(cmdexit.Failure, "listen on %s: %v", hc.metricsAddr, err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", metrics.Handler())
		msrv := &http.Server{Handler: mux, ReadHeaderTimeout: httpReadHeaderTimeout, WriteTimeout: 30 * time.Second}
		servers = append(servers, msrv)
		go func() { errc <- msrv.Serve(mln) }()
		fmt.Fprintf(cfg.stderr, "%s: metrics at http://%s/metrics\n", cmdName, mln.Addr())
	}
	base := hc.publicURL
	if base == "" {
		base = "http://" + ln.Addr().String()
	}
	base = strings.TrimRight(base, "/")
	fmt.Fprintf(cfg.stderr, "%s: serving hosted MCP at %s/mcp for %s (listening on %s)\n", cmdName, base, hc.providerURL, ln.Addr())
	if demoTokens != nil {
		printDemoTokens(cfg, base, demoTokens)
	}
	select {
	case <-ctx.Done():
	case err := <-errc:
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serve http: %w", err)
		}
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), hc.shutdownTimeout)
	defer cancel()
	var first error
	for _, s := range servers {
		if err := s.Shutdown(sctx); err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		cfg.log.Warn("shutdown did not finish in time; closing remaining connections", "error", first)
		for _, s := range servers {
			_ = s.Close()
		}
	}
	cfg.log.Debug("stopped", "cause", context.Cause(ctx))
	return nil
}

func startDemoDouble(cfg config) (*pdpptest.Server, error) {
	ds, err := demoDataset()
	if err != nil {
		return nil, fmt.Errorf("demo dataset: %w", err)
	}
	dlog := slog.New(slog.NewTextHandler(cfg.stderr, &slog.HandlerOptions{Level: max(cfg.level, slog.LevelWarn)}))
	d, err := pdpptest.Start(pdpptest.Options{Dataset: ds, Logger: dlog, Now: demoClock})
	if err != nil {
		return nil, fmt.Errorf("start demo resource server: %w", err)
	}
	return d, nil
}

func printDemoTokens(cfg config, base string, toks map[pdpptest.TokenKind]string) {
	fmt.Fprintf(cfg.stderr, `%s: demo: the %q sample dataset, served by an in-process resource server. Tokens to try:
  client (served):            %s
  owner (403):                %s
  mcp_package (fan-out):      %s
  revoked grant (403):        %s
Try:
  curl -s %s/mcp -H 'Authorization: Bearer %s' \
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
  claude mcp add --transport http pdpp-demo %s/mcp --header 'Authorization: Bearer %s'
`, cmdName, demoName, toks[pdpptest.TokenClient], toks[pdpptest.TokenOwner], toks[pdpptest.TokenPackage], toks[pdpptest.TokenRevoked],
		base, toks[pdpptest.TokenClient], base, toks[pdpptest.TokenClient])
}
