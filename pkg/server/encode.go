package server

import (
	"bytes"
	"encoding/json"

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

// EncodeToolResult is the JSON encoding of r as the SDK sends it. Results of a shape it does not write by
// hand (content other than plain text, a structuredContent that is not
// encoded yet, multi-round-trip fields) are encoded by the SDK's own
// MarshalJSON.
func EncodeToolResult(r *mcp.CallToolResult) ([]byte, error) {
	if b, ok := appendToolResult(nil, r); ok {
		return b, nil
	}
	return marshalNoEscape(r)
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
		t, ok := c.(*mcp.TextContent)
		if !ok || t == nil || len(t.Meta) > 0 || t.Annotations != nil {
			return nil, false
		}
		size += len(t.Text) + len(t.Text)/8 + 32
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
			b = append(b, `{"type":"text","text":`...)
			b = jsonw.AppendMarshalString(b, c.(*mcp.TextContent).Text)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if sc != nil {
		// Encoded by the guard with encoding/json: valid and compact.
		b = append(append(b, `,"structuredContent":`...), sc...)
	}
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	return append(b, '}'), true
}

// marshalNoEscape encodes v as the SDK encodes messages: without HTML
// escaping and without the encoder's trailing newline.
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
