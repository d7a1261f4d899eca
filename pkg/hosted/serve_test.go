package hosted

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

// TestServe runs Serve on loopback in front of the double: the extra routes
// of Mount answer beside the handler's, the metadata advertises the
// handler's own origin with AuthorizationServerAtOrigin (and drops the RS's
// authorization block, which names another server), and cancelling the
// context stops it with nil.
func TestServe(t *testing.T) {
	d := pdpptest.New(t, pdpptest.Options{})
	started := make(chan Listening, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServeOptions{
			Handler:       Options{ProviderURL: d.URL(), AuthorizationServerAtOrigin: true},
			Addr:          "127.0.0.1:0",
			Introspection: &Introspector{URL: d.IntrospectionURL(), ClientID: pdpptest.IntrospectionClientID, ClientSecret: pdpptest.IntrospectionClientSecret},
			Mount: func(mux *http.ServeMux) {
				mux.HandleFunc("GET /extra", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "extra") })
			},
			Started: func(at Listening) { started <- at },
		})
	}()
	var at Listening
	select {
	case at = <-started:
	case err := <-done:
		t.Fatalf("Serve returned before listening: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("not listening after 20s")
	}
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get(at.Base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %.200s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	if got := get("/extra"); got != "extra" {
		t.Errorf("mounted route answered %q", got)
	}
	var md Metadata
	if err := json.Unmarshal([]byte(get(PathMetadata)), &md); err != nil {
		t.Fatal(err)
	}
	if len(md.AuthorizationServers) != 1 || md.AuthorizationServers[0] != at.Base {
		t.Errorf("authorization_servers %v, want [%s]", md.AuthorizationServers, at.Base)
	}
	if md.PDPPAgentDiscovery == nil || md.PDPPAgentDiscovery.MCP.Authorization != nil {
		t.Errorf("the RS's authorization block is still advertised: %+v", md.PDPPAgentDiscovery)
	}
	if !strings.HasPrefix(get(PathHealth), "ok") {
		t.Error("healthz")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after cancel: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
}

func TestServeOptionErrors(t *testing.T) {
	for _, tt := range []struct {
		name  string
		o     ServeOptions
		field string
	}{
		{"provider URL the RS probe cannot use", ServeOptions{Handler: Options{ProviderURL: "ftp://x"}, Addr: "127.0.0.1:0"}, "ProviderURL"},
		{"public URL with a path", ServeOptions{Handler: Options{ProviderURL: "http://127.0.0.1:9", PublicURL: "https://a.example/mcp"},
			Addr: "127.0.0.1:0", Introspection: &Introspector{URL: "http://127.0.0.1:9/introspect"}}, "Handler"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := Serve(t.Context(), tt.o)
			var oe *OptionError
			if !errors.As(err, &oe) || oe.Field != tt.field {
				t.Errorf("Serve: %v; want an OptionError for %s", err, tt.field)
			}
		})
	}
}
