package hosted

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

// sink is a server that must never be reached: it records whatever arrives
// and answers what an attacker would (an active client token, a metadata
// document naming its own authorization server).
type sink struct {
	srv  *httptest.Server
	hits atomic.Int32
	mu   sync.Mutex
	seen []string
}

func newSink(t *testing.T) *sink {
	s := &sink{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.seen = append(s.seen, r.Method+" "+r.URL.Path+" auth="+r.Header.Get("Authorization")+" body="+string(b))
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"active":true,"pdpp_token_kind":"client","grant_id":"grt_evil","resource":"`+s.srv.URL+`","authorization_servers":["`+s.srv.URL+`"]}`)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sink) check(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.hits.Load(); n != 0 {
		t.Errorf("the redirect target was reached %d times: %q", n, s.seen)
	}
}

// TestIntrospectionRedirectIsNotFollowed: an introspection endpoint that
// redirects gets 503 naming where it pointed (without the query), and the
// bearer and the gateway's Basic credentials go nowhere else, whatever
// client the Introspector was given.
func TestIntrospectionRedirectIsNotFollowed(t *testing.T) {
	d := pdpptest.New(t, pdpptest.Options{})
	for _, status := range []int{301, 302, 303, 307, 308} {
		for _, given := range []string{"nil client", "caller's client that follows redirects"} {
			t.Run(fmt.Sprint(status, " ", given), func(t *testing.T) {
				evil := newSink(t)
				intro := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, evil.srv.URL+"/steal?token=leak-me", status)
				}))
				t.Cleanup(intro.Close)
				in := &Introspector{URL: intro.URL + "/introspect", ClientID: "rs", ClientSecret: "s3cret"}
				if given != "nil client" {
					in.HTTPClient = &http.Client{}
				}
				g := newGateway(t, gatewayOptions{double: d, mutate: func(o *Options) { o.Verifier = in }})
				x := g.do(t, req{token: d.Token(pdpptest.TokenClient), body: initBody})
				if x.status != http.StatusServiceUnavailable {
					t.Fatalf("status %d, want 503\n%.300s", x.status, x.body)
				}
				msg := fmt.Sprint(jsonField(t, x.body, "error", "message"))
				if jsonField(t, x.body, "error", "code") != "verifier_unavailable" ||
					!strings.Contains(msg, `"`+evil.srv.URL+`/steal?…"`) || strings.Contains(msg, "leak-me") {
					t.Errorf("answer does not name the redirect target without its query:\n%s", x.body)
				}
				evil.check(t)
			})
		}
	}
}

// TestMetadataRedirectIsNotFollowed: the RS's metadata route redirecting to
// another origin must not let that origin name the authorization servers.
func TestMetadataRedirectIsNotFollowed(t *testing.T) {
	evil := newSink(t)
	d := pdpptest.New(t, pdpptest.Options{})
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource" {
			http.Redirect(w, r, evil.srv.URL+"/.well-known/oauth-protected-resource?x=1", http.StatusTemporaryRedirect)
			return
		}
		d.ServeHTTP(w, r)
	}))
	t.Cleanup(provider.Close)
	g := newGateway(t, gatewayOptions{double: d, mutate: func(o *Options) {
		o.ProviderURL = provider.URL
		o.HTTPClient = &http.Client{} // follows redirects unless wrapped
	}})
	x := g.do(t, req{method: http.MethodGet, path: PathMetadata, noMCPHd: true})
	if x.status != http.StatusServiceUnavailable || jsonField(t, x.body, "error", "code") != "verifier_unavailable" {
		t.Fatalf("status %d, want 503 verifier_unavailable\n%s", x.status, x.body)
	}
	if msg := fmt.Sprint(jsonField(t, x.body, "error", "message")); !strings.Contains(msg, `"`+evil.srv.URL+`/.well-known/oauth-protected-resource?…"`) {
		t.Errorf("message does not name the redirect target: %s", msg)
	}
	if strings.Contains(string(x.body), "authorization_servers") {
		t.Errorf("a metadata document was served: %s", x.body)
	}
	if x := g.do(t, req{method: http.MethodGet, path: PathReady, noMCPHd: true}); x.status != http.StatusServiceUnavailable {
		t.Errorf("readyz with a redirecting RS: %d", x.status)
	}
	evil.check(t)
}

// TestMetadataFetchIsShared: with the RS's metadata route hanging, a
// request that gives up returns at once (the cache holds no lock across the
// fetch), concurrent requests share one fetch, and its failure is
// remembered, so a hung RS costs one fetch however many clients ask.
func TestMetadataFetchIsShared(t *testing.T) {
	d := pdpptest.New(t, pdpptest.Options{})
	var fetches, ended atomic.Int32
	arrived := make(chan struct{}, 16)
	release := make(chan struct{})
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/oauth-protected-resource" {
			d.ServeHTTP(w, r)
			return
		}
		fetches.Add(1)
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		ended.Add(1)
		http.Error(w, "down", http.StatusBadGateway)
	}))
	t.Cleanup(provider.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	g := newGateway(t, gatewayOptions{double: d, mutate: func(o *Options) { o.ProviderURL = provider.URL }})

	const n = 4
	statuses := make(chan int, n)
	for range n {
		go func() {
			x := g.do(t, req{method: http.MethodGet, path: PathMetadata, noMCPHd: true})
			statuses <- x.status
		}()
	}
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("no metadata fetch reached the RS")
	}

	// While that fetch hangs, a request whose client has gone returns.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan int, 1)
	go func() {
		rec := httptest.NewRecorder()
		r := httptest.NewRequestWithContext(ctx, http.MethodGet, PathMetadata, nil)
		r.Host = strings.TrimPrefix(g.url, "http://")
		g.h.ServeHTTP(rec, r)
		done <- rec.Code
	}()
	select {
	case code := <-done:
		if code != http.StatusServiceUnavailable {
			t.Errorf("cancelled request: status %d, want 503", code)
		}
		if ended.Load() != 0 {
			t.Error("a cancelled request returned only once the hanging fetch had ended: the cache holds its lock across the fetch")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled request waited for another request's metadata fetch: the cache holds its lock across the fetch")
	}

	close(release)
	for range n {
		select {
		case s := <-statuses:
			if s != http.StatusServiceUnavailable {
				t.Errorf("status %d, want 503 while the RS's metadata is unavailable", s)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("a metadata request got no answer")
		}
	}
	if x := g.do(t, req{method: http.MethodGet, path: PathMetadata, noMCPHd: true}); x.status != http.StatusServiceUnavailable ||
		x.header.Get("Retry-After") == "" {
		t.Errorf("just after the failure: status %d, Retry-After %q", x.status, x.header.Get("Retry-After"))
	}
	if got := fetches.Load(); got != 1 {
		t.Errorf("the RS's metadata was fetched %d times, want 1 (shared, failure remembered)", got)
	}
}

// TestMetadataCoreQueryBase: unauthenticated metadata never publishes a
// private provider address to a public origin.
func TestMetadataCoreQueryBase(t *testing.T) {
	d := pdpptest.New(t, pdpptest.Options{})
	publicRS := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"resource":"https://pdpp.example.com","authorization_servers":["https://pdpp.example.com"],"pdpp_core_query_base":"https://pdpp.example.com/v1"}`)
			return
		}
		d.ServeHTTP(w, r)
	}))
	t.Cleanup(publicRS.Close)
	cases := []struct {
		name     string
		provider string
		core     string
		public   string
		want     any // nil: field absent
	}{
		{"public origin, loopback provider", d.URL(), "", "https://mcp.example.com", nil},
		{"public origin, configured base", d.URL(), "https://pdpp.example.com/v1/", "https://mcp.example.com", "https://pdpp.example.com/v1"},
		{"public origin, the RS names a public base", publicRS.URL, "", "https://mcp.example.com", "https://pdpp.example.com/v1"},
		{"loopback origin, loopback provider", d.URL(), "", "", d.URL() + "/v1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newGateway(t, gatewayOptions{double: d, mutate: func(o *Options) {
				o.ProviderURL, o.CoreQueryBase, o.PublicURL = tc.provider, tc.core, tc.public
			}})
			rec := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodGet, PathMetadata, nil)
			if tc.public == "" {
				r.Host = strings.TrimPrefix(g.url, "http://")
			}
			g.h.ServeHTTP(rec, r)
			if rec.Code != 200 {
				t.Fatalf("status %d\n%s", rec.Code, rec.Body)
			}
			if got := jsonField(t, rec.Body.Bytes(), "pdpp_core_query_base"); got != tc.want {
				t.Errorf("pdpp_core_query_base = %v, want %v", got, tc.want)
			}
			if tc.public != "" && strings.Contains(rec.Body.String(), strings.TrimPrefix(tc.provider, "http://")+"/v1") {
				t.Errorf("the private provider address is published:\n%s", rec.Body)
			}
		})
	}
}

