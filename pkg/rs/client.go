package rs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/outbound"
	"github.com/pdpp-mcp/pdpp-mcp/internal/version"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// Defaults applied by New when the corresponding option is zero.
const (
	DefaultTimeout            = 30 * time.Second
	DefaultMaxBodyBytes int64 = 16 << 20
)

// Options configures a Client.
type Options struct {
	// BaseURL is the normalised provider URL. It may carry a path prefix
	// (https://h/pdpp); request paths are appended to it, never resolved
	// against it.
	BaseURL string
	// Token returns the bearer. It is called on every request so a credential
	// reloaded after a 401 is used by the next call. "" sends no
	// Authorization header.
	Token func() string
	// HTTPClient is used when set, with redirects turned off. When nil the
	// process's SharedHTTPClient is used, so every RS client of a process
	// shares one pool of kept-alive connections.
	HTTPClient *http.Client
	// Budget bounds the body bytes buffered at once; nil means the
	// process-wide budget (DefaultBudgetBytes).
	Budget *Budget
	// Timeout bounds each call, body included. 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxBodyBytes caps the bytes read from one answer. 0 means
	// DefaultMaxBodyBytes. A larger answer is a CodeTooLarge error.
	MaxBodyBytes int64
	// UserAgent is sent on every request. "" means "pdpp-mcp/<version>".
	UserAgent string
	// Logger receives one Debug record per call. nil discards.
	Logger *slog.Logger
	// CompatSearchShapes also accepts search answers whose hits sit in
	// data.results[] or data.data[] (older servers). Only a reader that
	// normalises hits itself (pkg/fanout) may set it: the tools read data[].
	CompatSearchShapes bool
}

// Client issues GET requests to one resource server with one bearer. It is
// safe for concurrent use.
type Client struct {
	base    string // scheme://host[/prefix], no trailing slash
	token   func() string
	hc      *http.Client
	timeout time.Duration
	max     int64
	ua      string
	log     *slog.Logger
	budget  *Budget
	compat  bool
	// spellings are the last token's, kept while it is the one sent.
	spellings atomic.Pointer[bearer]
}

// New validates opts and returns a Client.
func New(opts Options) (*Client, error) {
	base, err := normaliseBase(opts.BaseURL)
	if err != nil {
		return nil, err
	}
	if opts.Token == nil {
		return nil, errors.New("rs: Options.Token is required")
	}
	if opts.Timeout < 0 {
		return nil, fmt.Errorf("rs: timeout must be positive, got %s", opts.Timeout)
	}
	if opts.MaxBodyBytes < 0 {
		return nil, fmt.Errorf("rs: max body bytes must be positive, got %d", opts.MaxBodyBytes)
	}
	c := &Client{
		base:    base,
		token:   opts.Token,
		hc:      opts.HTTPClient,
		timeout: opts.Timeout,
		max:     opts.MaxBodyBytes,
		ua:      opts.UserAgent,
		log:     opts.Logger,
		budget:  opts.Budget,
		compat:  opts.CompatSearchShapes,
	}
	if c.hc == nil {
		c.hc = SharedHTTPClient()
	} else {
		c.hc = outbound.Wrap(c.hc) // the caller's client keeps its own policy
	}
	if c.budget == nil {
		c.budget = processBudget()
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	if c.max == 0 {
		c.max = DefaultMaxBodyBytes
	}
	if c.ua == "" {
		c.ua = "pdpp-mcp/" + version.Version()
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// normaliseBase checks that raw is an absolute http(s) URL without
// credentials, query or fragment, and returns it without trailing slashes.
func normaliseBase(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL itself is not repeated: it may hold userinfo
		}
		return "", fmt.Errorf("rs: provider URL is not a valid URL: %w", err)
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme != "http" && scheme != "https":
		return "", fmt.Errorf("rs: provider URL must be an absolute http or https URL, got %q", u.Redacted())
	case u.Host == "":
		return "", fmt.Errorf("rs: provider URL %q has no host", u.Redacted())
	case u.User != nil:
		return "", fmt.Errorf("rs: provider URL %q carries user information; pass credentials with pdpp connect instead", u.Redacted())
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return "", fmt.Errorf("rs: provider URL %q must not carry a query or fragment", u.Redacted())
	}
	return scheme + "://" + u.Host + strings.TrimRight(u.EscapedPath(), "/"), nil
}

// SharedHTTPClient is the one *http.Client every RS client of the process
// uses unless given another. It never follows a redirect: the bearer is sent
// only to the provider's origin, and a redirect becomes a CodeRedirect error.
func SharedHTTPClient() *http.Client { return outbound.Shared() }

// BaseURL returns the normalised base URL requests are joined to.
func (c *Client) BaseURL() string { return c.base }

// CloseIdleConnections closes kept-alive connections that are not in use.
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }

