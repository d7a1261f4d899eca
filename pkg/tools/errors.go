package tools

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// Error codes the tools produce themselves. RS codes (invalid_request,
// ambiguous_connection, …) and transport codes (rs_timeout, …) are passed
// through unchanged.
const (
	// CodeInvalidArguments: an argument is unknown, missing, or outside its
	// schema (type, enum, bounds, safe-name rule).
	CodeInvalidArguments = "invalid_arguments"
	// CodeInvalidFilter: filter is not a non-empty object of scalar or range
	// values keyed by plain field names.
	CodeInvalidFilter = "invalid_filter"
	// CodeInvalidExpand: expand/expand_limit cannot be served as asked
	// (malformed expand_limit, a relation the stream does not advertise).
	CodeInvalidExpand = "invalid_expand"
	// CodeStreamNotGranted: schema(stream) names a stream the grant does
	// not include; the error lists the granted streams.
	CodeStreamNotGranted = "stream_not_granted"
	// CodeConnectionNotGranted: schema(stream, connection_id) names a
	// connection the grant does not include for that stream.
	CodeConnectionNotGranted = "connection_not_granted"
	// CodeCanceled: the client cancelled the call.
	CodeCanceled = "canceled"
	// CodeInternal: anything else; a bug in this server.
	CodeInternal = "internal_error"
)

// maxListedConnections bounds the candidates an error lists; the rest are
// counted and pointed at schema.
const maxListedConnections = 12

// toolError is a failure found by the tool itself, before or instead of an
// RS request.
type toolError struct {
	Code    string
	Message string
	// Param names the offending argument, when there is one.
	Param string
	// Next is the step that fixes the call.
	Next string
}

func (e *toolError) Error() string { return e.Code + ": " + e.Message }

// coder is implemented by errors that carry a stable code (for example the
// credential layer's owner_token_refused).
type coder interface {
	error
	ErrorCode() string
}

// failure is one classified error: everything a tool result (text and
// structuredContent.error) or a failed resource read says about it. classify
// is the only place that decides codes and advice, so tools and resources
// cannot disagree.
type failure struct {
	Code       string `json:"code"`
	Message    string `json:"message"`
	HTTPStatus int    `json:"http_status,omitempty"`
	RequestID  string `json:"request_id,omitempty"`
	// Type is the RS error type (invalid_request_error, …), when it sent one.
	Type                 string          `json:"type,omitempty"`
	Param                string          `json:"param,omitempty"`
	RetryWith            string          `json:"retry_with,omitempty"`
	AvailableConnections []rs.Connection `json:"available_connections,omitempty"`
	// OmittedConnections counts candidates the RS named beyond the bound.
	OmittedConnections int `json:"available_connections_omitted,omitempty"`
	// RetryAfterS is the wait the RS (or the body budget) asked for.
	RetryAfterS int `json:"retry_after_s,omitempty"`
	// Next is the step that fixes the call.
	Next string `json:"next"`
	// callerFault: the arguments (or URI) are at fault, not the RS or this
	// server; a resource read answers -32602 rather than -32603.
	callerFault bool
	// scopeText replaces message and http_status in the text: an RS that
	// refuses a stream outside the grant with HTTP 401 and an
	// authentication message would send the model after its credential.
	scopeText string
}

