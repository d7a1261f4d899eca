package credential

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// Verdict is what the resource server says about a bearer token.
type Verdict struct {
	// Owner is true when the RS reports an owner token; such a token must
	// never be used to serve data.
	Owner bool
	// Reported is false when the RS did not say (no bearer.token_kind);
	// the token is then not known to be an owner token.
	Reported bool
	// Kind is bearer.token_kind as reported (trimmed), "" when absent.
	Kind string
	// GrantID and ClientID are bearer.grant_id and bearer.client_id, when
	// the RS names them.
	GrantID, ClientID string
}

// ProbeKind asks the resource server what kind of token get sends:
// GET /v1/schema?view=compact, field bearer.token_kind. It needs no
// credential file, so it serves any bearer. An RS or transport failure is
// returned wrapped (the *rs.Error stays reachable with errors.As); a token
// the RS refuses (see Rejection) is such an error.
func ProbeKind(ctx context.Context, get Getter) (Verdict, error) {
	resp, err := get.Get(ctx, "/v1/schema", rs.Query{{Key: "view", Value: "compact"}})
	if err != nil {
		if rejection(err) != nil {
			return Verdict{}, fmt.Errorf("check token kind (GET /v1/schema): %w", err)
		}
		return Verdict{}, &ProbeError{Err: err}
	}
	if resp == nil {
		return Verdict{}, &ProbeError{Err: errors.New("no answer to GET /v1/schema")}
	}
	// The RS client already refuses deep bodies; a Getter that is not that
	// client must not be able to crash the check either, so look again
	// before gjson's recursive walk.
	if err := rs.CheckDepth(resp.Body, rs.MaxDepth); err != nil {
		return Verdict{}, &ProbeError{Err: &rs.TransportError{
			Code: rs.CodeInvalidResponse, Status: resp.Status, RequestID: resp.RequestID, BaseURL: resp.BaseURL, Err: err}}
	}
	if !gjson.ValidBytes(resp.Body) { // gjson reads broken JSON leniently
		return Verdict{}, &ProbeError{Err: &rs.TransportError{Code: rs.CodeInvalidResponse, Status: resp.Status,
			RequestID: resp.RequestID, BaseURL: resp.BaseURL, Err: errors.New("the answer is not JSON")}}
	}
	b := gjson.GetBytes(resp.Body, "bearer")
	kind := b.Get("token_kind")
	return Verdict{
		Owner:    kind.Type == gjson.String && strings.EqualFold(strings.TrimSpace(kind.Str), "owner"),
		Reported: kind.Type == gjson.String,
		Kind:     strings.TrimSpace(kind.Str),
		GrantID:  b.Get("grant_id").Str,
		ClientID: b.Get("client_id").Str,
	}, nil
}