// errCallTimeout is the cause attached to the per-call deadline, so an expired
// per-call timeout can be told apart from the caller's own deadline.
var errCallTimeout = errors.New("per-call timeout")

// Get sends GET base+path?query. path must start with "/" and be escaped
// already (build it with Path). It returns *Response for 2xx, *Error for any
// other status, *TransportError when no usable answer arrived, and an error
// wrapping context.Canceled when ctx was cancelled.
func (c *Client) Get(ctx context.Context, path string, q Query) (*Response, error) {
	if err := checkPath(path); err != nil {
		return nil, err
	}
	start := time.Now()
	resp, n, err := c.get(ctx, path, q)
	c.logCall(ctx, path, q, start, n, resp, err)
	return resp, err
}

func checkPath(path string) error {
	switch {
	case !strings.HasPrefix(path, "/"):
		return fmt.Errorf("rs: request path %q must start with /", path)
	case strings.ContainsAny(path, "?#"):
		return fmt.Errorf("rs: request path %q must not carry a query or fragment; pass a Query", path)
	case strings.Contains(path, "//"):
		return fmt.Errorf("rs: request path %q has an empty segment", path)
	}
	return nil
}

// get does the work of Get and also reports how many body bytes it read.
func (c *Client) get(ctx context.Context, path string, q Query) (*Response, int, error) {
	limit := c.max
	if n, ok := ctx.Value(bodyLimitKey{}).(int64); ok && n > 0 && n < limit {
		limit = n
	}
	blob := RouteOf(path) == RouteBlob
	callCtx, cancel := context.WithTimeoutCause(ctx, c.timeout, errCallTimeout)
	defer cancel()

	req, tok, err := c.newRequest(callCtx, path, q, blob)
	if err != nil {
		return nil, 0, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, 0, c.failure(ctx, callCtx, path, 0, "", err)
	}
	defer resp.Body.Close()
	k := c.bearer(tok)
	rid := cleanRequestID(resp.Header.Get("Request-Id"), k)

	if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		return nil, 0, c.redirected(path, resp, rid, k)
	}

	res := &reservation{b: c.budget, limit: limit}
	kept := false
	defer func() {
		if !kept {
			c.budget.release(res.n)
		}
	}()
	body, err := readBudgeted(resp.Body, resp.ContentLength, limit, func(total int64) error {
		return res.grow(callCtx, total)
	})
	if err != nil {
		return nil, len(body), c.readFailure(ctx, callCtx, path, resp, rid, limit, err)
	}
	n := len(body)
	res.shrink(int64(cap(body)))
	typeSpells := k.scrubHeader(resp.Header)
	if blob && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		// A blob's bytes are the answer itself: repairing UTF-8 or
		// redacting would change them (and their sha256), and its
		// Content-Type says what they are. Whoever shows them as text makes
		// that text valid UTF-8. A blob that spells the bearer is refused
		// rather than altered.
		what := ""
		switch {
		case k.in(body):
			what = "the blob holds the bearer token"
		case typeSpells || k.inMediaType(resp.Header.Get("Content-Type")):
			what = "the blob's Content-Type holds the bearer token"
		}
		if what != "" {
			return nil, n, &TransportError{Code: CodeInvalidResponse, Status: resp.StatusCode, RequestID: rid, BaseURL: c.base,
				Err: fmt.Errorf("GET %s: %s (as it is or once decoded), so pdpp-mcp does not pass it on", path, what)}
		}
		resp.Header.Del("Request-Id")
		kept = true
		res.end(ctx)
		return &Response{Status: resp.StatusCode, Header: resp.Header, Body: body, RequestID: rid, BaseURL: c.base}, n, nil
	}
	// Everything below works on bytes that can reach a result: valid
	// UTF-8, no token in any spelling.
	body = k.redact(validUTF8(body))
	declaredJSON := isJSON(mediaType(resp.Header))
	jsonish := declaredJSON || looksJSON(body)
	var valid, deep bool
	longest := math.MaxInt // unknown until scanned
	if jsonish {
		valid, deep, longest = scanJSON(body, MaxDepth)
	}
	if !(jsonish && valid) && k.in(body) {
		// Only valid JSON has strings to cut a spelling out of.
		body = []byte(redactedBody)
	}

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := parseError(resp.StatusCode, resp.Header, body, k, deep)
		e.RequestID = cleanRequestID(e.RequestID, k)
		e.BaseURL = c.base
		return nil, n, e
	}
	if rid == "" {
		resp.Header.Del("Request-Id")
	} else {
		resp.Header.Set("Request-Id", rid)
	}
	out := &Response{Status: resp.StatusCode, Header: resp.Header, Body: body, RequestID: rid, BaseURL: c.base}
	if resp.StatusCode == http.StatusNoContent {
		out.Body = nil
		return out, n, nil
	}
	if err := c.checkBody(path, out, n, bodyScan{declaredJSON, jsonish, valid, deep, longest}); err != nil {
		return nil, n, err
	}
	kept = true
	res.end(ctx)
	return out, n, nil
}