// classify turns any error a handler returns into a failure. Order matters:
// a credential rejection wraps its RS answer, and coded errors may too.
func classify(env *Env, err error) *failure {
	env = answeredBy(env, err)
	var ad *advisedError
	if errors.As(err, &ad) {
		f := classify(env, ad.err)
		f.Next = ad.next
		return f
	}
	var (
		te  *toolError
		rej *credential.RejectedError
		pe  *credential.ProbeError
		re  *rs.Error
		tr  *rs.TransportError
		ce  coder
	)
	switch {
	case errors.As(err, &te):
		return &failure{Code: te.Code, Message: te.Message, Param: te.Param, Next: te.Next, callerFault: true}
	case errors.As(err, &rej):
		f := rsFailure(rej.Err)
		f.Next = rejectedAdvice(env, rej)
		return f
	case errors.As(err, &ce):
		// A coded error may wrap the RS answer that caused it (a refused
		// credential); its status and request id still help.
		f := &failure{Code: ce.ErrorCode(), Message: ce.Error(), Next: codedAdvice(env, ce.ErrorCode())}
		if errors.As(err, &re) {
			f.HTTPStatus, f.RequestID = re.Status, re.RequestID
		} else if errors.As(err, &tr) {
			f.HTTPStatus, f.RequestID = tr.Status, tr.RequestID
		}
		return f
	case errors.As(err, &pe) && errors.As(err, &re):
		f := rsFailure(re)
		f.Next = "pdpp-mcp checks that the token is not an owner token (GET /v1/schema) before it reads data, " +
			"and that check failed; call again when the resource server answers it"
		return f
	case errors.As(err, &re):
		f := rsFailure(re)
		f.Next = rsAdvice(env, re)
		f.callerFault = re.Status < 500
		f.scopeText = scopeMessage(re)
		return f
	case errors.As(err, &tr):
		return &failure{Code: tr.Code, Message: tr.Error(), HTTPStatus: tr.Status, RequestID: tr.RequestID,
			RetryAfterS: tr.RetryAfterS, Next: transportAdvice(env, tr)}
	case errors.Is(err, context.Canceled):
		return &failure{Code: CodeCanceled, Message: "the call was cancelled before the resource server answered",
			Next: "call again if the answer is still needed"}
	}
	return &failure{Code: CodeInternal, Message: err.Error(),
		Next: "call again once; if it fails the same way, report this message"}
}

// answeredBy returns env with ProviderURL set to the provider whose answer
// (or silence) err reports, when the error names one: advice such as
// `pdpp connect <url>` must name the provider that refused, which is not the
// configured one when several providers serve one call.
func answeredBy(env *Env, err error) *Env {
	var (
		re   *rs.Error
		tr   *rs.TransportError
		base string
	)
	if errors.As(err, &re) {
		base = re.BaseURL
	} else if errors.As(err, &tr) {
		base = tr.BaseURL
	}
	if base == "" || base == env.ProviderURL {
		return env
	}
	e := *env
	e.ProviderURL = base
	return &e
}

// rsFailure copies the RS error envelope; the caller adds the advice.
func rsFailure(re *rs.Error) *failure {
	f := &failure{Code: re.Code, Message: re.Message, HTTPStatus: re.Status, RequestID: re.RequestID, Type: re.Type,
		Param: re.Param, RetryWith: re.RetryWith, AvailableConnections: re.AvailableConnections,
		OmittedConnections: re.OmittedConnections, RetryAfterS: re.RetryAfterS}
	if f.Code == "" {
		f.Code = "http_" + strconv.Itoa(re.Status)
	}
	if f.Message == "" {
		f.Message = "the resource server answered HTTP " + strconv.Itoa(re.Status) + " without a message"
	}
	return f
}

// errorBody is the structuredContent of an error result. Every output schema
// declares error, and none requires a success-only property, so an error
// result validates against the tool's outputSchema as strict clients check.
type errorBody struct {
	Error *failure `json:"error"`
}

// errorResult renders err as an isError result: the text a model reads and
// the same facts as structuredContent.error, whose message and next step
// are shown under the visible rule as in the text (they quote the RS and
// the arguments).
func errorResult(env *Env, err error) *mcp.CallToolResult {
	f := classify(env, err)
	sf := *f
	sf.Message, sf.Next = visible.String(f.Message), visible.String(f.Next)
	res := &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: f.text()}},
		StructuredContent: &errorBody{Error: &sf},
	}
	res.SetError(err)
	return res
}

