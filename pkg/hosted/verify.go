package hosted

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"time"
)

// Kind is a bearer's PDPP token kind (pdpp_token_kind), as the resource
// server or its authorization server reports it. It is never guessed from
// the token's shape.
type Kind string

// The kinds /mcp knows. Any other value is refused like an owner token.
const (
	KindClient     Kind = "client"
	KindPackage    Kind = "mcp_package"
	KindOwner      Kind = "owner"
	KindOwnerAgent Kind = "owner_agent"
)

// Principal is a verified bearer.
type Principal struct {
	Kind      Kind
	GrantID   string // client tokens
	PackageID string // mcp_package tokens
	ClientID  string
	SubjectID string
	// TokenHash is the hex SHA-256 of the bearer: the only form of the token
	// that is ever used as a key or printed (by prefix).
	TokenHash string
	// Expires is when the bearer stops being valid; zero when unknown or
	// never. Verdict caches never keep a principal past it.
	Expires time.Time
	// Audience lists whom the token was issued for (introspection's aud
	// and resource); nil when the verifier does not say. When it is not
	// nil the handler serves the token only if one entry names this
	// server's /mcp resource or the provider (an entry that is not a
	// string names nothing).
	Audience []string
}

// Verifier decides what a bearer is. It returns a *Principal, an *AuthError
// when the bearer is refused, or another error when it cannot decide (the
// resource server or introspection endpoint did not answer); the handler
// answers the last with 503 and never serves data.
type Verifier interface {
	Verify(ctx context.Context, token string) (*Principal, error)
}

// VerifierFunc adapts a function to Verifier.
type VerifierFunc func(ctx context.Context, token string) (*Principal, error)

// Verify calls f.
func (f VerifierFunc) Verify(ctx context.Context, token string) (*Principal, error) {
	return f(ctx, token)
}

// AuthError is a refused bearer. Status is 401 (the client should obtain a
// token: the answer carries the RFC 9728 challenge) or 403 (the token is
// known and will not be served).
type AuthError struct {
	Status  int
	Code    string
	Message string
}

func (e *AuthError) Error() string {
	return http.StatusText(e.Status) + ": " + e.Code + ": " + e.Message
}

// Refusals shared by the verifiers and the handler.
var (
	errMissingBearer = &AuthError{Status: http.StatusUnauthorized, Code: "authentication_error", Message: "Missing Bearer token"}
	errInvalidToken  = &AuthError{Status: http.StatusUnauthorized, Code: "authentication_error", Message: "Invalid or expired token"}
)

// Inactive maps an inactive bearer's reason (an introspection inactive_reason
// or an RS error code) to the refusal /mcp answers: 403 for a grant that is
// revoked, expired or invalid, 401 with the challenge otherwise.
func Inactive(reason string) *AuthError {
	switch reason {
	case "grant_revoked":
		return &AuthError{Status: http.StatusForbidden, Code: reason, Message: "Grant has been revoked"}
	case "grant_expired":
		return &AuthError{Status: http.StatusForbidden, Code: reason, Message: "Grant has expired"}
	case "grant_invalid":
		return &AuthError{Status: http.StatusForbidden, Code: reason, Message: "Grant is malformed or no longer valid"}
	case "authorization_state.unsupported_legacy_shape":
		return &AuthError{Status: http.StatusUnauthorized, Code: reason, Message: "Fresh consent is required"}
	}
	if len(reason) > len("context.") && reason[:len("context.")] == "context." {
		return &AuthError{Status: http.StatusUnauthorized, Code: reason, Message: "Token introspection failed closed"}
	}
	return errInvalidToken
}

// TokenHash returns the hex SHA-256 of a bearer.
func TokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
