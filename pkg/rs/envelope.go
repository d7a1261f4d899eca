package rs

import (
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// maxTextMessage bounds the message taken from a non-JSON error body (an HTML
// proxy page, a stack trace). The cut is marked in the message itself.
const maxTextMessage = 512

// parseErrorTok builds an *Error from a non-2xx answer. It accepts the
// canonical {"error":{...}} envelope, the OAuth
// {"error":"x","error_description":"..."} shape, any other JSON object, and
// non-JSON text. It never fails: whatever the body, the result has a Code and
// a Message. The body may echo tok: every string taken from it is redacted
// (after decoding), made valid UTF-8 and bounded. deep says the body nests deeper than MaxDepth and must not be parsed.
func parseErrorTok(status int, header http.Header, body []byte, tok string, deep bool) *Error {
	return parseError(status, header, body, newBearer(tok), deep)
}

// parseError is parseErrorTok with the token's spellings made already.
func parseError(status int, header http.Header, body []byte, k *bearer, deep bool) *Error {
	e := &Error{Status: status}
	if header != nil {
		e.RequestID = header.Get("Request-Id")
		if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
			e.RetryAfterS = retryAfter(header.Get("Retry-After"), time.Now())
		}
	}
	if !deep && looksJSON(body) && CheckDepth(body, MaxDepth) != nil {
		deep = true
	}

	var obj gjson.Result // the object the fields are read from
	if deep {
		e.Type = "rs_error"
		e.Message = "the error body (" + strconv.Itoa(len(body)) + " bytes) is JSON nested deeper than " +
			strconv.Itoa(MaxDepth) + " levels and was not read"
	} else if gjson.ValidBytes(body) {
		root := gjson.Parse(view(body))
		if root.IsObject() {
			inner := root.Get("error")
			switch {
			case inner.IsObject():
				obj = inner
			case inner.Type == gjson.String:
				// OAuth style: the code is the "error" string itself.
				obj = root
				e.Code = inner.Str
				e.Type = inner.Str
				e.Message = firstString(root, "error_description", "message")
			default:
				obj = root
			}
			if len(obj.Raw) <= maxErrorObject {
				e.Object = []byte(obj.Raw)
			}
		}
	}

	if obj.Exists() {
		if e.Code == "" {
			e.Code = stringAt(obj, "code")
		}
		if e.Type == "" {
			e.Type = stringAt(obj, "type")
		}
		if e.Message == "" {
			e.Message = stringAt(obj, "message")
		}
		e.Param = stringAt(obj, "param")
		e.RetryWith = retryWith(obj.Get("retry_with"))
		e.AvailableConnections, e.OmittedConnections = connections(obj.Get("available_connections"), k)
		if e.RequestID == "" {
			e.RequestID = stringAt(obj, "request_id")
		}
	} else if !deep {
		e.Type = "rs_error"
		e.Message = textMessage(body)
	}
	e.Code = cleanString(e.Code, k, MaxIdentifierBytes)
	e.Type = cleanString(e.Type, k, MaxIdentifierBytes)
	e.Param = cleanString(e.Param, k, MaxIdentifierBytes)
	e.RetryWith = cleanString(e.RetryWith, k, MaxIdentifierBytes)
	e.Message = cleanString(e.Message, k, MaxMessageBytes)
	e.RequestID = cleanRequestID(e.RequestID, k)

	if e.Code == "" {
		e.Code = "http_" + strconv.Itoa(status)
	}
	if e.Message == "" {
		e.Message = "resource server answered HTTP " + strconv.Itoa(status)
	}
	return e
}

// stringAt returns the string at key, or "" when it is absent or not a string.
func stringAt(r gjson.Result, key string) string {
	if v := r.Get(key); v.Type == gjson.String {
		return v.Str
	}
	return ""
}

func firstString(r gjson.Result, keys ...string) string {
	for _, k := range keys {
		if s := stringAt(r, k); s != "" {
			return s
		}
	}
	return ""
}

// retryWith reads retry_with as the RS sends it ("connection_id") or as an
// object {field, guidance} (the RS schema route and some package errors).
func retryWith(v gjson.Result) string {
	switch {
	case v.Type == gjson.String:
		return v.Str
	case v.IsObject():
		return stringAt(v, "field")
	}
	return ""
}

// connections reads available_connections. Entries without a string
// connection_id cannot be retried with and are left out here; Error.Object
// still carries them verbatim.
// At most MaxConnections are kept; omitted counts the rest.
func connections(v gjson.Result, k *bearer) (out []Connection, omitted int) {
	if !v.IsArray() {
		return nil, 0
	}
	v.ForEach(func(_, c gjson.Result) bool {
		id := stringAt(c, "connection_id")
		if id == "" {
			return true
		}
		if len(out) == MaxConnections {
			omitted++
			return true
		}
		out = append(out, Connection{
			ConnectionID: cleanString(id, k, MaxIdentifierBytes),
			DisplayName:  cleanString(stringAt(c, "display_name"), k, MaxIdentifierBytes),
			ConnectorKey: cleanString(stringAt(c, "connector_key"), k, MaxIdentifierBytes),
			ConnectorID:  cleanString(stringAt(c, "connector_id"), k, MaxIdentifierBytes),
		})
		return true
	})
	return out, omitted
}

// maxRetryAfterS bounds a Retry-After worth repeating (one day).
const maxRetryAfterS = 86400

// retryAfter reads Retry-After as seconds or an HTTP date; 0 when absent,
// malformed or in the past.
func retryAfter(v string, now time.Time) int {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil {
		return min(max(n, 0), maxRetryAfterS)
	}
	if t, err := http.ParseTime(v); err == nil {
		s := int(t.Sub(now).Round(time.Second) / time.Second)
		return min(max(s, 0), maxRetryAfterS)
	}
	return 0
}

// textMessage turns a non-JSON body into a one-paragraph message: trimmed,
// valid UTF-8, and at most maxTextMessage bytes with the cut stated.
func textMessage(body []byte) string {
	s := strings.TrimSpace(strings.ToValidUTF8(string(body), "\uFFFD"))
	if len(s) <= maxTextMessage {
		return s
	}
	cut := maxTextMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + " … [non-JSON error body cut at " + strconv.Itoa(cut) + " of " +
		strconv.Itoa(len(s)) + " bytes]"
}
