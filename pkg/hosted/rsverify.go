package hosted

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

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
type RSVerifier struct {
	Probe KindProbe
}

// Verify implements Verifier.
func (v RSVerifier) Verify(ctx context.Context, token string) (*Principal, error) {
	vd, err := v.Probe(ctx, token)
	if err != nil {
		var rsErr *rs.Error
		if errors.As(err, &rsErr) {
			switch {
			case rsErr.Status == http.StatusUnauthorized:
				if rsErr.Code == "context.kind_mismatch" {
					// The RS refuses package tokens on its REST routes;
					// without introspection that is all that can be said.
					return nil, &AuthError{Status: http.StatusUnauthorized, Code: rsErr.Code,
						Message: "The resource server does not accept this token on its read API; /mcp without token introspection serves client tokens only"}
				}
				return nil, Inactive(rsErr.Code)
			case rsErr.Status == http.StatusForbidden && strings.HasPrefix(rsErr.Code, "grant_"):
				return nil, Inactive(rsErr.Code)
			}
		}
		return nil, fmt.Errorf("ask the resource server for the token kind: %w", err)
	}
	kind := Kind(vd.Kind)
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
