package server

import (
	"context"
	"net/url"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxResourceURI bounds a resources/read URI; the longest real one (a
// field window of a long record id) is far shorter.
const maxResourceURI = 8192

// checkResourceURI answers resources/read with invalid params (-32602) when
// the URI is not a plausible URI, before the SDK sees it. The SDK quotes an
// unknown URI into its not-found error with Go syntax, which is not JSON for
// control and other non-printable characters, and the unencodable answer
// ended the session.
func checkResourceURI(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if r, ok := req.(*mcp.ReadResourceRequest); ok && r.Params != nil {
			if why := badURI(r.Params.URI); why != "" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: uri " + why}
			}
		}
		return next(ctx, method, req)
	}
}

// badURI says what is wrong with uri, or "" when nothing is.
func badURI(uri string) string {
	switch {
	case uri == "":
		return "is empty"
	case len(uri) > maxResourceURI:
		return "is longer than 8192 bytes"
	case !utf8.ValidString(uri):
		return "is not valid UTF-8"
	}
	for _, r := range uri {
		if r == ' ' || !unicode.IsPrint(r) {
			return "contains a space, control or other non-printable character"
		}
	}
	u, err := url.Parse(uri)
	if err != nil || u.Scheme == "" {
		return "is not an absolute URI"
	}
	return ""
}