// text is a header line of handles, the message, the candidates when the RS
// named any, and the next step. Messages are composed raw (they quote the RS
// and the arguments with visible.Quote) and rendered under the visible rule
// here, once.
func (f *failure) text() string {
	var b strings.Builder
	msg := f.Message
	if f.scopeText != "" {
		g := *f
		g.HTTPStatus, msg = 0, f.scopeText
		f = &g
	}
	header(&b, f)
	line(&b, "message", visible.String(msg))
	if len(f.AvailableConnections) > 0 {
		list := connectionList(f.AvailableConnections)
		if f.OmittedConnections > 0 {
			list += "|omitted:" + strconv.Itoa(f.OmittedConnections)
		}
		line(&b, "available_connections", list)
	}
	line(&b, "next", visible.String(f.Next))
	return strings.TrimSuffix(b.String(), "\n")
}

// header writes the first line of an error text: the code and the handles
// (status, request id, parameter, retry hints) as key=value tokens.
func header(b *strings.Builder, f *failure) {
	b.WriteString("error code=")
	b.WriteString(inline(f.Code))
	if f.HTTPStatus != 0 {
		b.WriteString(" http_status=")
		b.WriteString(strconv.Itoa(f.HTTPStatus))
	}
	if f.RequestID != "" {
		b.WriteString(" request_id=")
		b.WriteString(inline(f.RequestID))
	}
	if f.Param != "" {
		b.WriteString(" param=")
		b.WriteString(inline(f.Param))
	}
	if f.RetryWith != "" {
		b.WriteString(" retry_with=")
		b.WriteString(inline(f.RetryWith))
	}
	if f.RetryAfterS > 0 {
		b.WriteString(" retry_after_s=")
		b.WriteString(strconv.Itoa(f.RetryAfterS))
	}
	b.WriteByte('\n')
}

func line(b *strings.Builder, key, val string) {
	if val == "" {
		return
	}
	b.WriteString(key)
	b.WriteString(": ")
	b.WriteString(val)
	b.WriteByte('\n')
}

// connectionList renders candidates as {connection_id:…,display_name:…}|…,
// the same form schema uses.
func connectionList(conns []rs.Connection) string {
	parts := make([]string, 0, min(len(conns), maxListedConnections)+1)
	for i, c := range conns {
		if i == maxListedConnections {
			parts = append(parts, fmt.Sprintf("more:%d", len(conns)-maxListedConnections))
			break
		}
		key := c.ConnectorKey
		if key == "" {
			key = c.ConnectorID
		}
		parts = append(parts, connectionItem(inline, c.ConnectionID, c.DisplayName, key))
	}
	return strings.Join(parts, "|")
}

// connectionItem writes one candidate with q: inline for text, inlineRaw
// for a message rendered later.
func connectionItem(q func(string) string, id, displayName, connectorKey string) string {
	s := "{connection_id:" + q(id)
	if displayName != "" {
		s += ",display_name:" + q(displayName)
	}
	if connectorKey != "" {
		s += ",connector_key:" + q(connectorKey)
	}
	return s + "}"
}

// inlineRaw is inline for a message, which is rendered under the visible
// rule when shown: quoted (visible.Quote) when it has a separator.
func inlineRaw(s string) string {
	if !strings.ContainsFunc(s, isInlineSeparator) && visible.Clean(s) {
		return s
	}
	return visible.Quote(s)
}

// scopeMessage says what a scope refusal means for the model ("" for any
// other answer): the RS refuses a stream or connection outside the grant with
// HTTP 401 and a message about token introspection, not about the grant.
func scopeMessage(e *rs.Error) string {
	switch scopeOf(e) {
	case scopeStream:
		return "the stream is not in this grant"
	case scopeConnection:
		return "the connection is not in this grant for this stream"
	case scopeGrant:
		return "the grant does not cover this stream or connection"
	}
	return ""
}

// scopeRefusal is what a scope refusal says is outside the grant.
type scopeRefusal int

