package hosted

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/internal/outbound"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// Bounds of the listener Serve runs. A tool call may make two RS requests,
// so the write timeout allows for two RS timeouts plus writeSlack.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	idleTimeout       = 120 * time.Second
	// writeSlack covers writing an answer after the RS call that made it
	// used its whole timeout.
	writeSlack     = 5 * time.Second
	maxHeaderBytes = 64 << 10
	// DefaultShutdownTimeout is how long Serve waits for calls in flight
	// once its context ends, unless ServeOptions says otherwise.
	DefaultShutdownTimeout = 30 * time.Second
)

// ServeOptions configures Serve: the handler's options, where to listen,
// how bearers are verified, metrics and shutdown.
type ServeOptions struct {
	// Handler configures the /mcp handler. A nil Handler.Verifier is built
	// here: Introspection when set, else the resource server's own answer
	// to the bearer; either way behind a CachedVerifier. A nil HTTPClient
	// gets one client shared by every RS call of the process.
	Handler Options
	// Addr is the listen address (host:port). Required.
	Addr string
	// Introspection, when set, decides bearer kinds (RFC 7662).
	Introspection *Introspector
	// MetricsAddr, when set, serves Prometheus /metrics on its own listener.
	MetricsAddr string
	// ShutdownTimeout bounds the wait for calls in flight once ctx ends;
	// 0 means DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// Mount, when set, adds routes served on the same listener beside the
	// handler's (an embedding's own authorization server, say), under the
	// same Host and Origin rules as /mcp; RequestOrigin gives them the
	// public origin of a request. It must not register the handler's
	// paths.
	Mount func(mux *http.ServeMux)
	// Started, when set, is called once the listeners are bound.
	Started func(Listening)
}

// Listening says where Serve is reachable.
type Listening struct {
	// Base is the public origin (PublicURL, or http://ADDR), without a
	// trailing slash.
	Base string
	// Addr is the bound address; MetricsAddr is nil without metrics.
	Addr, MetricsAddr net.Addr
}

// OptionError is a ServeOptions value Serve cannot use; Field names it
// (ProviderURL, PublicURL, ...) so a command can name its flag.
type OptionError struct {
	Field string
	Err   error
}

func (e *OptionError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }

// Serve builds the handler from o and serves it until ctx ends, then shuts
// down gracefully: the listeners close at once and calls in flight get up
// to o.ShutdownTimeout before their connections are closed. It returns nil
// after a shutdown asked for by ctx, an *OptionError for options it cannot
// use, and any other error when listening or serving fails.
func Serve(ctx context.Context, o ServeOptions) error {
	h, metrics, err := buildHandler(o)
	if err != nil {
		return err
	}
	log := h.log
	shutdownTimeout := o.ShutdownTimeout
	if shutdownTimeout <= 0 {
		shutdownTimeout = DefaultShutdownTimeout
	}
	rsTimeout := o.Handler.RSTimeout
	if rsTimeout <= 0 {
		rsTimeout = rs.DefaultTimeout
	}

	var root http.Handler = h
	if o.Mount != nil {
		mounted := http.NewServeMux()
		o.Mount(mounted)
		root = h.withMounted(mounted)
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.Addr, err)
	}
	srv := &http.Server{
		Handler:           root,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      2*rsTimeout + writeSlack,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	servers := []*http.Server{srv}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	at := Listening{Addr: ln.Addr(), Base: "http://" + ln.Addr().String()}
	if h.public != nil {
		at.Base = h.public.String()
	}
	at.Base = strings.TrimRight(at.Base, "/")
	if metrics != nil {
		mln, err := net.Listen("tcp", o.MetricsAddr)
		if err != nil {
			_ = srv.Close()
			return fmt.Errorf("listen on %s: %w", o.MetricsAddr, err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", metrics.Handler())
		msrv := &http.Server{Handler: mux, ReadHeaderTimeout: readHeaderTimeout, WriteTimeout: 30 * time.Second}
		servers = append(servers, msrv)
		go func() { errc <- msrv.Serve(mln) }()
		at.MetricsAddr = mln.Addr()
	}
	if o.Started != nil {
		o.Started(at)
	}

	var serveErr error
	select {
	case <-ctx.Done():
	case err := <-errc:
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			serveErr = fmt.Errorf("serve http: %w", err)
		}
	}
	shutdown(ctx, servers, shutdownTimeout, log)
	return serveErr
}

// buildHandler completes o.Handler (verifier, HTTP client, metrics) and
// builds the Handler.
func buildHandler(o ServeOptions) (*Handler, *Metrics, error) {
	ho := o.Handler
	if ho.HTTPClient == nil {
		ho.HTTPClient = NewHTTPClient()
	}
	if ho.Verifier == nil {
		var inner Verifier
		if o.Introspection != nil {
			in := *o.Introspection
			if in.HTTPClient == nil {
				in.HTTPClient = ho.HTTPClient
			}
			if in.Timeout == 0 {
				in.Timeout = ho.RSTimeout
			}
			inner = &in
		} else {
			probe, err := SchemaProbe(ho.ProviderURL, ho.HTTPClient, rs.Options{Timeout: ho.RSTimeout, MaxBodyBytes: ho.RSMaxBodyBytes, Logger: ho.Logger})
			if err != nil {
				return nil, nil, &OptionError{Field: "ProviderURL", Err: err}
			}
			inner = RSVerifier{Probe: probe}
		}
		ho.Verifier = NewCachedVerifier(inner, CacheOptions{})
	}
	var metrics *Metrics
	if o.MetricsAddr != "" {
		if ho.Metrics == nil {
			cv, _ := ho.Verifier.(*CachedVerifier)
			ho.Metrics = NewMetrics(cv)
		}
		metrics = ho.Metrics
	}
	h, err := New(ho)
	if err != nil {
		return nil, nil, &OptionError{Field: "Handler", Err: err}
	}
	return h, metrics, nil
}

// NewHTTPClient returns the client Serve gives a handler that has none:
// pooled connections sized for one gateway's RS calls, never following a redirect. Pass the same one to
// the handler and to a FanoutResolver so they share connections.
func NewHTTPClient() *http.Client {
	return outbound.New(outbound.NewTransport(256, 128))
}

// shutdown stops servers, giving calls in flight up to timeout, then closes
// what is left.
func shutdown(ctx context.Context, servers []*http.Server, timeout time.Duration, log *slog.Logger) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	var first error
	for _, s := range servers {
		if err := s.Shutdown(sctx); err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		log.Warn("shutdown did not finish in time; closing remaining connections", "error", first)
		for _, s := range servers {
			_ = s.Close()
		}
	}
	log.Debug("stopped", "cause", context.Cause(ctx))
}