// TestKindCheckRedirectIsNotFollowed: without introspection, an RS whose
// kind check redirects gets the same 503 naming the target, and the bearer
// goes nowhere else.
func TestKindCheckRedirectIsNotFollowed(t *testing.T) {
	evil := newSink(t)
	d := pdpptest.New(t, pdpptest.Options{})
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/schema" {
			http.Redirect(w, r, evil.srv.URL+"/v1/schema?view=compact", http.StatusPermanentRedirect)
			return
		}
		d.ServeHTTP(w, r)
	}))
	t.Cleanup(provider.Close)
	probe, err := SchemaProbe(provider.URL, &http.Client{}, rsOptions())
	if err != nil {
		t.Fatal(err)
	}
	g := newGateway(t, gatewayOptions{double: d, mutate: func(o *Options) {
		o.ProviderURL = provider.URL
		o.Verifier = RSVerifier{Probe: probe}
	}})
	x := g.do(t, req{token: d.Token(pdpptest.TokenClient), body: initBody})
	if x.status != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503\n%.300s", x.status, x.body)
	}
	if msg := fmt.Sprint(jsonField(t, x.body, "error", "message")); !strings.Contains(msg, `"`+evil.srv.URL+`/v1/schema?…"`) {
		t.Errorf("message does not name the redirect target: %s", msg)
	}
	evil.check(t)
}