const (
	scopeNone       scopeRefusal = iota // not a scope refusal
	scopeStream                         // the stream
	scopeConnection                     // the connection, for this stream
	scopeGrant                          // the stream or the connection; the RS did not say which
)

// scopeOf reads a refusal as a scope refusal, so the message and the advice
// for one answer the same question the same way.
func scopeOf(e *rs.Error) scopeRefusal {
	switch {
	case e.Code == "context.stream_not_allowed":
		return scopeStream
	case e.Code == "context.instance_mismatch":
		return scopeConnection
	case credential.ScopeRefusal(e):
		return scopeGrant
	}
	return scopeNone
}

// rsAdvice is the next step for an RS error answer.
func rsAdvice(env *Env, e *rs.Error) string {
	if len(e.AvailableConnections) > 0 {
		var ids []string
		for i, c := range e.AvailableConnections {
			if i == maxListedConnections {
				break
			}
			ids = append(ids, visible.Quote(c.ConnectionID))
		}
		next := "call again with connection_id set to one of " + strings.Join(ids, ", ")
		if len(e.AvailableConnections) > maxListedConnections || e.OmittedConnections > 0 {
			next += "; call schema for the other connections"
		}
		return next
	}
	if e.RetryWith == "connection_id" {
		return "call schema to list this grant's connections, then call again with connection_id"
	}
	if p := bannedParam(e); p != "" {
		return banAdvice(p)
	}
	switch e.Code {
	case "grant_revoked", "grant_expired", "grant_invalid":
		return "this grant is no longer valid; " + renewAdvice(env)
	case "grant_stream_not_allowed":
		return "the grant does not include this stream; call schema for the granted streams"
	case "field_not_granted":
		return "drop the fields this grant does not include (schema(stream) marks them g=false)"
	case "unknown_field":
		return "call schema(stream) for the stream's field names"
	case "invalid_sort":
		return "sort only on the stream's cursor_field (shown by schema(stream)); prefix it with - for descending"
	case "invalid_cursor":
		return "pass next_cursor exactly as returned, with the same sort and order; or omit cursor to start from the first page"
	case "cursor_expired":
		return "the saved position is too old; start again with changes_since=beginning"
	case "invalid_expand":
		return "expand only relations schema(stream) lists as usable; expand_limit needs its relation in expand and at most its max_limit"
	case "insufficient_scope":
		return "the grant cannot read the related stream; drop that expand relation"
	case "connection_not_found":
		return "call schema for the connection_ids this grant covers"
	case "not_found":
		return "check the stream and record names with schema and query_records"
	}
	switch scopeOf(e) {
	case scopeStream:
		return "call schema for the granted streams"
	case scopeConnection:
		return "call schema(stream) for its connection_ids and use one of them"
	case scopeGrant:
		return "call schema for what it covers and use one of those"
	}
	switch {
	case e.Status == 401:
		return "the resource server rejected the credential; " + renewAdvice(env)
	case e.Status == 403:
		return "the grant does not allow this read; call schema to see what it covers"
	case e.Status == 429 && e.RetryAfterS > 0:
		return "the resource server is rate limiting; wait retry_after_s seconds before calling again"
	case e.Status == 429:
		return "the resource server is rate limiting; wait before calling again"
	case e.Status >= 500:
		return "the resource server failed; call again later and quote request_id if it keeps failing"
	case e.Param == "connector_id":
		// Owner reads of multi-connector stores need a source; the tools
		// select it with connection_id.
		return "pass connection_id (schema lists them) to choose one source"
	case e.Param != "":
		return "fix " + e.Param + " and call again"
	}
	return "adjust the arguments as the message says and call again"
}

// bannedParam reports which of filter, expand, expand_limit or view the RS
// refused to a client (grant) token, which only owner tokens may use on
// today's reference RS; "" when e is not that refusal. The view refusal
// names no param, so the message decides.
func bannedParam(e *rs.Error) string {
	if e.Status != 400 || e.Code != "invalid_request" {
		return ""
	}
	msg := strings.ToLower(e.Message)
	if !strings.Contains(msg, "client") {
		return ""
	}
	switch e.Param {
	case "filter", "expand", "expand_limit", "view":
		return e.Param
	case "":
		for _, p := range []string{"view", "expand_limit", "expand", "filter"} {
			if strings.Contains(msg, p) {
				return p
			}
		}
	}
	return ""
}

