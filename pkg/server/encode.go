package server

import (
	"encoding/base64"
	"encoding/json"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
)

// A tool result is encoded three times on its way out through the SDK: the
// guard encodes structuredContent to find out whether it can be, the SDK's
// MarshalJSON encodes the result (scanning structuredContent again), and
// encoding/json scans MarshalJSON's output once more. For a page of records
// those scans were most of the server's CPU per call. EncodeToolResult
// writes the result's wire form directly from the structuredContent bytes
// the guard already has, byte for byte what the SDK's encoder writes (held
// by TestEncodeToolResultMatchesSDK), so the guard hands the SDK a result
// that encodes itself and one scan remains.

// EncodeToolResult is the JSON encoding of r as the SDK sends it. Results
// of a shape it does not write by hand (content other than text, resource
// links and images, content with _meta or annotations, a structuredContent
// that is not encoded yet, multi-round-trip fields) are encoded by the
// SDK's own MarshalJSON.
func EncodeToolResult(r *mcp.CallToolResult) ([]byte, error) {
	if b, ok := appendToolResult(nil, r); ok {
		return b, nil
	}
	return jsonw.MarshalNoEscape(r)
}

// appendToolResult appends the wire form of r when its shape is one it
// writes by hand, and reports whether it did.
func appendToolResult(b []byte, r *mcp.CallToolResult) ([]byte, bool) {
	sc, scOK := r.StructuredContent.(json.RawMessage)
	if (r.StructuredContent != nil && !scOK) || r.InputRequests != nil || r.RequestState != "" || r.NeedsInput() {
		return nil, false
	}
	size := len(sc) + 64
	for _, c := range r.Content {
		n, ok := contentSize(c)
		if !ok {
			return nil, false
		}
		size += n
	}
	if b == nil {
		b = make([]byte, 0, size)
	}
	b = append(b, '{')
	if len(r.Meta) > 0 {
		m, err := json.Marshal(r.Meta)
		if err != nil {
			return nil, false
		}
		b = append(append(append(b, `"_meta":`...), m...), ',')
	}
	b = append(b, `"content":`...)
	if r.Content == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, c := range r.Content {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendContent(b, c)
		}
		b = append(b, ']')
	}
	if sc != nil {
		// Encoded by the guard with encoding/json, or built by a tool as
		// jsonw.Encoded: valid and compact either way.
		b = append(append(b, `,"structuredContent":`...), sc...)
	}
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	return append(b, '}'), true
}

// contentSize estimates the encoded size of c and reports whether
// appendContent writes it: text, resource links and images without _meta,
// annotations or icons (which take the SDK's encoder).
func contentSize(c mcp.Content) (int, bool) {
	switch c := c.(type) {
	case *mcp.TextContent:
		if c == nil || len(c.Meta) > 0 || c.Annotations != nil {
			return 0, false
		}
		return len(c.Text) + len(c.Text)/8 + 32, true
	case *mcp.ResourceLink:
		if c == nil || len(c.Meta) > 0 || c.Annotations != nil || c.Icons != nil {
			return 0, false
		}
		return len(c.URI) + len(c.Name) + len(c.Title) + len(c.Description) + len(c.MIMEType) + 128, true
	case *mcp.ImageContent:
		if c == nil || len(c.Meta) > 0 || c.Annotations != nil {
			return 0, false
		}
		return base64.StdEncoding.EncodedLen(len(c.Data)) + len(c.MIMEType) + 48, true
	}
	return 0, false
}

// appendContent writes one content block contentSize accepted, with the
// fields in the order, and the omissions, of the SDK's wire structs.
func appendContent(b []byte, c mcp.Content) []byte {
	switch c := c.(type) {
	case *mcp.TextContent:
		b = append(b, `{"type":"text","text":`...)
		b = jsonw.AppendMarshalString(b, c.Text)
	case *mcp.ResourceLink:
		b = append(b, `{"type":"resource_link"`...)
		for _, f := range [...]struct{ key, v string }{
			{"mimeType", c.MIMEType}, {"uri", c.URI}, {"name", c.Name}, {"title", c.Title}, {"description", c.Description},
		} {
			if f.v != "" {
				b = append(append(append(b, ',', '"'), f.key...), '"', ':')
				b = jsonw.AppendMarshalString(b, f.v)
			}
		}
		if c.Size != nil {
			b = strconv.AppendInt(append(b, `,"size":`...), *c.Size, 10)
		}
	case *mcp.ImageContent:
		b = append(b, `{"type":"image","mimeType":`...)
		b = jsonw.AppendMarshalString(b, c.MIMEType)
		b = append(b, `,"data":"`...)
		b = base64.StdEncoding.AppendEncode(b, c.Data)
		b = append(b, '"')
	}
	return append(b, '}')
}