// newRequest builds the GET for path and q with the client's headers and
// bearer, and returns the bearer it sent ("" for none).
func (c *Client) newRequest(ctx context.Context, path string, q Query, blob bool) (*http.Request, string, error) {
	target := c.base + path
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, "", fmt.Errorf("rs: GET %s: %w", path, err)
	}
	req.Header = http.Header{
		"Accept":     {"application/json"},
		"User-Agent": {c.ua},
	}
	if blob {
		// A blob answers its own media type; errors are still JSON.
		req.Header["Accept"] = []string{"*/*"}
	}
	tok := c.token()
	if tok != "" {
		if !headerSafe(tok) {
			// Go's transport would refuse it anyway; saying why is kinder, and
			// the token itself is not repeated.
			return nil, "", fmt.Errorf("rs: the bearer token contains characters that cannot be sent in an HTTP header; run pdpp connect %s again", c.base)
		}
		req.Header["Authorization"] = []string{"Bearer " + tok}
	}
	return req, tok, nil
}

// redirected is the error for a 3xx answer. A read API has no reason to
// redirect, and following would send the bearer to wherever the answer
// points.
func (c *Client) redirected(path string, resp *http.Response, rid string, k *bearer) error {
	loc := describeLocation(resp.Header.Get("Location"), k)
	return &TransportError{
		Code: CodeRedirect, Status: resp.StatusCode, RequestID: rid, BaseURL: c.base, Location: loc,
		Err: fmt.Errorf("GET %s: the resource server answered HTTP %d redirecting to %s; "+
			"redirects are not followed, so the bearer token is only ever sent to %s", path, resp.StatusCode, loc, c.base),
	}
}

// readFailure is the error for a body that could not be read whole: over
// the cap, no room in the shared budget, or the transport failed.
func (c *Client) readFailure(ctx, callCtx context.Context, path string, resp *http.Response, rid string, limit int64, err error) error {
	switch {
	case errors.Is(err, errTooLarge):
		return &TransportError{
			Code: CodeTooLarge, Limit: limit, Size: resp.ContentLength, Status: resp.StatusCode, RequestID: rid, BaseURL: c.base,
			// The text names no flag: the program embedding this client
			// decides how its operator raises the cap.
			Err: fmt.Errorf("GET %s: the answer is larger than the response cap of %s; "+
				"narrow the request (fewer fields, a smaller limit) or have the operator raise the cap",
				path, formatBytes(limit)),
		}
	case errors.Is(err, errBusy):
		return &TransportError{
			Code: CodeBusy, Status: resp.StatusCode, RequestID: rid, BaseURL: c.base, RetryAfterS: busyRetryAfterS,
			Err: fmt.Errorf("GET %s: pdpp-mcp is already holding %s of answers from other calls and could not make room within %s",
				path, formatBytes(c.budget.size), c.budget.wait),
		}
	}
	return c.failure(ctx, callCtx, path, resp.StatusCode, rid, err)
}

