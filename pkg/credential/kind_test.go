package credential

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

func rsClientFor(t *testing.T, url, token string) Getter {
	t.Helper()
	c, err := rs.New(rs.Options{BaseURL: url, Token: func() string { return token }})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestProbeKind: the verdict for each kind of bearer, without a credential
// file, and the typed failures the stdio guard and the hosted verifier rely on.
func TestProbeKind(t *testing.T) {
	srv := pdpptest.New(t, pdpptest.Options{})
	ctx := context.Background()
	for _, tt := range []struct {
		kind  pdpptest.TokenKind
		owner bool
	}{{pdpptest.TokenClient, false}, {pdpptest.TokenOwner, true}} {
		v, err := ProbeKind(ctx, rsClientFor(t, srv.URL(), srv.Token(tt.kind)))
		if err != nil || v.Owner != tt.owner || !v.Reported || v.Kind != string(tt.kind) {
			t.Errorf("%v: verdict %+v, %v", tt.kind, v, err)
		}
	}
	if _, err := ProbeKind(ctx, rsClientFor(t, srv.URL(), srv.Token(pdpptest.TokenRevoked))); rejection(err) == nil {
		t.Errorf("revoked token: %v, want a rejection", err)
	}

	for _, tt := range []struct {
		name, body string
		status     int
		wantErr    bool
		reported   bool
	}{
		{"no bearer object", `{"object":"schema"}`, 200, false, false},
		{"RS failure", `{"error":{"code":"internal","message":"x"}}`, 500, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}))
			defer hs.Close()
			v, err := ProbeKind(ctx, rsClientFor(t, hs.URL, "tok"))
			var pe *ProbeError
			if tt.wantErr != errors.As(err, &pe) || v.Reported != tt.reported || v.Owner {
				t.Errorf("verdict %+v, error %v (want ProbeError: %v)", v, err, tt.wantErr)
			}
		})
	}
}

// TestProbeKindRepeatedKeys: an answer that spells bearer, or one of its
// keys, twice says two things (this check would take the first, the RS or
// any JSON.parse reader the last), so it gives no verdict: a ProbeError
// wrapping rs_invalid_response, as for a body that is not JSON. Repeats
// inside objects the check does not read change nothing.
func TestProbeKindRepeatedKeys(t *testing.T) {
	const other = `"object":"schema","connectors":[{"key":"a","key":"b"}]`
	for _, tt := range []struct {
		name, body string
		kind       string // the verdict's kind; "" when refused
	}{
		{"token_kind twice", `{"bearer":{"token_kind":"client","token_kind":"owner"}}`, ""},
		{"token_kind twice, owner first", `{"bearer":{"token_kind":"owner","token_kind":"client"}}`, ""},
		{"token_kind escaped", `{"bearer":{"token_kind":"client","token\u005fkind":"owner"}}`, ""},
		{"token_kind escaped first", `{"bearer":{"tok\u0065n_kind":"client","token_kind":"owner"}}`, ""},
		{"bearer twice", `{"bearer":{"token_kind":"client"},"bearer":{"token_kind":"owner"}}`, ""},
		{"bearer escaped", `{"bearer":{"token_kind":"client"},` + other + `,"bear\u0065r":{"token_kind":"owner"}}`, ""},
		{"bearer twice, second not an object", `{"bearer":{"token_kind":"client"},"bearer":"owner"}`, ""},
		{"grant_id twice", `{"bearer":{"token_kind":"client","grant_id":"g1","grant_id":"g2"}}`, ""},
		{"another top-level key twice", `{"bearer":{"token_kind":"client"},"object":"schema","object":"list"}`, ""},
		{"repeats nested elsewhere", `{"bearer":{"token_kind":"client","scope":{"a":1,"a":2}},` + other + `}`, "client"},
		{"one of each", `{"bearer":{"token_kind":"client","grant_id":"g1","client_id":"c1"},` + other + `}`, "client"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(tt.body))
			}))
			defer hs.Close()
			v, err := ProbeKind(context.Background(), rsClientFor(t, hs.URL, "bearer-of-the-test"))
			if tt.kind != "" {
				if err != nil || v.Kind != tt.kind || v.Owner {
					t.Fatalf("verdict %+v, error %v; want kind %q", v, err, tt.kind)
				}
				return
			}
			var pe *ProbeError
			var te *rs.TransportError
			if !errors.As(err, &pe) || !errors.As(err, &te) || te.Code != rs.CodeInvalidResponse {
				t.Fatalf("verdict %+v, error %v; want a ProbeError wrapping %s", v, err, rs.CodeInvalidResponse)
			}
			if v.Reported || v.Owner || v.Kind != "" {
				t.Errorf("verdict %+v given with the refusal", v)
			}
			if !strings.Contains(err.Error(), "twice") {
				t.Errorf("error %q does not say a key repeats", err)
			}
		})
	}
}

// TestProbeKindNoAnswer: a Getter that returns neither an answer nor an
// error (the guard's getter did so when the credential was swapped before
// the probe went out) is a probe failure, not a nil dereference.
func TestProbeKindNoAnswer(t *testing.T) {
	v, err := ProbeKind(context.Background(), getterFunc(func(context.Context, string, rs.Query) (*rs.Response, error) {
		return nil, nil
	}))
	var pe *ProbeError
	if !errors.As(err, &pe) || v.Reported || v.Owner {
		t.Errorf("verdict %+v, error %v; want a ProbeError", v, err)
	}
}
