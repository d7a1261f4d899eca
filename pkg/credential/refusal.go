package credential

import (
	"errors"
	"net/http"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// Refusal is what an error answer of the resource server says about the
// bearer it was sent with. It is the one rule by which stdio's credential
// guard, a fan-out over several grants and the hosted gateway decide that a
// grant is dead, that a token will never be accepted, or that asking again
// later may help.
type Refusal int

// Refusals, from the least to the most final.
const (
	// NotRefused: no answer of the RS (a transport failure), or one that
	// says nothing lasting about the token: 5xx, 408, 429. Ask again later.
	NotRefused Refusal = iota
	// RefusedRequest: any other 4xx. This request was refused; whether the
	// token is, depends on the request: a read whose path and parameters
	// the token cannot change (the kind check) is refused for good.
	RefusedRequest
	// RefusedScope: a 401 about the stream or connection asked for
	// (ScopeRefusal). The token still works for what the grant covers.
	RefusedScope
	// RefusedToken: any other 401. The RS does not accept the token.
	RefusedToken
	// RefusedGrant: the grant behind the token is revoked, expired, invalid
	// or needs fresh consent (GrantCode), whatever the 4xx status.
	RefusedGrant
)

// Dead reports whether the same token will not be accepted again:
// RefusedToken or RefusedGrant.
func (r Refusal) Dead() bool { return r == RefusedToken || r == RefusedGrant }

// GrantCode reports whether code is one of the RS error codes that end a
// grant.
func GrantCode(code string) bool {
	switch code {
	case "grant_revoked", "grant_expired", "grant_invalid", "authorization_state.unsupported_legacy_shape":
		return true
	}
	return false
}

// ClassifyRefusal classifies err and returns the RS answer it carries (nil
// when there is none, and then NotRefused).
func ClassifyRefusal(err error) (Refusal, *rs.Error) {
	var e *rs.Error
	if !errors.As(err, &e) {
		return NotRefused, nil
	}
	switch {
	case e.Status < 400 || e.Status > 499, e.Status == http.StatusRequestTimeout, e.Status == http.StatusTooManyRequests:
		return NotRefused, e
	case GrantCode(e.Code):
		return RefusedGrant, e
	case ScopeRefusal(e):
		return RefusedScope, e
	case e.Status == http.StatusUnauthorized:
		return RefusedToken, e
	}
	return RefusedRequest, e
}

// DeadReason names why the grant err reports is dead, or "" when it is not:
// RefusalCode, except after a refusal on which the Guard loaded a new token
// from the cache: the next call uses that token.
func DeadReason(err error) string {
	var rej *RejectedError
	if errors.As(err, &rej) && (rej.Outcome == OutcomeReloaded || rej.Outcome == OutcomeRaced) {
		return ""
	}
	return RefusalCode(err)
}

// RefusalCode names the grant problem err reports, whether or not a newer
// token may already replace the refused one: the RS's grant code, or
// credential_rejected for a token the RS refuses; "" for anything else.
func RefusalCode(err error) string {
	switch r, e := ClassifyRefusal(err); r {
	case RefusedGrant:
		return e.Code
	case RefusedToken:
		return CodeRejected
	}
	return ""
}