// bodyScan is what Get learnt of a body before checking it: whether it is
// declared JSON or looks like it (jsonish), and scanJSON's answers.
type bodyScan struct {
	declaredJSON, jsonish, valid, deep bool
	longest                            int
}

// checkBody says why a 2xx body cannot be passed on, or nil: JSON nested
// too deep, a declared JSON body that is not JSON, or JSON that is not the
// route's envelope. n is the size read, before any repair.
func (c *Client) checkBody(path string, out *Response, n int, scan bodyScan) error {
	declaredJSON, deep := scan.declaredJSON, scan.deep
	invalid := func(format string, args ...any) error {
		return &TransportError{
			Code: CodeInvalidResponse, Status: out.Status, RequestID: out.RequestID, BaseURL: c.base,
			Err: fmt.Errorf("GET %s: "+format, append([]any{path}, args...)...),
		}
	}
	if deep {
		return invalid("the resource server sent %d bytes of JSON nested deeper than %d levels", n, MaxDepth)
	}
	if scan.jsonish {
		if !scan.valid {
			if declaredJSON {
				return invalid("the resource server declared %s but sent %d bytes that are not valid JSON", out.ContentType(), n)
			}
		} else if why := checkEnvelopeScanned(RouteOf(path), out.Body, c.compat, scan.longest); why != "" {
			return invalid("the resource server answered HTTP %d with %s, not the envelope of %s", out.Status, why, RouteOf(path))
		}
	}
	return nil
}

// busyRetryAfterS is the wait suggested after CodeBusy: answers ahead in the
// queue are read and rendered within about a second.
const busyRetryAfterS = 2

// looksJSON reports whether b starts, after white space, like a JSON object
// or array.
func looksJSON(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && (b[0] == '{' || b[0] == '[')
}

// checkEnvelope says what is wrong with a valid JSON 200 body for route, or
// "" when its shape is the route's: every read route answers an object with
// at least one member, list routes carry a data array of objects, a
// record's data is an object, and the identifiers and continuation handles
// a client passes back are within their bounds (MaxNameBytes and so on).
func checkEnvelope(route Route, body []byte, compat bool) string {
	return checkEnvelopeScanned(route, body, compat, math.MaxInt)
}

// checkEnvelopeScanned is checkEnvelope of a body whose longest string
// literal (quotes included) is longest bytes: when that is within
// MaxNameBytes, no identifier of a row can be over its bound, and the rows'
// members are not read.
func checkEnvelopeScanned(route Route, body []byte, compat bool, longest int) string {
	if route == RouteOther {
		return ""
	}
	root := gjson.Parse(view(body))
	if !root.IsObject() {
		return "JSON that is not an object"
	}
	var data, meta gjson.Result
	empty := true
	why := ""
	root.ForEach(func(k, v gjson.Result) bool {
		empty = false
		switch k.Str {
		case "data":
			if !data.Exists() {
				data = v
			}
		case "meta":
			if !meta.Exists() {
				meta = v
			}
		case "next_cursor", "next_changes_since":
			why = badHandle("", k.Str, v)
		}
		return why == ""
	})
	switch {
	case empty:
		return "an empty object"
	case why != "":
		return why
	}
	if meta.IsObject() {
		for _, k := range [...]string{"next_cursor", "next_changes_since"} {
			if why := badHandle("meta", k, meta.Get(k)); why != "" {
				return why
			}
		}
	}
	rows := data
	switch {
	case compat && route.search() && data.IsObject() && (data.Get("results").IsArray() || data.Get("data").IsArray()):
		if rows = data.Get("results"); !rows.IsArray() {
			rows = data.Get("data")
		}
		if why := badHandle("data", "next_cursor", data.Get("next_cursor")); why != "" {
			return why
		}
	case route.listEnvelope() && !data.IsArray():
		return "an object whose data is not an array"
	case route == RouteRecord && data.Exists() && !data.IsObject():
		return "a record whose data is not an object"
	case route == RouteRecord:
		return checkIdentifiers("the record's", root)
	}
	if !route.listEnvelope() {
		return ""
	}
	n := 0
	rows.ForEach(func(_, row gjson.Result) bool {
		switch {
		case !row.IsObject():
			why = fmt.Sprintf("a list whose data[%d] is %s, not an object", n, jsonKind(row))
		case route != RouteStreams && len(row.Raw) > MaxNameBytes && longest > MaxNameBytes:
			// A shorter row cannot hold an identifier over its bound.
			if why = checkIdentifiers("", row); why != "" {
				// Named only once found: no string is built per row.
				why = checkIdentifiers("data["+strconv.Itoa(n)+"]", row)
			}
		}
		n++
		return why == ""
	})
	return why
}

