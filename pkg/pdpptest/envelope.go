package pdpptest

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// contentTypeJSON is what the reference sends on every JSON answer.
const contentTypeJSON = "application/json; charset=utf-8"

// apiError is an RS error answer: the HTTP status, the stable code clients branch
// on, the message, and any extra keys of the error object (param,
// available_connections, retry_with, resource_metadata, next_step) in the order
// the reference emits them.
type apiError struct {
	status  int
	code    string
	message string
	extra   *object
	header  http.Header
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.status, e.code, e.message) }

// errf builds an apiError with a formatted message.
func errf(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, message: fmt.Sprintf(format, args...), extra: &object{}}
}

// with adds an extra key to the error object.
func (e *apiError) with(key string, val any) *apiError {
	e.extra.set(key, val)
	return e
}

// param names the offending request parameter.
func (e *apiError) param(p string) *apiError { return e.with("param", p) }

// Frequently used errors, named after their code.
func badRequest(format string, args ...any) *apiError {
	return errf(http.StatusBadRequest, "invalid_request", format, args...)
}

func notFound(format string, args ...any) *apiError {
	return errf(http.StatusNotFound, "not_found", format, args...)
}

// errorType derives error.type from the status. The reference's table has no
// entry for 409 or 422, so those (and every 5xx) are "api_error".
func errorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusGone:
		return "gone_error"
	case http.StatusRequestEntityTooLarge:
		return "request_entity_too_large_error"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	}
	return "api_error"
}

// errorBody is the {"error":{…}} envelope: code, message, type, the extras in
// order, then request_id.
func errorBody(e *apiError, requestID string) *object {
	inner := obj("code", e.code, "message", e.message, "type", errorType(e.status))
	if e.extra != nil {
		for _, m := range e.extra.members {
			inner.set(m.key, m.val)
		}
	}
	inner.set("request_id", requestID)
	return obj("error", inner)
}

// writeJSON sends a JSON body with the reference content type.
func writeJSON(w http.ResponseWriter, status int, body any) {
	b, err := marshal(body)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"api_error","message":"response encoding failed","type":"api_error"}}`)
	}
	w.Header().Set("Content-Type", contentTypeJSON)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeError sends e as the standard error envelope.
func writeError(w http.ResponseWriter, requestID string, e *apiError) {
	for k, vs := range e.header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	writeJSON(w, e.status, errorBody(e, requestID))
}

// warning is one meta.warnings entry. Keys are emitted in the reference's
// (alphabetical) order.
func warning(code, message, param string, detail *object) *object {
	w := obj("code", code)
	w.setIf(detail != nil, "detail", detail)
	w.set("message", message)
	w.setIf(param != "", "param", param)
	return w
}

// limitClampedWarning says a limit was cut to max and how to get the rest.
func limitClampedWarning(param string, requested, max int, message string) *object {
	return warning("limit_clamped", message, param, obj("max_limit", max, "requested_limit", requested))
}

// finalize applies the reference's canonical envelope to a JSON read answer:
// links.self is the request path with its original query, links.next appears
// when the body has has_more (null unless there is a cursor to follow),
// meta.count defaults to {"kind":"none"} and meta.warnings to []. Keys the
// operation already set keep their position.
func finalize(body *object, c *call) *object {
	links, _ := body.get("links")
	lo, _ := links.(*object)
	if lo == nil {
		lo = &object{}
	}
	lo.set("self", c.r.RequestURI)
	if hm, ok := body.get("has_more"); ok {
		lo.set("next", nextLink(body, hm, c))
	}
	body.set("links", lo)

	meta, _ := body.get("meta")
	mo, _ := meta.(*object)
	if mo == nil {
		mo = &object{}
	}
	if !mo.has("count") {
		mo.set("count", obj("kind", "none"))
	}
	if !mo.has("warnings") {
		mo.set("warnings", []any{})
	}
	body.set("meta", mo)
	return body
}

// nextLink is the URL of the next page: the request with cursor and
// changes_since removed, then re-added from the body.
func nextLink(body *object, hasMore any, c *call) any {
	more, _ := hasMore.(bool)
	cur, _ := body.get("next_cursor")
	chg, _ := body.get("next_changes_since")
	curS, _ := cur.(string)
	chgS, _ := chg.(string)
	if !more || (curS == "" && chgS == "") {
		return nil
	}
	var parts []string
	for _, p := range c.q.pairs {
		if p.key == "cursor" || p.key == "changes_since" {
			continue
		}
		parts = append(parts, formEncode(p.key)+"="+formEncode(p.value))
	}
	if curS != "" {
		parts = append(parts, "cursor="+formEncode(curS))
	}
	if chgS != "" {
		parts = append(parts, "changes_since="+formEncode(chgS))
	}
	return c.r.URL.EscapedPath() + "?" + strings.Join(parts, "&")
}

// formEncode is the application/x-www-form-urlencoded serializer the reference
// uses for links.next: alphanumerics and *-._ stay, space becomes +, every other
// byte is percent-encoded.
func formEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9',
			ch == '*', ch == '-', ch == '.', ch == '_':
			b.WriteByte(ch)
		case ch == ' ':
			b.WriteByte('+')
		default:
			fmt.Fprintf(&b, "%%%02X", ch)
		}
	}
	return b.String()
}
