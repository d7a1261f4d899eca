package credential

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
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