// checkIdentifiers bounds the identifiers of a record or search hit; what
// prefixes their names in the answer.
func checkIdentifiers(what string, row gjson.Result) string {
	why := ""
	row.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "id", "record_key", "record_id":
			why = overLong(what, k.Str, v, MaxRecordKeyBytes)
		case "connection_id", "connector_instance_id", "stream", "stream_name":
			why = overLong(what, k.Str, v, MaxNameBytes)
		}
		return why == ""
	})
	return why
}

// badHandle says when v, the continuation handle name of what, cannot be
// passed back: longer than MaxHandleBytes, or holding a character a person
// cannot see. Such a handle would be shown with a mark (package visible),
// and a cursor is opaque: it is refused rather than shown as something a
// model might copy wrong. Real cursors are printable ASCII.
func badHandle(what, name string, v gjson.Result) string {
	if why := overLong(what, name, v, MaxHandleBytes); why != "" || v.Type != gjson.String || visible.Clean(v.Str) {
		return why
	}
	if what != "" {
		name = what + "." + name
	}
	return "a " + name + " holding characters that cannot be shown as they are (invisible or control characters, or ⟦); a continuation handle must be printable"
}

// overLong says when v, member name of what, is a string longer than limit
// bytes.
func overLong(what, name string, v gjson.Result, limit int) string {
	// The raw JSON is at least as long as the string it spells, and at most
	// six times as long: measure only what might be over.
	if v.Type != gjson.String || len(v.Raw) <= limit {
		return ""
	}
	if n := len(v.Str); n > limit {
		if what != "" {
			name = what + "." + name
		}
		return fmt.Sprintf("a %s of %d bytes (at most %d can be passed back)", name, n, limit)
	}
	return ""
}

func jsonKind(v gjson.Result) string {
	switch v.Type {
	case gjson.Null:
		return "null"
	case gjson.False, gjson.True:
		return "a boolean"
	case gjson.Number:
		return "a number"
	case gjson.String:
		return "a string"
	}
	return "an array"
}

// failure classifies an error from sending the request or reading the body.
// status is 0 when no answer arrived.
func (c *Client) failure(ctx, callCtx context.Context, path string, status int, rid string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the URL is restated below in a shorter form
	}
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return fmt.Errorf("rs: GET %s: %w", path, context.Canceled)
	case context.Cause(callCtx) == errCallTimeout:
		return &TransportError{Code: CodeTimeout, Status: status, RequestID: rid, BaseURL: c.base,
			Err: fmt.Errorf("GET %s: no complete answer within %s (the per-call timeout): %w",
				path, c.timeout, context.DeadlineExceeded)}
	case ctx.Err() != nil:
		return &TransportError{Code: CodeTimeout, Status: status, RequestID: rid, BaseURL: c.base,
			Err: fmt.Errorf("GET %s: the caller's deadline passed before a complete answer: %w", path, ctx.Err())}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &TransportError{Code: CodeTimeout, Status: status, RequestID: rid, BaseURL: c.base,
			Err: fmt.Errorf("GET %s: %w", path, err)}
	}
	if status != 0 {
		return &TransportError{Code: CodeInvalidResponse, Status: status, RequestID: rid, BaseURL: c.base,
			Err: fmt.Errorf("GET %s: the answer broke off while reading its body: %w", path, err)}
	}
	return &TransportError{Code: CodeUnreachable, BaseURL: c.base,
		Err: fmt.Errorf("GET %s: no answer from the resource server at %s: %w", path, c.base, err)}
}

