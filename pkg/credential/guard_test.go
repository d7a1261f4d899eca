package credential

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// fixture is a guard in front of a real pdpptest resource server, with the
// credential cache in a temporary directory.
type fixture struct {
	t      *testing.T
	srv    *pdpptest.Server
	cache  Cache
	holder *Holder
	guard  *Guard
}

// write replaces the cache file, as `pdpp connect` would.
func (f *fixture) write(token, extra string) {
	f.t.Helper()
	if err := os.MkdirAll(filepath.Dir(f.cache.File), 0o700); err != nil {
		f.t.Fatal(err)
	}
	body := cacheJSON(`"access_token":"` + token + `","token_type":"Bearer"` + extra)
	if err := os.WriteFile(f.cache.File, []byte(body), 0o600); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) streams() (*rs.Response, error) {
	return f.guard.Get(context.Background(), "/v1/streams", nil)
}

// paths lists the requests the resource server received, "path?query".
func (f *fixture) paths() []string {
	var out []string
	for _, r := range f.srv.Requests() {
		p := r.Path
		if r.RawQuery != "" {
			p += "?" + r.RawQuery
		}
		out = append(out, p)
	}
	return out
}

const probePath = "/v1/schema?view=compact"

func wantPaths(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("requests = %q, want %q", got, want)
	}
}

func wantRSError(t *testing.T, err error, status int) *rs.Error {
	t.Helper()
	var rsErr *rs.Error
	if !errors.As(err, &rsErr) {
		t.Fatalf("error = %v, want *rs.Error", err)
	}
	if rsErr.Status != status {
		t.Errorf("status = %d, want %d", rsErr.Status, status)
	}
	return rsErr
}

// wantOutcome checks that err reports a refused credential and what the
// guard did about it.
func wantOutcome(t *testing.T, err error, status int, want Outcome) *RejectedError {
	t.Helper()
	wantRSError(t, err, status)
	var rej *RejectedError
	if !errors.As(err, &rej) {
		t.Fatalf("error = %v, want *RejectedError", err)
	}
	if rej.Outcome != want {
		t.Errorf("outcome = %d, want %d", rej.Outcome, want)
	}
	return rej
}

func TestGuardClientToken(t *testing.T) {
	f := fixtureWith(t, kind(pdpptest.TokenClient), "")

	if err := f.guard.Probe(context.Background()); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	for range 2 {
		if _, err := f.streams(); err != nil {
			t.Fatalf("Get: %v", err)
		}
	}
	// One probe, then the reads; the verdict is remembered.
	wantPaths(t, f.paths(), probePath, "/v1/streams", "/v1/streams")
}

// TestGuardBaseURL: the guard names the resource server it reads, which a
// fan-out compares to tell whether two grants may share a connection.
func TestGuardBaseURL(t *testing.T) {
	f := fixtureWith(t, kind(pdpptest.TokenClient), "")
	if got := f.guard.BaseURL(); got != f.cache.ProviderURL || got == "" {
		t.Errorf("BaseURL = %q, want %q", got, f.cache.ProviderURL)
	}
	if got := NewGuard(getterFunc(func(context.Context, string, rs.Query) (*rs.Response, error) { return nil, nil }), f.holder, nil).BaseURL(); got != "" {
		t.Errorf("BaseURL of a guard over a client that does not say = %q", got)
	}
}

