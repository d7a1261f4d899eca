package hosted

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// KindProbe asks the resource server about one bearer: what kind of token
// it is and which grant it carries, or the *rs.Error the RS refused the
// bearer with, or a transport error. SchemaProbe gives the check stdio uses
// (credential.ProbeKind); tests may plug in another.
type KindProbe func(ctx context.Context, token string) (credential.Verdict, error)

// SchemaProbe returns a KindProbe that runs credential.ProbeKind against
// providerURL with the bearer, through hc (shared by the process).
func SchemaProbe(providerURL string, hc *http.Client, o rs.Options) (KindProbe, error) {
	o.BaseURL = providerURL
	o.HTTPClient = hc
	o.Token = func() string { return "" }
	if _, err := rs.New(o); err != nil { // validate the URL once, up front
		return nil, err
	}
	return func(ctx context.Context, token string) (credential.Verdict, error) {
		oo := o
		oo.Token = func() string { return token }
		c, err := rs.New(oo)
		if err != nil {
			return credential.Verdict{}, err
		}
		return credential.ProbeKind(ctx, c)
	}, nil
}

// RSVerifier decides a bearer's kind from the resource server's own answer
// (bearer.token_kind of the compact schema): the RS is the authority on the
// tokens it accepts, so no second source is consulted. A bearer the RS does
// not report a kind for is refused: /mcp serves only kinds it can confirm.
// The kind check's path and query never depend on the caller, so any 4xx
// the RS answers it with (credential.ClassifyRefusal) is final for that
// token: a refusal, never "retry".
type RSVerifier struct {
	Probe KindProbe
}

// Verify implements Verifier.
func (v RSVerifier) Verify(ctx context.Context, token string) (*Principal, error) {
	vd, err := v.Probe(ctx, token)
	if err != nil {
		switch ref, rsErr := credential.ClassifyRefusal(err); ref {
		case credential.RefusedGrant:
			return nil, Inactive(rsErr.Code)
		case credential.RefusedToken:
			if rsErr.Code == "context.kind_mismatch" {
				// The RS refuses package tokens on its REST routes;
				// without introspection that is all that can be said.
				return nil, &AuthError{Status: http.StatusUnauthorized, Code: rsErr.Code,
					Message: "The resource server does not accept this token on its read API; /mcp without token introspection serves client tokens only"}
			}
			return nil, Inactive(rsErr.Code)
		case credential.RefusedScope, credential.RefusedRequest:
			return nil, notAccepted(rsErr)
		}
		return nil, fmt.Errorf("ask the resource server for the token kind: %w", err)
	}
	kind := Kind(strings.ToLower(vd.Kind))
	if kind == "" {
		return nil, &AuthError{Status: http.StatusForbidden, Code: "permission_error",
			Message: "The resource server did not report this token's kind, so /mcp cannot confirm it is grant-scoped; configure token introspection"}
	}
	return &Principal{
		Kind:     kind,
		GrantID:  vd.GrantID,
		ClientID: vd.ClientID,
	}, nil
}

// notAccepted is the final refusal of a token the RS answered the kind
// check for with a 4xx that names no grant problem (the reference RS
// answers an MCP package token with 404 not_found): what the RS said, and
// what the person can do instead of retrying.
func notAccepted(e *rs.Error) *AuthError {
	said := fmt.Sprintf("HTTP %d", e.Status)
	if e.Code != "" {
		said += " " + e.Code
	}
	if e.Message != "" {
		said += ": " + strconv.Quote(boundText(e.Message, 200))
	}
	return &AuthError{Status: http.StatusForbidden, Code: "token_not_accepted",
		Message: "The resource server refused this token when asked what kind it is (" + said + "), so this endpoint will not serve it; retrying will not help. " +
			"Without token introspection this endpoint serves grant-scoped client tokens: authorize a single grant for it, " +
			"or connect an MCP package token to the provider's own /mcp endpoint."}
}

// boundText cuts s to at most n bytes on a rune boundary, saying so.
func boundText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
