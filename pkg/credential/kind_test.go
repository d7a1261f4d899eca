package credential

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func rsClientFor(t *testing.T, url string) func(string) Getter {
	return func(token string) Getter {
		c, err := rs.New(rs.Options{BaseURL: url, Token: func() string { return token }})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
}

func probes(srv *pdpptest.Server) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Path == "/v1/schema" {
			n++
		}
	}
	return n
}

func TestKindChecker(t *testing.T) {
	srv := pdpptest.New(t, pdpptest.Options{})
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	k := NewKindChecker(KindCheckerOptions{Client: rsClientFor(t, srv.URL()), Now: clock.now, MaxEntries: 3})
	ctx := context.Background()

	for _, tt := range []struct {
		kind  pdpptest.TokenKind
		owner bool
	}{{pdpptest.TokenClient, false}, {pdpptest.TokenOwner, true}} {
		v, err := k.Check(ctx, srv.Token(tt.kind))
		if err != nil || v.Owner != tt.owner || !v.Reported {
			t.Errorf("%v: verdict %+v, %v", tt.kind, v, err)
		}
	}
	before := probes(srv)
	if v, err := k.Check(ctx, srv.Token(pdpptest.TokenOwner)); err != nil || !v.Owner {
		t.Errorf("cached owner verdict: %+v %v", v, err)
	}
	if probes(srv) != before {
		t.Errorf("a fresh verdict was asked again")
	}
	clock.add(31 * time.Second)
	k.Check(ctx, srv.Token(pdpptest.TokenOwner))
	if probes(srv) != before+1 {
		t.Errorf("an expired verdict was not asked again")
	}

	// A refused token stays refused for 5 s, then is asked again.
	revoked := srv.Token(pdpptest.TokenRevoked)
	if _, err := k.Check(ctx, revoked); Rejection(err) == nil {
		t.Fatalf("revoked token: %v, want a rejection", err)
	}
	before = probes(srv)
	if _, err := k.Check(ctx, revoked); Rejection(err) == nil || probes(srv) != before {
		t.Errorf("rejection not cached: %v", err)
	}
	clock.add(6 * time.Second)
	k.Check(ctx, revoked)
	if probes(srv) != before+1 {
		t.Errorf("rejection cached past 5 s")
	}

	// The cache stays bounded whatever the number of tokens.
	for range 10 {
		k.Check(ctx, srv.IssueClientToken("client"))
	}
	if n := k.Len(); n > 3 {
		t.Errorf("%d entries, bound is 3", n)
	}
	for key := range k.entries {
		if string(key[:]) == revoked {
			t.Errorf("a token is a cache key")
		}
	}
}

// TestKindCheckerSharesRequests: concurrent checks of one token make one
// request, and a failure to reach the RS is not cached.
func TestKindCheckerSharesRequests(t *testing.T) {
	var hits atomic.Int32
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	fail := atomic.Bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if fail.Load() {
			http.Error(w, `{"error":{"code":"internal","message":"x"}}`, 500)
			return
		}
		select {
		case arrived <- struct{}{}:
		default:
		}
		<-release
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"object":"schema","bearer":{"token_kind":"client"}}`))
	}))
	defer srv.Close()
	k := NewKindChecker(KindCheckerOptions{Client: rsClientFor(t, srv.URL)})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v, err := k.Check(context.Background(), "tok"); err != nil || v.Owner {
				t.Errorf("verdict %+v %v", v, err)
			}
		}()
	}
	<-arrived
	close(release)
	wg.Wait()
	if n := hits.Load(); n != 1 {
		t.Errorf("%d requests for one token, want 1", n)
	}

	fail.Store(true)
	for range 2 {
		if _, err := k.Check(context.Background(), "other"); err == nil {
			t.Fatal("want an error")
		}
	}
	if n := hits.Load(); n != 3 {
		t.Errorf("%d requests, want a failure asked again (3)", n)
	}
}
