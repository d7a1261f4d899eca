// Package rs is the HTTP client for a PDPP resource server's read API (GET /v1/...).
//
// It keeps answers as raw bytes (no decode-and-re-marshal), turns non-2xx answers
// into *Error values carrying the RS error envelope, and turns transport failures
// into *TransportError values with a stable code. It never retries, never
// follows a redirect, and never logs or returns the bearer token. Everything it
// returns from an answer is treated as hostile input first: nesting depth is
// checked without recursion, the token is removed in every spelling, invalid
// UTF-8 is replaced, and strings from error envelopes are bounded.
//
// New builds a Client for one resource server and one bearer; Get reads one
// route:
//
//	c, err := rs.New(rs.Options{BaseURL: "https://rs.example", Token: func() string { return token }})
//	if err != nil {
//		return err
//	}
//	resp, err := c.Get(ctx, rs.Path("v1", "streams", "messages", "records"), rs.Query{{Key: "limit", Value: "10"}})
//	var rsErr *rs.Error // the RS refused: rsErr.Code, rsErr.Message
//	if errors.As(err, &rsErr) { … }
//
// Token is asked before every request, so a credential that rotates (see
// package credential) is picked up without a new Client.
package rs

import (
	"net/http"
	"strconv"
	"strings"
)

// Param is one query parameter. Keys are sent literally (brackets kept), values
// are URL-encoded.
type Param struct {
	Key   string
	Value string
}

// Query is an ordered list of query parameters. Repeated keys are allowed and
// are how arrays are sent (streams=a&streams=b).
type Query []Param

// Add appends one parameter.
func (q *Query) Add(key, value string) { *q = append(*q, Param{key, value}) }

// Get returns the first value for key.
func (q Query) Get(key string) (string, bool) {
	for _, p := range q {
		if p.Key == key {
			return p.Value, true
		}
	}
	return "", false
}

// Response is a successful (2xx) RS answer.
type Response struct {
	Status int
	Header http.Header
	// Body is the raw response body, never re-encoded.
	Body []byte
	// RequestID is the RS Request-Id response header ("" when absent or
	// when it was not a short id worth repeating).
	RequestID string
	// BaseURL is the provider URL that answered, so links built from this
	// answer point at the provider that sent it.
	BaseURL string
}

// ContentType returns the media type of the answer without parameters.
func (r *Response) ContentType() string { return mediaType(r.Header) }

func mediaType(h http.Header) string {
	ct := h.Get("Content-Type")
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.TrimSpace(strings.ToLower(ct))
}

// Connection is one entry of an error's available_connections.
type Connection struct {
	ConnectionID string `json:"connection_id"`
	DisplayName  string `json:"display_name,omitempty"`
	ConnectorKey string `json:"connector_key,omitempty"`
	ConnectorID  string `json:"connector_id,omitempty"`
	// GrantID names the child grant when a package lists its sources.
	GrantID string `json:"grant_id,omitempty"`
}

// Error is a non-2xx RS answer. The fields are read from the canonical
// {"error":{...}} envelope; OAuth-style and non-JSON bodies are normalised
// (code "http_<status>" when the body names none).
type Error struct {
	Status    int
	RequestID string
	Type      string
	Code      string
	Message   string
	Param     string
	// RetryWith is the error's retry_with hint ("connection_id", "source_id"),
	// read from a string or from an object's "field".
	RetryWith            string
	AvailableConnections []Connection
	// Object is the raw JSON of the error object (the value of "error"), or nil
	// when the body was not JSON.
	Object []byte
	// OmittedConnections counts the available_connections left out beyond
	// MaxConnections.
	OmittedConnections int
	// RetryAfterS is the Retry-After of a 429 or 503 in seconds (0 when
	// absent).
	RetryAfterS int
	// BaseURL is the provider URL that answered.
	BaseURL string
}

// Error renders a one-line description without any credential.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("resource server answered HTTP ")
	b.WriteString(http.StatusText(e.Status))
	b.WriteString(" (")
	b.WriteString(strconv.Itoa(e.Status))
	b.WriteString(")")
	if e.Code != "" {
		b.WriteString(": ")
		b.WriteString(e.Code)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// Transport error codes.
const (
	CodeUnreachable     = "rs_unreachable"        // connection refused, DNS, reset before an answer
	CodeTimeout         = "rs_timeout"            // the per-call timeout elapsed
	CodeTooLarge        = "rs_response_too_large" // body over the configured cap
	CodeInvalidResponse = "rs_invalid_response"   // body unreadable, not the declared type, too deep, or not the route's envelope
	CodeRedirect        = "rs_redirect"           // a 3xx: redirects are never followed
	CodeBusy            = "rs_busy"               // the process-wide body budget had no room in time
)

// TransportError is a failure to obtain an RS answer at all.
type TransportError struct {
	Code string
	// Limit is the byte cap for CodeTooLarge.
	Limit int64
	// Size is the answer's declared Content-Length for CodeTooLarge; -1
	// when the answer did not declare one.
	Size int64
	// Status is the HTTP status when an answer started but could not be used
	// (too large, broken off, not the declared type); 0 when none arrived.
	Status int
	// RequestID is the answer's Request-Id header when an answer started.
	RequestID string
	// BaseURL is the provider URL the request went to.
	BaseURL string
	// Location is the quoted, bounded redirect target for CodeRedirect.
	Location string
	// RetryAfterS is the suggested wait in seconds (CodeBusy); 0 when none.
	RetryAfterS int
	Err         error
}

func (e *TransportError) Error() string {
	if e.Err == nil {
		return e.Code
	}
	return e.Code + ": " + e.Err.Error()
}

func (e *TransportError) Unwrap() error { return e.Err }
