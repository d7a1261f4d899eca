package server

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

// Direct answers resources/read too, as the SDK's readResource does inside
// the middleware: the URI is matched against the resource templates in the
// SDK's order with the SDK's matcher (the uritemplate package's regular
// expression of each template, compiled once here where the SDK compiles
// it for every template on every read), the template's handler reads it,
// and the result gets the cache fields and defaults the SDK gives it.

// readTemplate is one resource template Direct reads through.
type readTemplate struct {
	uriTemplate, mimeType string
	read                  mcp.ResourceHandler
	match                 *regexp.Regexp
}

// newReadTemplates orders ts as the SDK matches them (by URI template) and
// compiles their matchers. A template the SDK could not parse never
// matches there, and is left out here.
func newReadTemplates(ts []tools.Template) []readTemplate {
	var out []readTemplate
	for _, t := range ts {
		tmpl, err := uritemplate.New(t.Template.URITemplate)
		if err != nil {
			continue
		}
		out = append(out, readTemplate{uriTemplate: t.Template.URITemplate, mimeType: t.Template.MIMEType, read: t.Read, match: tmpl.Regexp()})
	}
	slices.SortStableFunc(out, func(a, b readTemplate) int {
		return strings.Compare(a.uriTemplate, b.uriTemplate)
	})
	return out
}

// readKey marks, in a read's context, the result Direct's dispatch made, so
// that ReadResource knows whether the middleware handed it back.
type readKey struct{}

// ReadResource runs the resources/read req (Params.URI set, nothing else
// in Params but _meta) through the receiving middleware and returns the
// result's wire form, as the SDK would put it in the response. The error
// is a JSON-RPC-level failure, as the SDK would send it.
func (d *Direct) ReadResource(ctx context.Context, req *mcp.ReadResourceRequest) ([]byte, error) {
	var made *mcp.ReadResourceResult
	res, err := d.handle(context.WithValue(ctx, readKey{}, &made), "resources/read", req)
	if err != nil {
		return nil, err
	}
	if res == nil {
		return []byte("null"), nil
	}
	_, stateless := req.Params.Meta[mcp.MetaKeyProtocolVersion]
	if stateless {
		annotateResult(res, d.impl)
	}
	b, err := sdkMarshal(res)
	if err != nil {
		return nil, err
	}
	if r, ok := res.(*mcp.ReadResourceResult); ok && stateless && r == made && len(b) > 2 && b[len(b)-1] == '}' {
		// The SDK marks the results it made for a stateless request
		// complete; the field is its own, written last.
		b = append(b[:len(b)-1], `,"resultType":"complete"}`...)
	}
	return b, nil
}

// readResource is the SDK's readResource for Direct.
func (d *Direct) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (mcp.Result, error) {
	uri := req.Params.URI
	i := slices.IndexFunc(d.templates, func(t readTemplate) bool { return t.match.MatchString(uri) })
	if i < 0 {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	t := d.templates[i]
	res, err := t.read(ctx, req)
	if err != nil {
		return nil, err
	}
	if res == nil || res.Contents == nil {
		return nil, fmt.Errorf("reading resource %s: read handler returned nil information", uri)
	}
	if res.InputRequests != nil || res.RequestState != "" {
		// The SDK would run a multi-round-trip exchange, which needs a
		// session; no handler of this server asks for one.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "reading resource " + uri + ": the handler asked for client input, which is not served here"}
	}
	setCacheable(ctx, req, &res.Cacheable)
	if res.CacheScope == "" {
		res.CacheScope = "public"
	}
	for _, c := range res.Contents {
		if c.URI == "" {
			c.URI = uri
		}
		if c.MIMEType == "" {
			c.MIMEType = t.mimeType
		}
	}
	if made, ok := ctx.Value(readKey{}).(**mcp.ReadResourceResult); ok {
		*made = res
	}
	return res, nil
}
