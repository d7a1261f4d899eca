package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/internal/cmdexit"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout/fanouttest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/hosted"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// The dataset --demo serves, and the clock it is served with: the moment of
// the dataset's last sync, so every connector reads as current rather than
// stale however long after that the demo runs.
var (
	demoName    = dataset.DemoName
	demoDataset = dataset.Demo
	demoClock   = dataset.DemoTime
)

// serveDemo serves the tools over a client token of an in-process resource
// server on 127.0.0.1 and stops that server when the MCP client goes away. No
// credential cache is read and --provider-url is ignored.
//
// Building the dataset and the server's indexes takes far longer than the
// MCP handshake, so it happens in the background: the address is bound first
// (the provider URL must be known up front), initialize and tools/list are
// answered at once, and the first tool call waits until the data is ready.
func serveDemo(ctx context.Context, cfg config) error {
	// Refused here too: one rule for every mode is easier to trust.
	if err := credential.CheckOwnerEnv(os.Getenv); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("demo resource server: %w", err)
	}
	d := &demoRS{url: "http://" + ln.Addr().String(), ready: make(chan struct{})}
	front := &http.Server{Handler: d, ReadHeaderTimeout: 10 * time.Second}
	go front.Serve(ln)
	go d.start(cfg)
	defer d.stop(cfg.log, front)

	cmdexit.Notef(cfg.stderr, cmdName, "demo: serving the %q sample dataset from an in-process resource server at %s with a client token (no credential cache)",
		demoName, d.url)
	return serve(ctx, cfg, d, d.url)
}

// demoRS is the demo resource server as the tools see it. It answers on its
// own listener, so its URL exists before the double does, and hands requests
// to the double once that has started.
type demoRS struct {
	url   string
	ready chan struct{} // closed when double/client or err are set

	double *pdpptest.Server
	client *rs.Client
	err    error
}

func (d *demoRS) start(cfg config) {
	defer close(d.ready)
	if d.double, d.err = startDemoDouble(cfg, ""); d.err != nil {
		cfg.log.Error("demo resource server did not start", "error", d.err)
		return
	}
	token := d.double.Token(pdpptest.TokenClient)
	d.client, d.err = rs.New(rs.Options{
		BaseURL:      d.url,
		Token:        func() string { return token },
		Timeout:      cfg.timeout,
		MaxBodyBytes: cfg.maxBytes,
		Logger:       cfg.log,
	})
	cfg.log.Debug("demo resource server ready", "url", d.url, "dataset", d.double.Dataset().Name)
}

// Get waits for the double, then reads through the RS client.
func (d *demoRS) Get(ctx context.Context, path string, q rs.Query) (*rs.Response, error) {
	select {
	case <-d.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if d.err != nil {
		return nil, d.err
	}
	return d.client.Get(ctx, path, q)
}

// ServeHTTP hands a request on the demo URL to the double.
func (d *demoRS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case <-d.ready:
	case <-r.Context().Done():
		return
	}
	if d.double == nil {
		http.Error(w, "demo resource server did not start", http.StatusServiceUnavailable)
		return
	}
	d.double.ServeHTTP(w, r)
}

func (d *demoRS) stop(log *slog.Logger, front *http.Server) {
	if err := front.Close(); err != nil {
		log.Warn("stop demo listener", "error", err)
	}
	closeDouble := func() {
		if d.double != nil {
			if err := d.double.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Warn("stop demo resource server", "error", err)
			}
		}
	}
	select {
	case <-d.ready:
		closeDouble()
	default:
		// Still building: exiting must not wait for that. The process ends
		// it; within a longer-lived caller (tests) it is closed when ready.
		go func() { <-d.ready; closeDouble() }()
	}
}

// demoTokenSeed derives the demo's tokens, so a host configured with one
// keeps working after a restart. It is no secret: the demo serves synthetic
// data, and prints its tokens anyway.
const demoTokenSeed = "pdpp-mcp demo tokens v1"

// startDemoDouble starts the in-process resource server both demo modes
// serve: the sample dataset at its frozen clock, with tokens derived from
// demoTokenSeed, logging only warnings (its own info lines would repeat
// ours). issuer is its authorization server's public URL, "" for the Host
// clients use.
func startDemoDouble(cfg config, issuer string) (*pdpptest.Server, error) {
	ds, err := demoDataset()
	if err != nil {
		return nil, fmt.Errorf("demo dataset: %w", err)
	}
	dlog := slog.New(slog.NewTextHandler(cfg.stderr, &slog.HandlerOptions{Level: max(cfg.level, slog.LevelWarn)}))
	d, err := pdpptest.Start(pdpptest.Options{Dataset: ds, Logger: dlog, Now: demoClock, TokenSeed: demoTokenSeed, Issuer: issuer})
	if err != nil {
		return nil, fmt.Errorf("start demo resource server: %w", err)
	}
	return d, nil
}

// demoHosted points hosted mode at the demo double d: its introspection
// endpoint decides bearers, its packages are served by fanning out, as a
// provider's RS resolves them, and its authorization server answers on the
// gateway's own origin, which the metadata advertises, so a host needs no
// header: it registers, shows the consent page and gets a token. It
// returns the banner to print once the gateway listens.
func demoHosted(cfg config, d *pdpptest.Server, o *hosted.ServeOptions, cursorKey []byte) (banner func(base string), err error) {
	o.Handler.ProviderURL = d.URL()
	o.Handler.AuthorizationServers = nil
	o.Handler.AuthorizationServerAtOrigin = true
	o.Mount = func(mux *http.ServeMux) { d.MountAuthorizationServer(mux, hosted.RequestOrigin) }
	o.Introspection = &hosted.Introspector{URL: d.IntrospectionURL(),
		ClientID: pdpptest.IntrospectionClientID, ClientSecret: pdpptest.IntrospectionClientSecret}
	o.Handler.Packages, err = hosted.FanoutResolver(hosted.FanoutOptions{ProviderURL: d.URL(), HTTPClient: o.Handler.HTTPClient,
		RSTimeout: cfg.timeout, RSMaxBodyBytes: cfg.maxBytes, Logger: cfg.log, CursorKey: cursorKey,
		Lookup: func(_ context.Context, _ *hosted.Principal, token string) (string, []fanout.Child, error) {
			return fanouttest.PackageChildren(d, token)
		}})
	if err != nil {
		return nil, err
	}
	toks := map[pdpptest.TokenKind]string{}
	for _, k := range []pdpptest.TokenKind{pdpptest.TokenClient, pdpptest.TokenOwner, pdpptest.TokenPackage, pdpptest.TokenRevoked} {
		toks[k] = d.Token(k)
	}
	return func(base string) { printDemoTokens(cfg, base, toks) }, nil
}

func printDemoTokens(cfg config, base string, toks map[pdpptest.TokenKind]string) {
	// Every line fits 80 columns with a loopback base URL: the client
	// token goes into a shell variable once, so the curl line stays short.
	fmt.Fprintf(cfg.stderr, `%s: demo: the %q sample dataset, served by an in-process
resource server. Add it to a host with OAuth (a consent page opens; no token):
  claude mcp add --transport http pdpp-demo-http %s/mcp
Or send a token; these are the same on every start of the demo:
  client (served):       %s
  owner (403):           %s
  mcp_package (fan-out): %s
  revoked grant (403):   %s
Try:
  TOKEN=%s
  curl -s %s/mcp -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
`, cmdName, demoName, base, toks[pdpptest.TokenClient], toks[pdpptest.TokenOwner], toks[pdpptest.TokenPackage], toks[pdpptest.TokenRevoked],
		toks[pdpptest.TokenClient], base)
}
