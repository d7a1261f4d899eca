package credential

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonkeys"
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
// the RS refuses (see Rejection) is such an error. An answer that cannot be
// read with certainty (not JSON, too deep, or holding bearer or one of its
// keys twice) is a *ProbeError wrapping rs_invalid_response: no verdict.
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
	invalid := func(err error) error {
		return &ProbeError{Err: &rs.TransportError{Code: rs.CodeInvalidResponse, Status: resp.Status,
			RequestID: resp.RequestID, BaseURL: resp.BaseURL, Err: err}}
	}
	if err := rs.CheckDepth(resp.Body, rs.MaxDepth); err != nil {
		return Verdict{}, invalid(err)
	}
	if !gjson.ValidBytes(resp.Body) { // gjson reads broken JSON leniently
		return Verdict{}, invalid(errors.New("the answer is not JSON"))
	}
	// An answer that holds bearer, or one of its keys, twice says two
	// things: this check would read the first and the RS, or any
	// JSON.parse reader, the last. The kind is then unknown, and an
	// unknown kind is never served.
	var b, kind, grant, client gjson.Result
	if dup, repeated := jsonkeys.Each(gjson.ParseBytes(resp.Body), func(k string, v gjson.Result) {
		if k == "bearer" {
			b = v
		}
	}); repeated {
		return Verdict{}, invalid(fmt.Errorf("the answer holds the key %s twice", quoteKey(dup)))
	}
	if dup, repeated := jsonkeys.Each(b, func(k string, v gjson.Result) {
		switch k {
		case "token_kind":
			kind = v
		case "grant_id":
			grant = v
		case "client_id":
			client = v
		}
	}); repeated {
		return Verdict{}, invalid(fmt.Errorf("the answer holds the key bearer.%s twice", quoteKey(dup)))
	}
	return Verdict{
		Owner:    kind.Type == gjson.String && strings.EqualFold(strings.TrimSpace(kind.Str), "owner"),
		Reported: kind.Type == gjson.String,
		Kind:     strings.TrimSpace(kind.Str),
		GrantID:  grant.Str,
		ClientID: client.Str,
	}, nil
}
