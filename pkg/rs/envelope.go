package rs

import (
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// maxTextMessage bounds the message taken from a non-JSON error body (an HTML
// proxy page, a stack trace). The cut is marked in the message itself.
const maxTextMessage = 512

// parseError builds an *Error from a non-2xx answer. It accepts the canonical
// {"error":{...}} envelope, the OAuth {"error":"x","error_description":"..."}
// shape, any other JSON object, and non-JSON text. It never fails: whatever
// the body, the result has a Code and a Message.
func parseError(status int, header http.Header, body []byte) *Error {
	e := &Error{Status: status}
	if header != nil {
		e.RequestID = header.Get("Request-Id")
	}

	var obj gjson.Result // the object the fields are read from
	if gjson.ValidBytes(body) {
		root := gjson.ParseBytes(body)
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
			e.Object = []byte(obj.Raw)
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
		e.AvailableConnections = connections(obj.Get("available_connections"))
		if e.RequestID == "" {
			e.RequestID = stringAt(obj, "request_id")
		}
	} else {
		e.Type = "rs_error"
		e.Message = textMessage(body)
	}

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
func connections(v gjson.Result) []Connection {
	if !v.IsArray() {
		return nil
	}
	var out []Connection
	v.ForEach(func(_, c gjson.Result) bool {
		id := stringAt(c, "connection_id")
		if id == "" {
			return true
		}
		out = append(out, Connection{
			ConnectionID: id,
			DisplayName:  stringAt(c, "display_name"),
			ConnectorKey: stringAt(c, "connector_key"),
			ConnectorID:  stringAt(c, "connector_id"),
		})
		return true
	})
	return out
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
