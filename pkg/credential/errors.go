package credential

import (
	"fmt"
	"strconv"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// Stable error codes. They are part of the command's contract: scripts and
// hosts may match on them, so they never change meaning.
const (
	CodeNoProviderURL      = "no_provider_url"
	CodeInvalidProviderURL = "invalid_provider_url"
	CodeNotConnected       = "not_connected"
	CodeExpired            = "credential_expired"
	CodeInvalid            = "credential_invalid"
	CodeOwnerRefused       = "owner_token_refused"
	// CodeRejected means the resource server refused the cached token itself
	// (401, or 403 for a revoked, expired or invalid grant) although the cache
	// file is well formed.
	CodeRejected = "credential_rejected"
)

// Exit codes of the stdio command, from sysexits.h as the anchor adapter uses
// them.
const (
	ExitUsage  = 64 // EX_USAGE: the provider URL is missing or unusable
	ExitNoPerm = 77 // EX_NOPERM: an owner credential was offered
	ExitConfig = 78 // EX_CONFIG: no usable grant-scoped credential is cached
)

// Error is a credential problem the person running the adapter can fix. Its
// message is one sentence that says what is wrong and, where that is the fix,
// names `pdpp connect <provider-url>`. It never contains a token.
type Error struct {
	// Code is one of the Code constants.
	Code string
	// ProviderURL is the normalised provider URL, when known.
	ProviderURL string
	// File is the credential cache file involved, when there is one.
	File string
	// Message is the human sentence.
	Message string
	// Err is the underlying cause, if any (never carries a token).
	Err error
}

func (e *Error) Error() string { return e.Message }

// Unwrap exposes the cause for errors.Is/As.
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the stable code; the tool layer reports it to the model.
func (e *Error) ErrorCode() string { return e.Code }

// ExitCode maps the code to the process exit status.
func (e *Error) ExitCode() int {
	switch e.Code {
	case CodeNoProviderURL, CodeInvalidProviderURL:
		return ExitUsage
	case CodeOwnerRefused:
		return ExitNoPerm
	default:
		return ExitConfig
	}
}

func connectHint(url string) string { return "`pdpp connect " + url + "`" }

func errNoProviderURL() *Error {
	return &Error{
		Code: CodeNoProviderURL,
		// The command that embeds this library names its own flag.
		Message: "Provider URL required.",
	}
}

func errInvalidProviderURL(shown, reason string) *Error {
	msg := "Invalid provider URL"
	if shown != "" {
		msg += " " + fmt.Sprintf("%q", shown)
	}
	return &Error{
		Code:    CodeInvalidProviderURL,
		Message: msg + ": " + reason + ". Pass the resource server's base URL, for example https://pdpp.example.com.",
	}
}

func errNotConnected(url, file string) *Error {
	return &Error{
		Code: CodeNotConnected, ProviderURL: url, File: file,
		Message: fmt.Sprintf("No scoped PDPP credential cached for %s (looked for %s). Run %s and try again.",
			url, file, connectHint(url)),
	}
}

func errExpired(url, file, expiresAt string) *Error {
	return &Error{
		Code: CodeExpired, ProviderURL: url, File: file,
		Message: fmt.Sprintf("Cached PDPP credential for %s in %s is expired (expires_at %s). Run %s again.",
			url, file, expiresAt, connectHint(url)),
	}
}

func errInvalid(url, file, what string, cause error) *Error {
	return &Error{
		Code: CodeInvalid, ProviderURL: url, File: file, Err: cause,
		Message: fmt.Sprintf("Cached PDPP credential for %s is malformed (%s in %s); re-run %s.",
			url, what, file, connectHint(url)),
	}
}

func errOwnerMetadata(url, file, key string) *Error {
	return &Error{
		Code: CodeOwnerRefused, ProviderURL: url, File: file,
		Message: fmt.Sprintf("Refusing the cached PDPP credential for %s: %s marks it as an owner credential (%s says owner), "+
			"and the MCP adapter serves only grant-scoped client tokens. Run %s to cache a client grant.",
			url, file, key, connectHint(url)),
	}
}

func errOwnerProbe(url, file string) *Error {
	return &Error{
		Code: CodeOwnerRefused, ProviderURL: url, File: file,
		Message: fmt.Sprintf("Refusing the cached PDPP credential for %s: the resource server reports it is an owner token "+
			"(GET /v1/schema bearer.token_kind), and the MCP adapter serves only grant-scoped client tokens. "+
			"Run %s to cache a client grant.", url, connectHint(url)),
	}
}

// OwnerEnvVars are the environment variables that carry owner credentials. The
// adapter reads them only to refuse to start.
var OwnerEnvVars = []string{"PDPP_OWNER_TOKEN", "PDPP_OWNER_SESSION_COOKIE"}

// CheckOwnerEnv refuses to run when an owner credential is present in the
// environment: a process that can see one could be misconfigured into serving
// owner-mode self-export. getenv is os.Getenv in production.
func CheckOwnerEnv(getenv func(string) string) error {
	for _, k := range OwnerEnvVars {
		if getenv(k) != "" {
			return &Error{
				Code: CodeOwnerRefused,
				Message: "Refusing to start: owner credentials (PDPP_OWNER_TOKEN / PDPP_OWNER_SESSION_COOKIE) " +
					"are present in the environment. Unset them before running the MCP adapter.",
			}
		}
	}
	return nil
}

func errRejected(url, file string, rsErr *rs.Error) *Error {
	what := fmt.Sprintf("HTTP %d", rsErr.Status)
	if rsErr.Code != "" {
		what += " " + rsErr.Code
	}
	return &Error{
		Code: CodeRejected, ProviderURL: url, File: file, Err: rsErr,
		Message: fmt.Sprintf("The resource server at %s rejected the cached PDPP credential from %s (%s). Run %s again.",
			url, file, what, connectHint(url)),
	}
}

// quoteKey quotes a JSON key read from a file or an answer, for an error
// message: at most 64 bytes of it, escaped.
func quoteKey(k string) string {
	if len(k) > 64 {
		k = k[:64] + "…"
	}
	return strconv.Quote(k)
}
