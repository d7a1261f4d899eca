package hosted

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
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

// startServe runs Serve with o on loopback until the test ends.
func startServe(t *testing.T, o ServeOptions) Listening {
	t.Helper()
	started := make(chan Listening, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	o.Addr = "127.0.0.1:0"
	o.Started = func(at Listening) { started <- at }
	go func() { done <- Serve(ctx, o) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("Serve did not return after cancel")
		}
	})
	select {
	case at := <-started:
		return at
	case err := <-done:
		t.Fatalf("Serve returned before listening: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("not listening after 20s")
	}
	return Listening{}
}

// TestServeHostAndOriginOnEveryRoute: every route the gateway serves, the
// mounted ones included, answers under the Host and Origin rules of /mcp,
// so a page on another site or one that rebinds its own name to this
// machine gets nothing from any of them. A mounted route learns the origin
// the gateway resolved.
func TestServeHostAndOriginOnEveryRoute(t *testing.T) {
	d := pdpptest.New(t, pdpptest.Options{})
	intro := &Introspector{URL: d.IntrospectionURL(), ClientID: pdpptest.IntrospectionClientID, ClientSecret: pdpptest.IntrospectionClientSecret}
	mount := func(mux *http.ServeMux) {
		mux.HandleFunc("/extra", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "extra at "+RequestOrigin(r)) })
	}
	hostDerived := startServe(t, ServeOptions{Handler: Options{ProviderURL: d.URL()}, Introspection: intro, Mount: mount})
	public := startServe(t, ServeOptions{Handler: Options{ProviderURL: d.URL(), PublicURL: "https://mcp.example"}, Introspection: intro, Mount: mount})
	publicAddr := "http://" + public.Addr.String()

	do := func(t *testing.T, base, method, path string, header map[string]string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(""))
		for k, v := range header {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	routes := []struct{ method, path string }{
		{"GET", PathMetadata}, {"GET", PathIcon}, {"GET", PathHealth}, {"GET", PathReady}, {"GET", "/nope"},
		{"GET", "/extra"}, {"POST", "/extra"},
	}
	for _, rt := range routes {
		for _, tt := range []struct {
			name, base string
			header     map[string]string
			status     int
		}{
			{"foreign Host", hostDerived.Base, map[string]string{"Host": "evil.example"}, http.StatusMisdirectedRequest},
			{"foreign Host with our port", hostDerived.Base, map[string]string{"Host": "evil.example:" + strings.TrimPrefix(hostDerived.Base[strings.LastIndex(hostDerived.Base, ":"):], ":")}, http.StatusMisdirectedRequest},
			{"foreign Origin", hostDerived.Base, map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
			{"public URL, foreign Host on loopback", publicAddr, map[string]string{"Host": "evil.example"}, http.StatusForbidden},
			{"public URL, foreign Origin", publicAddr, map[string]string{"Host": "mcp.example", "Origin": "http://evil.example"}, http.StatusForbidden},
		} {
			t.Run(rt.method+" "+rt.path+" "+tt.name, func(t *testing.T) {
				status, body := do(t, tt.base, rt.method, rt.path, tt.header)
				if status != tt.status || strings.Contains(body, "extra at") {
					t.Errorf("%d %.200s; want %d", status, body, tt.status)
				}
			})
		}
	}
	t.Run("the mounted route learns the origin", func(t *testing.T) {
		if status, body := do(t, hostDerived.Base, "GET", "/extra", map[string]string{"Origin": hostDerived.Base}); status != 200 || body != "extra at "+hostDerived.Base {
			t.Errorf("%d %q", status, body)
		}
		if status, body := do(t, publicAddr, "POST", "/extra", map[string]string{"Host": "mcp.example"}); status != 200 || body != "extra at https://mcp.example" {
			t.Errorf("behind the public URL: %d %q", status, body)
		}
	})
	t.Run("a probe without Host reaches health", func(t *testing.T) {
		conn, err := net.Dial("tcp", hostDerived.Addr.String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_, _ = io.WriteString(conn, "GET /healthz HTTP/1.0\r\n\r\n")
		b, _ := io.ReadAll(conn)
		if !strings.HasPrefix(string(b), "HTTP/1.0 200") {
			t.Errorf("%.100q", b)
		}
	})
}