// fixtureWith starts a double, caches the token pick returns (with extra
// credential members) and builds a guard from that cache.
func fixtureWith(t *testing.T, pick func(*pdpptest.Server) string, extra string) *fixture {
	t.Helper()
	srv := pdpptest.New(t, pdpptest.Options{})
	cache, err := Open(t.TempDir(), srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, srv: srv, cache: cache}
	f.write(pick(srv), extra)
	cred, err := cache.Load(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	f.holder = NewHolder(cache, cred)
	client, err := rs.New(rs.Options{BaseURL: cache.ProviderURL, Token: f.holder.Token})
	if err != nil {
		t.Fatal(err)
	}
	f.guard = NewGuard(client, f.holder, nil)
	return f
}

func kind(k pdpptest.TokenKind) func(*pdpptest.Server) string {
	return func(s *pdpptest.Server) string { return s.Token(k) }
}

func TestGuardRefusesOwnerToken(t *testing.T) {
	f := fixtureWith(t, kind(pdpptest.TokenOwner), "")
	err := f.guard.Probe(context.Background())
	var ce *Error
	if !errors.As(err, &ce) || ce.Code != CodeOwnerRefused || ce.ExitCode() != ExitNoPerm {
		t.Fatalf("Probe = %v, want owner_token_refused", err)
	}
	wantMsg := "the resource server reports it is an owner token (GET /v1/schema bearer.token_kind)"
	if !strings.Contains(err.Error(), wantMsg) || !strings.Contains(err.Error(), "Run `pdpp connect "+f.cache.ProviderURL+"`") {
		t.Errorf("message = %q", err)
	}
	for range 2 {
		_, err := f.streams()
		if !errors.As(err, &ce) || ce.ErrorCode() != CodeOwnerRefused {
			t.Fatalf("Get = %v, want owner_token_refused", err)
		}
	}
	// No read ever reached the resource server with the owner token.
	wantPaths(t, f.paths(), probePath)
}

func TestGuardProbesAgainAfterUnreachableStart(t *testing.T) {
	for _, tt := range []struct {
		name  string
		token pdpptest.TokenKind
		owner bool
	}{
		{"client", pdpptest.TokenClient, false},
		{"owner", pdpptest.TokenOwner, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := fixtureWith(t, kind(tt.token), "")
			down := f.srv.Fault(pdpptest.Fault{Path: "/v1/schema", CloseConnection: true})

			err := f.guard.Probe(context.Background())
			var te *rs.TransportError
			if !errors.As(err, &te) || errors.As(err, new(*Error)) {
				t.Fatalf("Probe while unreachable = %v, want a transport error", err)
			}
			// Unknown kind: reads fail closed and probe again each time.
			for range 2 {
				if _, err := f.streams(); !errors.As(err, &te) {
					t.Fatalf("Get while unreachable = %v, want a transport error", err)
				}
			}
			down()
			_, err = f.streams()
			if tt.owner {
				var ce *Error
				if !errors.As(err, &ce) || ce.ErrorCode() != CodeOwnerRefused {
					t.Fatalf("Get = %v, want owner_token_refused", err)
				}
				wantPaths(t, f.paths(), probePath, probePath, probePath, probePath)
				return
			}
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			wantPaths(t, f.paths(), probePath, probePath, probePath, probePath, "/v1/streams")
		})
	}
}

func TestGuardProbeFailureAdvice(t *testing.T) {
	f := fixtureWith(t, kind(pdpptest.TokenClient), "")
	f.srv.Fault(pdpptest.Fault{Path: "/v1/schema", Status: 503, Times: 1})
	_, err := f.streams()
	wantRSError(t, err, 503)
	var pe *ProbeError
	if !errors.As(err, &pe) {
		t.Fatalf("error = %v, want *ProbeError", err)
	}
	if _, err := f.streams(); err != nil {
		t.Fatalf("Get after the fault: %v", err)
	}
}

func TestGuardProbeRejected(t *testing.T) {
	for _, tt := range []struct {
		name string
		kind pdpptest.TokenKind
		what string
	}{
		{"unknown token", pdpptest.TokenUnknown, "HTTP 401"},
		{"revoked grant", pdpptest.TokenRevoked, "HTTP 403 grant_revoked"},
		{"expired grant", pdpptest.TokenExpired, "HTTP 403 grant_expired"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := fixtureWith(t, kind(tt.kind), "")
			err := f.guard.Probe(context.Background())
			var ce *Error
			if !errors.As(err, &ce) || ce.Code != CodeRejected || ce.ExitCode() != ExitConfig {
				t.Fatalf("Probe = %v, want credential_rejected", err)
			}
			want := "The resource server at " + f.cache.ProviderURL + " rejected the cached PDPP credential from " + f.cache.File +
				" (" + tt.what
			if !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "). Run `pdpp connect "+f.cache.ProviderURL+"` again.") {
				t.Errorf("message:\n%s\nwant:\n%s", err, want)
			}
		})
	}
}

