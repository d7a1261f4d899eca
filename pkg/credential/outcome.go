package credential

import (
	"strings"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// ScopeRefusal reports whether e refuses the request rather than the token: a
// 401 whose code is a context.* reason about the stream or connection asked
// for (context.stream_not_allowed, context.instance_mismatch, and the other
// context.* reasons that are not about the token itself). The token still
// works for what the grant covers, so the cache is not re-read and nobody is
// told to reconnect.
func ScopeRefusal(e *rs.Error) bool {
	if e == nil || e.Status != 401 || !strings.HasPrefix(e.Code, "context.") {
		return false
	}
	switch e.Code {
	case "context.active_false", "context.kind_mismatch", "context.identity_mismatch", "context.authentication_failed":
		// Introspection says the token is inactive or not the caller's.
		return false
	}
	return true
}

// Outcome says what the Guard did after the resource server refused the
// credential itself.
type Outcome int

// Outcomes of a refused credential.
const (
	// OutcomeUnchanged: the cache still holds the refused token.
	OutcomeUnchanged Outcome = iota + 1
	// OutcomeReloaded: a new credential was loaded from the cache; it is
	// checked before the next read, so repeating the call may succeed.
	OutcomeReloaded
	// OutcomeRaced: another call replaced the credential meanwhile; repeat.
	OutcomeRaced
	// OutcomeUnusable: re-reading the cache gave no usable credential;
	// Cause says why.
	OutcomeUnusable
)

// RejectedError is a read the resource server refused because of the
// credential (a 401 that is not a scope refusal, or a 403 for a revoked,
// expired or invalid grant), with what the Guard did about it. It wraps the
// RS answer, so errors.As finds the *rs.Error.
type RejectedError struct {
	Outcome Outcome
	// File is the credential cache file now in use.
	File string
	// Cause is why the cache had no usable credential (OutcomeUnusable).
	Cause error
	Err   *rs.Error
}

func (e *RejectedError) Error() string { return e.Err.Error() }

// Unwrap exposes the RS answer.
func (e *RejectedError) Unwrap() error { return e.Err }

// ProbeError is a failed token-kind check (GET /v1/schema) before a read: the
// read was not made, and the next call checks again.
type ProbeError struct{ Err error }

func (e *ProbeError) Error() string { return "check token kind (GET /v1/schema): " + e.Err.Error() }

// Unwrap exposes the RS or transport error.
func (e *ProbeError) Unwrap() error { return e.Err }
