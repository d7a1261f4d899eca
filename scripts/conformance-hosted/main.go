// Command conformance-hosted serves the hosted /mcp endpoint on loopback for
// the MCP conformance suite (@modelcontextprotocol/conformance), which has no
// way to send a bearer: a wrapper in front of the handler adds the test
// double's client token to requests that carry none. Production code has no
// such path. It prints the URL on stdout and serves until killed; run.sh
// drives it.
package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/hosted"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

func main() {
	if err := serve(); err != nil {
		fmt.Fprintln(os.Stderr, "conformance-hosted:", err)
		os.Exit(1)
	}
}

func serve() error {
	ds, err := dataset.Demo()
	if err != nil {
		return err
	}
	double, err := pdpptest.Start(pdpptest.Options{Dataset: ds, Now: dataset.DemoTime})
	if err != nil {
		return err
	}
	defer double.Close()
	v := hosted.NewCachedVerifier(&hosted.Introspector{URL: double.IntrospectionURL(),
		ClientID: pdpptest.IntrospectionClientID, ClientSecret: pdpptest.IntrospectionClientSecret}, hosted.CacheOptions{})
	h, err := hosted.New(hosted.Options{
		ProviderURL: double.URL(),
		Verifier:    v,
		Logger:      slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	token := double.Token(pdpptest.TokenClient)
	withToken := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		h.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: withToken, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	return srv.Close()
}