func TestGuardReloadAfterRejection(t *testing.T) {
	client := func(s *pdpptest.Server) string { return s.IssueClientToken("client") }
	for _, tt := range []struct {
		name string
		// rotate changes the cache after the first token stops working; it
		// returns the token a swap should install ("" for none).
		rotate  func(f *fixture) string
		outcome Outcome
		// cause is the credential code of the reason no replacement was
		// usable.
		cause     string
		thenOwner bool
	}{
		{
			name:    "same token in the cache",
			rotate:  func(f *fixture) string { return "" },
			outcome: OutcomeUnchanged,
		},
		{
			name: "new client token",
			rotate: func(f *fixture) string {
				tok := f.srv.IssueClientToken("client")
				f.write(tok, "")
				return tok
			},
			outcome: OutcomeReloaded,
		},
		{
			name: "cache removed",
			rotate: func(f *fixture) string {
				if err := os.Remove(f.cache.File); err != nil {
					f.t.Fatal(err)
				}
				return ""
			},
			outcome: OutcomeUnusable, cause: CodeNotConnected,
		},
		{
			name: "cache now expired",
			rotate: func(f *fixture) string {
				f.write(f.srv.IssueClientToken("client"), `,"expires_at":"2020-01-01T00:00:00Z"`)
				return ""
			},
			outcome: OutcomeUnusable, cause: CodeExpired,
		},
		{
			name: "cache now marked owner",
			rotate: func(f *fixture) string {
				f.write(f.srv.Token(pdpptest.TokenOwner), `,"pdpp_token_kind":"owner"`)
				return ""
			},
			outcome: OutcomeUnusable, cause: CodeOwnerRefused,
		},
		{
			name: "cache now holds an unmarked owner token",
			rotate: func(f *fixture) string {
				tok := f.srv.Token(pdpptest.TokenOwner)
				f.write(tok, "")
				return tok
			},
			outcome:   OutcomeReloaded,
			thenOwner: true,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := fixtureWith(t, client, "")
			if _, err := f.streams(); err != nil {
				t.Fatalf("first Get: %v", err)
			}
			old := f.holder.Token()
			f.srv.RevokeToken(old)
			next := tt.rotate(f)

			_, err := f.streams()
			rej := wantOutcome(t, err, 401, tt.outcome)
			var ce *Error
			if tt.cause != "" && (!errors.As(rej.Cause, &ce) || ce.Code != tt.cause) {
				t.Errorf("cause = %v, want code %s", rej.Cause, tt.cause)
			}
			if strings.Contains(err.Error(), old) || next != "" && strings.Contains(err.Error(), next) {
				t.Errorf("error contains a token")
			}
			if next == "" {
				if f.holder.Token() != old {
					t.Fatalf("token was swapped although the cache held no usable replacement")
				}
				return
			}
			if f.holder.Token() != next {
				t.Fatalf("token not swapped in")
			}
			f.srv.ResetRequests()
			_, err = f.streams()
			if tt.thenOwner {
				var ce *Error
				if !errors.As(err, &ce) || ce.ErrorCode() != CodeOwnerRefused {
					t.Fatalf("Get with the reloaded owner token = %v, want owner_token_refused", err)
				}
				wantPaths(t, f.paths(), probePath)
				return
			}
			if err != nil {
				t.Fatalf("Get with the reloaded token: %v", err)
			}
			// The new token is checked before it serves data.
			wantPaths(t, f.paths(), probePath, "/v1/streams")
		})
	}
}

// reported reports whether err says what the guard did or why it could not
// read: every failure of a guarded read must.
func reported(err error) bool {
	var rej *RejectedError
	var pe *ProbeError
	return errors.As(err, &rej) || errors.As(err, &pe)
}

func TestGuardReloadOnGrantRevoked(t *testing.T) {
	f := fixtureWith(t, kind(pdpptest.TokenRevoked), "")
	// The probe itself is refused with 403 grant_revoked; the cache has a
	// fresh grant by then.
	fresh := f.srv.IssueClientToken("client")
	f.write(fresh, "")
	_, err := f.streams()
	wantOutcome(t, err, 403, OutcomeReloaded)
	if _, err := f.streams(); err != nil {
		t.Fatalf("Get after reload: %v", err)
	}
	if f.holder.Token() != fresh {
		t.Errorf("token not swapped")
	}
}

// TestGuardConcurrentRotation rotates the token while reads run in parallel
// and checks the one property that matters: every data read the resource
// server saw was made with a token whose kind had been asked first.
func TestGuardConcurrentRotation(t *testing.T) {
	f := fixtureWith(t, func(s *pdpptest.Server) string { return s.IssueClientToken("client") }, "")
	const workers, rounds = 8, 5
	for range rounds {
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 3 {
					_, err := f.streams()
					if err != nil && !reported(err) {
						t.Errorf("Get: %v (neither a rejection nor a probe failure)", err)
					}
				}
			}()
		}
		f.srv.RevokeToken(f.holder.Token())
		f.write(f.srv.IssueClientToken("client"), "")
		wg.Wait()
	}
	probed := map[string]bool{}
	data := 0
	for _, r := range f.srv.Requests() {
		auth := r.Header.Get("Authorization")
		if r.Path == "/v1/schema" {
			probed[auth] = true
			continue
		}
		data++
		if !probed[auth] {
			t.Fatalf("data read %s with a token that was never probed", r.Path)
		}
	}
	if data == 0 || len(probed) < 2 {
		t.Errorf("%d data reads, %d probed tokens: the test did not rotate", data, len(probed))
	}
}

