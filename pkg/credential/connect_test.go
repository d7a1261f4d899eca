package credential

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

func TestConnect(t *testing.T) {
	srv := pdpptest.New(t, pdpptest.Options{})
	cacheFor := func(t *testing.T, kind pdpptest.TokenKind, extra string) string {
		t.Helper()
		root := t.TempDir()
		c, err := Open(root, srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(c.File), 0o700); err != nil {
			t.Fatal(err)
		}
		body := `{"credential":{"access_token":"` + srv.Token(kind) + `"` + extra + `}}`
		if err := os.WriteFile(c.File, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return root
	}
	noEnv := func(string) string { return "" }
	for _, tt := range []struct {
		name     string
		provider string
		root     func(t *testing.T) string
		getenv   func(string) string
		code     string // "" means success
	}{
		{name: "client token", provider: srv.URL() + "/", root: func(t *testing.T) string { return cacheFor(t, pdpptest.TokenClient, "") }},
		{name: "no provider URL", root: func(t *testing.T) string { return t.TempDir() }, code: CodeNoProviderURL},
		{name: "not connected", provider: srv.URL(), root: func(t *testing.T) string { return t.TempDir() }, code: CodeNotConnected},
		{name: "owner environment", provider: srv.URL(), root: func(t *testing.T) string { return cacheFor(t, pdpptest.TokenClient, "") },
			getenv: func(k string) string {
				if k == "PDPP_OWNER_TOKEN" {
					return "x"
				}
				return ""
			}, code: CodeOwnerRefused},
		{name: "owner metadata", provider: srv.URL(), root: func(t *testing.T) string { return cacheFor(t, pdpptest.TokenClient, `,"role":"owner"`) }, code: CodeOwnerRefused},
		{name: "expired", provider: srv.URL(), root: func(t *testing.T) string {
			return cacheFor(t, pdpptest.TokenClient, `,"expires_at":"2020-01-01T00:00:00Z"`)
		}, code: CodeExpired},
		{name: "owner token", provider: srv.URL(), root: func(t *testing.T) string { return cacheFor(t, pdpptest.TokenOwner, "") }, code: CodeOwnerRefused},
		{name: "revoked token", provider: srv.URL(), root: func(t *testing.T) string { return cacheFor(t, pdpptest.TokenRevoked, "") }, code: CodeRejected},
	} {
		t.Run(tt.name, func(t *testing.T) {
			getenv := tt.getenv
			if getenv == nil {
				getenv = noEnv
			}
			conn, err := Connect(context.Background(), ConnectOptions{
				ProviderURL: tt.provider, CacheRoot: tt.root(t), Getenv: getenv, Timeout: 5 * time.Second,
			})
			if tt.code != "" {
				var ce *Error
				if !errors.As(err, &ce) || ce.Code != tt.code {
					t.Fatalf("Connect = %v, %v; want a %s error", conn, err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if conn.ProviderURL != srv.URL() {
				t.Errorf("ProviderURL = %q, want %q", conn.ProviderURL, srv.URL())
			}
			resp, err := conn.RS.Get(context.Background(), "/v1/schema", rs.Query{{Key: "view", Value: "compact"}})
			if err != nil || resp.Status != 200 {
				t.Fatalf("read through the guard: %v, %v", resp, err)
			}
		})
	}
}

func TestConnectCancelled(t *testing.T) {
	srv := pdpptest.New(t, pdpptest.Options{})
	srv.Fault(pdpptest.Fault{Path: "/v1/schema", Delay: time.Hour})
	root := t.TempDir()
	c, _ := Open(root, srv.URL())
	os.MkdirAll(filepath.Dir(c.File), 0o700)
	os.WriteFile(c.File, []byte(`{"credential":{"access_token":"`+srv.Token(pdpptest.TokenClient)+`"}}`), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Connect(ctx, ConnectOptions{ProviderURL: srv.URL(), CacheRoot: root, Getenv: func(string) string { return "" }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Connect with a cancelled context = %v, want context.Canceled", err)
	}
}

func TestCleartext(t *testing.T) {
	for url, want := range map[string]bool{
		"http://pdpp.example.com":     true,
		"http://10.0.0.5:8080":        true,
		"https://pdpp.example.com":    false,
		"http://127.0.0.1:7000":       false,
		"http://127.9.9.9":            false,
		"http://[::1]:7000":           false,
		"http://localhost:7000":       false,
		"http://api.localhost":        false,
		"http://LOCALHOST:7000":       false,
		"http://[::ffff:127.0.0.1]:7": false,
		"http://127.0.0.1.nip.io":     true,
		"not a url\x7f":               false,
		"ftp://files.example.com/pdp": false,
	} {
		if got := Cleartext(url); got != want {
			t.Errorf("Cleartext(%q) = %v, want %v", url, got, want)
		}
	}
}