func (c *Client) logCall(ctx context.Context, path string, q Query, start time.Time, n int, resp *Response, err error) {
	if !c.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	// Only shapes: the route template (no stream or record id), the query
	// keys (no values: they hold search text and filter values), sizes,
	// status and codes.
	keys := make([]string, len(q))
	for i, p := range q {
		keys[i] = p.Key
	}
	attrs := make([]slog.Attr, 0, 8)
	attrs = append(attrs,
		slog.String("method", http.MethodGet),
		slog.String("route", RouteOf(path).String()),
		slog.Any("query_keys", keys),
		slog.Duration("duration", time.Since(start)),
		slog.Int("bytes", n),
	)
	var (
		rerr *Error
		terr *TransportError
	)
	switch {
	case resp != nil:
		attrs = append(attrs, slog.Int("status", resp.Status), slog.String("request_id", resp.RequestID))
	case errors.As(err, &rerr):
		attrs = append(attrs, slog.Int("status", rerr.Status), slog.String("code", rerr.Code),
			slog.String("request_id", rerr.RequestID))
	case errors.As(err, &terr):
		attrs = append(attrs, slog.Int("status", terr.Status), slog.String("code", terr.Code),
			slog.String("request_id", terr.RequestID))
	case errors.Is(err, context.Canceled):
		attrs = append(attrs, slog.String("code", "canceled"))
	default:
		attrs = append(attrs, slog.String("code", "error"))
	}
	c.log.LogAttrs(ctx, slog.LevelDebug, "rs call", attrs...)
}

var errTooLarge = errors.New("body over the cap")

type bodyLimitKey struct{}

// WithBodyLimit returns ctx whose reads accept at most n body bytes when n
// is below the client's own cap: a larger answer is a CodeTooLarge error
// with Limit n, read no further than n+1 bytes. It lets one kind of read (a
// blob) carry a tighter bound through every wrapper of a Client.
func WithBodyLimit(ctx context.Context, n int64) context.Context {
	return context.WithValue(ctx, bodyLimitKey{}, n)
}

// readBudgeted reads r to EOF and returns errTooLarge as soon as more than limit
// bytes arrive: at most limit+1 bytes are ever read and at most limit held.
// size is the declared Content-Length (-1 when unknown) and only sizes the
// buffer. grow, when set, is asked for room for the whole buffer before it
// is allocated or grown; its error ends the read.
func readBudgeted(r io.Reader, size, limit int64, grow func(total int64) error) ([]byte, error) {
	if size > limit {
		return nil, errTooLarge
	}
	initial := int64(512)
	if size >= 0 {
		initial = size
	}
	initial = min(initial, limit)
	if grow != nil {
		if err := grow(initial); err != nil {
			return nil, err
		}
	}
	b := make([]byte, 0, initial)
	for {
		if len(b) == cap(b) {
			if int64(len(b)) == limit {
				break
			}
			// Double, but never past the cap: an oversized body must not
			// allocate more than the cap it is measured against.
			next := min(int64(max(2*cap(b), 512)), limit)
			if grow != nil {
				if err := grow(next); err != nil {
					return nil, err
				}
			}
			nb := make([]byte, len(b), next)
			copy(nb, b)
			b = nb
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
	// The buffer holds exactly limit bytes: one more byte means too large.
	var probe [1]byte
	for {
		n, err := r.Read(probe[:])
		if n > 0 {
			return nil, errTooLarge
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// headerSafe reports whether s can be sent in a header field value.
func headerSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; (b < 0x20 && b != '\t') || b == 0x7f {
			return false
		}
	}
	return true
}

func isJSON(mediaType string) bool {
	return mediaType == "application/json" || strings.HasSuffix(mediaType, "+json")
}

// formatBytes renders a byte cap the way people write it, with the exact
// count: "16 MiB (16777216 bytes)".
func formatBytes(n int64) string {
	exact := strconv.FormatInt(n, 10) + " bytes"
	for _, u := range []struct {
		shift uint
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + " " + u.name + " (" + exact + ")"
		}
	}
	return exact
}