func banAdvice(param string) string {
	what := "drop " + param
	if param == "view" {
		what = "use fields instead of view"
	}
	return "this grant's token cannot filter, expand or use views on this resource server; " + what +
		" and call again: narrow with fields, limit and cursor, count or group with aggregate (without filter), " +
		"or find matching records with search"
}

// transportAdvice is the next step when no usable RS answer arrived.
func transportAdvice(env *Env, e *rs.TransportError) string {
	switch e.Code {
	case rs.CodeUnreachable:
		return "the resource server at " + env.ProviderURL + " is not answering; call again later, or ask the user to check that it is running"
	case rs.CodeTimeout:
		return "call again with a narrower request (smaller limit, fewer fields), or later"
	case rs.CodeTooLarge:
		return "narrow the request: a smaller limit or fewer fields"
	case rs.CodeRedirect:
		return "the resource server redirected instead of answering; no arguments can fix this, ask the user to check the provider URL " + env.ProviderURL
	case rs.CodeBusy:
		return "other calls are holding pdpp-mcp's answer memory; wait retry_after_s seconds, then call again, preferably with a smaller limit or fewer fields"
	}
	return "call again later; if it keeps failing, report the request_id"
}

// codedAdvice is the next step for coded errors from layers below the tools
// (credential guards). Their messages already say what the person running the
// server must do; the model can only relay it.
func codedAdvice(env *Env, code string) string {
	if code == credential.CodeOwnerRefused {
		return "this server serves only grant-scoped client tokens; " + grantAdvice(env) + ". No other arguments can fix this call"
	}
	return "relay the message to the user; no other arguments can fix this call"
}

// rejectedAdvice is the next step after the RS refused the credential and the
// guard re-read the cache (stdio only: a hosted server has no cache).
func rejectedAdvice(env *Env, rej *credential.RejectedError) string {
	switch rej.Outcome {
	case credential.OutcomeReloaded:
		return "the resource server rejected the previous token; pdpp-mcp loaded a new credential from " + rej.File +
			" and checks it before the next call: call again"
	case credential.OutcomeRaced:
		return "the resource server rejected the previous token and the credential has been replaced since; call again"
	case credential.OutcomeUnusable:
		why := ""
		if rej.Cause != nil {
			why = " (" + strings.TrimSuffix(rej.Cause.Error(), ".") + ")"
		}
		return "the resource server rejected the credential and " + rej.File + " holds no usable replacement" + why + "; " +
			renewAdvice(env)
	}
	return "the resource server rejected the credential and " + rej.File + " still holds the same token; " + renewAdvice(env)
}

// renewAdvice says how the user gets a working credential, which depends on
// how the server runs: a local user can run the CLI, a hosted caller cannot.
func renewAdvice(env *Env) string {
	if env.Mode == ModeHosted {
		return "the user must re-approve the grant with the provider" + atProvider(env) + ", then call again"
	}
	return "ask the user to run " + connectHint(env) + ", then call again"
}

// grantAdvice says how the user gets a grant-scoped credential.
func grantAdvice(env *Env) string {
	if env.Mode == ModeHosted {
		return "the user must approve a grant for this client with the provider" + atProvider(env)
	}
	return "ask the user to run " + connectHint(env) + " to cache one"
}

func atProvider(env *Env) string {
	if env.ProviderURL == "" {
		return ""
	}
	return " at " + env.ProviderURL
}

func connectHint(env *Env) string {
	if env.ProviderURL == "" {
		return "`pdpp connect <provider-url>`"
	}
	return "`pdpp connect " + env.ProviderURL + "`"
}
