package hosted

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// KindProbe asks the resource server about one bearer: it returns the body
// of an answer that describes it (GET /v1/schema?view=compact, whose
// "bearer" object names the token kind and grant), or the *rs.Error the RS
// refused the bearer with, or a transport error.
//
// It is a function so that the owner check stdio uses can be plugged in
// unchanged.
type KindProbe func(ctx context.Context, token string) (body []byte, err error)

// SchemaProbe returns a KindProbe that reads GET /v1/schema?view=compact
// from providerURL with the bearer, through hc (shared by the process).
func SchemaProbe(providerURL string, hc *http.Client, o rs.Options) (KindProbe, error) {
	o.BaseURL = providerURL
	o.HTTPClient = hc
	o.Token = func() string { return "" }
	if _, err := rs.New(o); err != nil { // validate the URL once, up front
		return nil, err
	}
	return func(ctx context.Context, token string) ([]byte, error) {
		oo := o
		oo.Token = func() string { return token }
		c, err := rs.New(oo)
		if err != nil {
			return nil, err
		}
		resp, err := c.Get(ctx, "/v1/schema", rs.Query{{Key: "view", Value: "compact"}})
		if err != nil {
			return nil, err
		}
		return resp.Body, nil
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
	body, err := v.Probe(ctx, token)
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
	if !gjson.ValidBytes(body) { // gjson reads broken JSON leniently
		return nil, errors.New("ask the resource server for the token kind: the answer is not JSON")
	}
	b := gjson.GetBytes(body, "bearer")
	kind := Kind(strings.TrimSpace(b.Get("token_kind").Str))
	if kind == "" {
		return nil, &AuthError{Status: http.StatusForbidden, Code: "permission_error",
			Message: "The resource server did not report this token's kind, so /mcp cannot confirm it is grant-scoped; configure token introspection"}
	}
	return &Principal{
		Kind:     kind,
		GrantID:  b.Get("grant_id").Str,
		ClientID: b.Get("client_id").Str,
	}, nil
}
