package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
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
	var b []byte
	var ok bool
	switch r := res.(type) {
	case *mcp.ReadResourceResult:
		b, ok = d.appendReadResult(nil, r, true)
	case uncached:
		if r, isRead := r.Result.(*mcp.ReadResourceResult); isRead {
			b, ok = d.appendReadResult(nil, r, false)
		}
	}
	if !ok {
		if b, err = jsonw.MarshalNoEscape(res); err != nil {
			return nil, err
		}
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

// appendReadResult appends the wire form of r, as the SDK's encoder writes
// it (the result's MarshalJSON encodes with encoding/json's Marshal, HTML
// escaping included, and the SDK's encoder copies that), when r has a shape
// it writes by hand, and reports whether it did. cache says whether ttlMs
// and cacheScope are written (revisionFields leaves them out for older
// revisions). The read text is a whole document as a string, and
// encoding/json walked it three times (the result, the revision filter's
// re-encoding, the SDK's copy); this walks it once.
func (d *Direct) appendReadResult(b []byte, r *mcp.ReadResourceResult, cache bool) ([]byte, bool) {
	if r == nil || r.Contents == nil || r.InputRequests != nil || r.RequestState != "" || r.NeedsInput() {
		return nil, false
	}
	size := 128
	for _, c := range r.Contents {
		if c == nil {
			return nil, false
		}
		size += len(c.URI) + len(c.Text) + len(c.Text)/8 + len(c.Blob)*4/3 + 64
	}
	if b == nil {
		b = make([]byte, 0, size)
	}
	b = append(b, '{')
	if len(r.Meta) > 0 {
		m, ok := d.metaJSON(r.Meta)
		if !ok {
			return nil, false
		}
		b = append(append(append(b, `"_meta":`...), m...), ',')
	}
	if cache {
		b = append(b, `"ttlMs":`...)
		b = strconv.AppendInt(b, int64(r.TTLMs), 10)
		b = append(b, `,"cacheScope":`...)
		b = jsonw.AppendMarshalString(b, r.CacheScope)
		b = append(b, ',')
	}
	b = append(b, `"contents":[`...)
	for i, c := range r.Contents {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"uri":`...)
		b = jsonw.AppendMarshalString(b, c.URI)
		if c.MIMEType != "" {
			b = append(b, `,"mimeType":`...)
			b = jsonw.AppendMarshalString(b, c.MIMEType)
		}
		if c.Text != "" {
			b = append(b, `,"text":`...)
			b = jsonw.AppendMarshalString(b, c.Text)
		}
		if c.Blob != nil {
			b = append(b, `,"blob":"`...)
			b = base64.StdEncoding.AppendEncode(b, c.Blob)
			b = append(b, '"')
		}
		if len(c.Meta) > 0 {
			m, ok := d.metaJSON(c.Meta)
			if !ok {
				return nil, false
			}
			b = append(append(b, `,"_meta":`...), m...)
		}
		b = append(b, '}')
	}
	return append(b, "]}"...), true
}

// InfoMeta is the _meta of a result that carries only the server's
// identity, as encoding/json's Marshal writes it, encoded once.
func (d *Direct) InfoMeta() ([]byte, bool) {
	d.infoOnce.Do(func() { d.info, d.infoErr = json.Marshal(mcp.Meta{mcp.MetaKeyServerInfo: d.impl}) })
	return d.info, d.infoErr == nil
}

// metaJSON is m as encoding/json's Marshal writes it; the server's
// identity alone, which every 2026-07-28 result carries, is encoded once.
func (d *Direct) metaJSON(m mcp.Meta) ([]byte, bool) {
	if len(m) == 1 {
		if impl, ok := m[mcp.MetaKeyServerInfo].(*mcp.Implementation); ok && impl == d.impl {
			return d.InfoMeta()
		}
	}
	b, err := json.Marshal(m)
	return b, err == nil
}
