package tools

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
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

// errorResult renders err as an isError result: one text block, no
// structuredContent (see the package documentation for why).
func errorResult(env *Env, err error) *mcp.CallToolResult {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: errorText(env, err)}}}
	res.SetError(err)
	return res
}

// errorText is the model-visible description of a failed call: a header line
// of handles, the message, the candidates when the RS named any, and the next
// step.
func errorText(env *Env, err error) string {
	var (
		te *toolError
		re *rs.Error
		tr *rs.TransportError
		ce coder
	)
	var b strings.Builder
	switch {
	case errors.As(err, &te):
		header(&b, te.Code, 0, "", te.Param, "")
		line(&b, "message", te.Message)
		line(&b, "next", te.Next)
	case errors.As(err, &ce):
		// A coded error may wrap the RS answer that caused it (a refused
		// credential); its status and request id still help.
		var status int
		var rid string
		if errors.As(err, &re) {
			status, rid = re.Status, re.RequestID
		} else if errors.As(err, &tr) {
			status, rid = tr.Status, tr.RequestID
		}
		header(&b, ce.ErrorCode(), status, rid, "", "")
		line(&b, "message", ce.Error())
		line(&b, "next", codedAdvice(env, ce.ErrorCode()))
	case errors.As(err, &re):
		code := re.Code
		if code == "" {
			code = "http_" + strconv.Itoa(re.Status)
		}
		header(&b, code, re.Status, re.RequestID, re.Param, re.RetryWith)
		retryAfterHeader(&b, re.RetryAfterS)
		msg := re.Message
		if msg == "" {
			msg = "the resource server answered HTTP " + strconv.Itoa(re.Status) + " without a message"
		}
		line(&b, "message", msg)
		if len(re.AvailableConnections) > 0 {
			list := connectionList(re.AvailableConnections)
			if re.OmittedConnections > 0 {
				list += "|omitted:" + strconv.Itoa(re.OmittedConnections)
			}
			line(&b, "available_connections", list)
		}
		line(&b, "next", rsAdvice(env, re))
	case errors.As(err, &tr):
		header(&b, tr.Code, tr.Status, tr.RequestID, "", "")
		retryAfterHeader(&b, tr.RetryAfterS)
		line(&b, "message", tr.Error())
		line(&b, "next", transportAdvice(env, tr))
	case errors.Is(err, context.Canceled):
		header(&b, CodeCanceled, 0, "", "", "")
		line(&b, "message", "the call was cancelled before the resource server answered")
		line(&b, "next", "call again if the answer is still needed")
	default:
		header(&b, CodeInternal, 0, "", "", "")
		line(&b, "message", err.Error())
		line(&b, "next", "call again once; if it fails the same way, report this message")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func header(b *strings.Builder, code string, status int, requestID, param, retryWith string) {
	b.WriteString("error code=")
	b.WriteString(inline(code))
	if status != 0 {
		b.WriteString(" http_status=")
		b.WriteString(strconv.Itoa(status))
	}
	if requestID != "" {
		b.WriteString(" request_id=")
		b.WriteString(inline(requestID))
	}
	if param != "" {
		b.WriteString(" param=")
		b.WriteString(inline(param))
	}
	if retryWith != "" {
		b.WriteString(" retry_with=")
		b.WriteString(inline(retryWith))
	}
	b.WriteByte('\n')
}

// retryAfterHeader appends retry_after_s=N to the header line just written.
func retryAfterHeader(b *strings.Builder, seconds int) {
	if seconds <= 0 {
		return
	}
	s := strings.TrimSuffix(b.String(), "\n")
	b.Reset()
	b.WriteString(s + " retry_after_s=" + strconv.Itoa(seconds) + "\n")
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
		parts = append(parts, connectionItem(c.ConnectionID, c.DisplayName, key))
	}
	return strings.Join(parts, "|")
}

func connectionItem(id, displayName, connectorKey string) string {
	s := "{connection_id:" + inline(id)
	if displayName != "" {
		s += ",display_name:" + inline(displayName)
	}
	if connectorKey != "" {
		s += ",connector_key:" + inline(connectorKey)
	}
	return s + "}"
}

// rsAdvice is the next step for an RS error answer.
func rsAdvice(env *Env, e *rs.Error) string {
	if e.Advice != "" {
		return e.Advice
	}
	if len(e.AvailableConnections) > 0 {
		var ids []string
		for i, c := range e.AvailableConnections {
			if i == maxListedConnections {
				break
			}
			ids = append(ids, strconv.Quote(c.ConnectionID))
		}
		next := "call again with connection_id set to one of " + strings.Join(ids, ", ")
		if len(e.AvailableConnections) > maxListedConnections {
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
		return "this grant is no longer valid; ask the user to approve a new one with " + connectHint(env)
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
	switch {
	case e.Code == "context.stream_not_allowed":
		return "the grant does not include this stream; call schema for the granted streams"
	case e.Code == "context.instance_mismatch":
		return "the grant does not include this connection for the stream; call schema(stream) for its connection_ids"
	case e.Status == 401 && strings.HasPrefix(e.Code, "context.") &&
		e.Code != "context.active_false" && e.Code != "context.kind_mismatch":
		return "the grant does not cover this request: check stream and connection_id against schema; " +
			"if they are listed there, the credential needs renewing with " + connectHint(env)
	case e.Status == 401:
		return "the resource server rejected the credential; ask the user to run " + connectHint(env) + ", then call again"
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
	if code == "owner_token_refused" {
		return "this server serves only grant-scoped client tokens; ask the user to run " + connectHint(env) +
			" to cache one. No other arguments can fix this call"
	}
	return "relay the message to the user; no other arguments can fix this call"
}

func connectHint(env *Env) string {
	if env.ProviderURL == "" {
		return "`pdpp connect <provider-url>`"
	}
	return "`pdpp connect " + env.ProviderURL + "`"
}
