package hosted

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// countingVerifier answers from a table and counts calls.
type countingVerifier struct {
	calls atomic.Int64
	gate  chan struct{} // when non-nil, each call waits for it
	table map[string]func() (*Principal, error)
}

func (v *countingVerifier) Verify(ctx context.Context, token string) (*Principal, error) {
	v.calls.Add(1)
	if v.gate != nil {
		<-v.gate
	}
	if f, ok := v.table[token]; ok {
		return f()
	}
	return nil, errInvalidToken
}

func TestCachedVerifierTTLs(t *testing.T) {
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	down := true
	inner := &countingVerifier{table: map[string]func() (*Principal, error){
		"good": func() (*Principal, error) { return &Principal{Kind: KindClient}, nil },
		"short": func() (*Principal, error) {
			return &Principal{Kind: KindClient, Expires: clk.now().Add(10 * time.Second)}, nil
		},
		"flaky": func() (*Principal, error) {
			if down {
				return nil, errors.New("rs down")
			}
			return &Principal{Kind: KindClient}, nil
		},
	}}
	c := NewCachedVerifier(inner, CacheOptions{Now: clk.now})
	ctx := context.Background()
	steps := []struct {
		name      string
		token     string
		advance   time.Duration
		wantCalls int64 // cumulative
		wantErr   bool
	}{
		{"first good asks", "good", 0, 1, false},
		{"good cached", "good", 59 * time.Second, 1, false},
		{"good expires at 60s", "good", time.Second, 2, false},
		{"short asks", "short", 0, 3, false},
		{"short cached for its exp only", "short", 9 * time.Second, 3, false},
		{"short asks again after exp", "short", time.Second, 4, false},
		{"bad asks", "bad", 0, 5, true},
		{"bad cached briefly", "bad", 4 * time.Second, 5, true},
		{"bad asks after negative TTL", "bad", time.Second, 6, true},
		{"undecided is not cached", "flaky", 0, 7, true},
		{"undecided asks again", "flaky", 0, 8, true},
	}
	for _, s := range steps {
		clk.advance(s.advance)
		p, err := c.Verify(ctx, s.token)
		if got := inner.calls.Load(); got != s.wantCalls {
			t.Errorf("%s: %d inner calls, want %d", s.name, got, s.wantCalls)
		}
		if (err != nil) != s.wantErr {
			t.Errorf("%s: err %v", s.name, err)
		}
		if err == nil && p.TokenHash != TokenHash(s.token) {
			t.Errorf("%s: TokenHash not set", s.name)
		}
	}
	down = false
	if _, err := c.Verify(ctx, "flaky"); err != nil {
		t.Errorf("flaky after recovery: %v", err)
	}
}

func TestCachedVerifierBoundedAndSingleFlight(t *testing.T) {
	inner := &countingVerifier{gate: make(chan struct{})}
	c := NewCachedVerifier(inner, CacheOptions{MaxEntries: 100})
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = c.Verify(context.Background(), "same")
		}()
	}
	close(inner.gate) // release the one flight; the others share it or hit the cache
	wg.Wait()
	if got := inner.calls.Load(); got != 1 {
		t.Errorf("50 concurrent checks of one token made %d inner calls, want 1", got)
	}
	for i := range 1000 {
		_, _ = c.Verify(context.Background(), "tok"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+string(rune(i)))
	}
	if n := c.Len(); n > 100 {
		t.Errorf("cache holds %d verdicts, bound is 100", n)
	}
}

// TestBadTokenFlood: 2,000 requests with one bad token cost a handful of
// RS calls, over real HTTP.
func TestBadTokenFlood(t *testing.T) {
	g := newGateway(t, gatewayOptions{})
	g.double.ResetRequests()
	bad := g.token(pdpptest.TokenUnknown)
	const n = 2000
	var wg sync.WaitGroup
	var non401 atomic.Int64
	sem := make(chan struct{}, 16)
	for range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			r, _ := http.NewRequest(http.MethodPost, g.url+PathMCP, strings.NewReader(initBody))
			r.Header.Set("Authorization", "Bearer "+bad)
			resp, err := http.DefaultClient.Do(r)
			if err != nil || resp.StatusCode != 401 {
				non401.Add(1)
			}
			if resp != nil {
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	if non401.Load() != 0 {
		t.Errorf("%d requests did not get 401", non401.Load())
	}
	calls := len(g.double.Requests())
	t.Logf("%d bad-token requests, %d RS calls", n, calls)
	if calls > 5 {
		t.Errorf("%d bad-token requests made %d RS calls; want a handful", n, calls)
	}
}

// TestIntrospectorHostile: what the introspection endpoint answers, and
// what the gateway makes of it.
func TestIntrospectorHostile(t *testing.T) {
	var status atomic.Int64
	var body atomic.Value
	var gotForm, gotUser, gotPass atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, _ := r.BasicAuth()
		gotUser.Store(u)
		gotPass.Store(p)
		_ = r.ParseForm()
		gotForm.Store(r.PostForm.Encode())
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(int(status.Load()))
		_, _ = w.Write([]byte(body.Load().(string)))
	}))
	t.Cleanup(srv.Close)
	now := time.Unix(1_800_000_000, 0)
	in := &Introspector{URL: srv.URL, ClientID: "gw", ClientSecret: "s3:cret", Now: func() time.Time { return now }}
	cases := []struct {
		name   string
		status int
		body   string
		want   string // "kind:<k>", "auth:<status>:<code>", or "undecided"
	}{
		{"client", 200, `{"active":true,"pdpp_token_kind":"client","grant_id":"grt_1","exp":1800000100}`, "kind:client"},
		{"owner", 200, `{"active":true,"pdpp_token_kind":"owner"}`, "kind:owner"},
		{"no kind", 200, `{"active":true}`, "auth:401:context.kind_mismatch"},
		{"inactive", 200, `{"active":false}`, "auth:401:authentication_error"},
		{"active as string", 200, `{"active":"true","pdpp_token_kind":"client"}`, "auth:401:authentication_error"},
		{"revoked", 200, `{"active":false,"inactive_reason":"grant_revoked"}`, "auth:403:grant_revoked"},
		{"invalid grant", 200, `{"active":false,"inactive_reason":"grant_invalid"}`, "auth:403:grant_invalid"},
		{"context", 200, `{"active":false,"inactive_reason":"context.identity_mismatch"}`, "auth:401:context.identity_mismatch"},
		{"expired exp", 200, `{"active":true,"pdpp_token_kind":"client","exp":1700000000}`, "auth:401:authentication_error"},
		{"our credentials refused", 401, `{"error":{"code":"context.authentication_failed"}}`, "undecided"},
		{"server error", 500, `oops`, "undecided"},
		{"not JSON", 200, `<html>`, "undecided"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status.Store(int64(tc.status))
			body.Store(tc.body)
			p, err := in.Verify(context.Background(), "tok&en=1")
			var got string
			var ae *AuthError
			switch {
			case err == nil:
				got = "kind:" + string(p.Kind)
			case errors.As(err, &ae):
				got = "auth:" + strconv.Itoa(ae.Status) + ":" + ae.Code
			default:
				got = "undecided"
			}
			if got != tc.want {
				t.Errorf("got %s (err %v), want %s", got, err, tc.want)
			}
		})
	}
	if gotForm.Load() != "token=tok%26en%3D1" || gotUser.Load() != "gw" || gotPass.Load() != "s3%3Acret" {
		t.Errorf("sent form %v, basic %v:%v", gotForm.Load(), gotUser.Load(), gotPass.Load())
	}
}