// TestGuardProbeDeepBody: a start-up probe answered with 16 MB of nested
// arrays is an invalid response, not a crash.
func TestGuardProbeDeepBody(t *testing.T) {
	f := fixtureWith(t, kind(pdpptest.TokenClient), "")
	f.srv.Fault(pdpptest.Fault{Path: "/v1/schema", Status: 200,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: bytes.Repeat([]byte("["), 16<<20-1)})
	err := f.guard.Probe(context.Background())
	var tr *rs.TransportError
	if !errors.As(err, &tr) || tr.Code != rs.CodeInvalidResponse {
		t.Fatalf("Probe = %v, want %s", err, rs.CodeInvalidResponse)
	}
}

// TestGuardProbeRepeatedKind: a kind check answered with token_kind twice
// (client first, owner last) gives no verdict, at start-up or in a session:
// no read is ever made with the token, and each call asks again.
func TestGuardProbeRepeatedKind(t *testing.T) {
	f := fixtureWith(t, kind(pdpptest.TokenOwner), "")
	f.srv.Fault(pdpptest.Fault{Path: "/v1/schema", Status: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: []byte(`{"object":"schema","bearer":{"token_kind":"client","token\u005fkind":"owner"}}`)})
	var tr *rs.TransportError
	if err := f.guard.Probe(context.Background()); !errors.As(err, &tr) || tr.Code != rs.CodeInvalidResponse {
		t.Fatalf("Probe = %v, want %s", err, rs.CodeInvalidResponse)
	}
	for range 2 {
		var pe *ProbeError
		if _, err := f.streams(); !errors.As(err, &pe) {
			t.Fatalf("Get = %v, want a ProbeError", err)
		}
	}
	wantPaths(t, f.paths(), probePath, probePath, probePath)
}

// A 401 about the stream asked for is a scope refusal: the token still works,
// so the guard neither re-reads the cache nor reports a rejected credential.
func TestGuardScopeRefusalIsNotARejection(t *testing.T) {
	f := fixtureWith(t, kind(pdpptest.TokenClient), "")
	// A different token in the cache would be swapped in if the guard
	// treated the refusal as a dead token.
	tok := f.holder.Token()
	f.write(f.srv.IssueClientToken("client"), "")
	_, err := f.guard.Get(context.Background(), "/v1/streams/no_such_stream/records", nil)
	rsErr := wantRSError(t, err, 401)
	if !ScopeRefusal(rsErr) {
		t.Fatalf("code %s is not a scope refusal", rsErr.Code)
	}
	var rej *RejectedError
	if errors.As(err, &rej) {
		t.Errorf("scope refusal reported as a rejected credential (outcome %d)", rej.Outcome)
	}
	if f.holder.Token() != tok {
		t.Errorf("token swapped after a scope refusal")
	}
}

func TestScopeRefusal(t *testing.T) {
	for _, tc := range []struct {
		err  *rs.Error
		want bool
	}{
		{&rs.Error{Status: 401, Code: "context.stream_not_allowed"}, true},
		{&rs.Error{Status: 401, Code: "context.instance_mismatch"}, true},
		{&rs.Error{Status: 401, Code: "context.rights_missing"}, true},
		{&rs.Error{Status: 401, Code: "context.active_false"}, false},
		{&rs.Error{Status: 401, Code: "context.kind_mismatch"}, false},
		{&rs.Error{Status: 401, Code: "authentication_error"}, false},
		{&rs.Error{Status: 403, Code: "context.stream_not_allowed"}, false},
		{nil, false},
	} {
		if got := ScopeRefusal(tc.err); got != tc.want {
			t.Errorf("ScopeRefusal(%+v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// The cache key follows the token in use and never contains it.
func TestGuardCredentialKey(t *testing.T) {
	f := fixtureWith(t, func(s *pdpptest.Server) string { return s.IssueClientToken("client") }, "")
	k1 := f.guard.CredentialKey()
	if k1 == "" || strings.Contains(k1, f.holder.Token()) || k1 != Key(f.holder.Token()) {
		t.Fatalf("key %q", k1)
	}
	cred, err := f.cache.Load(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	f.write(f.srv.IssueClientToken("client"), "")
	if cred, err = f.cache.Load(time.Now()); err != nil {
		t.Fatal(err)
	}
	if !f.holder.swap(f.holder.load(), cred) {
		t.Fatal("swap failed")
	}
	if k2 := f.guard.CredentialKey(); k2 == k1 {
		t.Errorf("key unchanged after the token changed")
	}
}
