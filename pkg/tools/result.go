package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// readResult is the structuredContent of the read tools. Data is the RS
// body as raw bytes, so its key order survives; no decode/re-encode happens.
type readResult struct {
	Data json.RawMessage `json:"data"`
	// ContentLadder is the ladder as json.Marshal encodes it
	// (evidence.Ladder.AppendJSON), copied as it is.
	ContentLadder jsonw.Encoded `json:"content_ladder,omitempty"`
	// Legend explains the field capability flags (schema only).
	Legend json.RawMessage `json:"field_capability_legend,omitempty"`
	// Omitted says what a projection left out of Data and how to get it.
	Omitted     string `json:"omitted,omitempty"`
	ProviderURL string `json:"provider_url"`
	RequestID   string `json:"request_id,omitempty"`
}

// success builds a successful result: one text block for the model and the
// structured envelope.
func success(text string, sc *readResult) *mcp.CallToolResult {
	res := &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: sc,
	}
	if enc, ok := sc.encode(); ok {
		res.StructuredContent = enc
	}
	return res
}

// documentResult is the answer of a tool whose text is its structured
// document as compact JSON: the document is encoded once, and the
// structured copy derived from the text (jsonw.Twice). A document that
// cannot be encoded stays as it is, for the server's encoding check to
// report.
//
// Its strings were rendered under the visible rule as the document was
// built; a hidden character that got through anyway (raw, or as an escape
// of a control character) is marked here, in text and structured copy
// alike. A document that holds marks says how many in its metadata.
func documentResult(doc hiddenNoter, extra []mcp.Content) *mcp.CallToolResult {
	text, err := jsonw.MarshalNoEscape(doc)
	if err != nil {
		return &mcp.CallToolResult{Content: append([]mcp.Content{&mcp.TextContent{Text: "null"}}, extra...), StructuredContent: doc}
	}
	text = visible.MarkHiddenJSON(text)
	shown := string(text)
	if n := visible.Count(shown); n > 0 {
		doc.noteHidden(visible.Note(n))
		if t, err := jsonw.MarshalNoEscape(doc); err == nil {
			text = visible.MarkHiddenJSON(t)
			shown = string(text)
		}
	}
	enc, err := jsonw.AppendRaw(make([]byte, 0, len(text)+len(text)/16), text)
	if err != nil {
		return &mcp.CallToolResult{Content: append([]mcp.Content{&mcp.TextContent{Text: "null"}}, extra...), StructuredContent: doc}
	}
	return &mcp.CallToolResult{Content: append([]mcp.Content{&mcp.TextContent{Text: shown}}, extra...), StructuredContent: jsonw.Encoded(enc)}
}

// hiddenNoter is a document that can carry the visible rule's note.
type hiddenNoter interface {
	noteHidden(note string)
}

// encode writes r as json.Marshal would, copying the RS's bytes through one
// checking pass instead of encoding/json's, which would scan the page of
// records twice. It reports false for bytes that are not JSON; the result
// then keeps r, and the server's encoding check says what is wrong.
func (r *readResult) encode() (jsonw.Encoded, bool) {
	b := make([]byte, 0, len(r.Data)+len(r.ContentLadder)+len(r.Legend)+len(r.Omitted)+len(r.ProviderURL)+len(r.RequestID)+128)
	b, err := jsonw.AppendRaw(append(b, `{"data":`...), r.Data)
	if err != nil {
		return nil, false
	}
	if len(r.ContentLadder) > 0 {
		b = append(append(b, `,"content_ladder":`...), r.ContentLadder...)
	}
	if len(r.Legend) > 0 {
		b = append(b, `,"field_capability_legend":`...)
		if b, err = jsonw.AppendRaw(b, r.Legend); err != nil {
			return nil, false
		}
	}
	if r.Omitted != "" {
		b = jsonw.AppendMarshalString(append(b, `,"omitted":`...), r.Omitted)
	}
	b = jsonw.AppendMarshalString(append(b, `,"provider_url":`...), r.ProviderURL)
	if r.RequestID != "" {
		b = jsonw.AppendMarshalString(append(b, `,"request_id":`...), r.RequestID)
	}
	return jsonw.Encoded(append(b, '}')), true
}

// objectBody returns the RS answer's body when it is a JSON object. Any other
// 2xx answer (204, a non-JSON page from a proxy, a bare array) cannot be the
// RS read envelope the tools describe, so it is a transport-level failure
// rather than a result that would break the output schema.
// getObject makes one RS GET and returns its body, which must be a JSON
// object, with the response for its request id.
func getObject(ctx context.Context, env *Env, path string, q rs.Query) ([]byte, *rs.Response, error) {
	resp, err := env.RS.Get(ctx, path, q)
	if err != nil {
		return nil, nil, err
	}
	body, err := objectBody(path, resp)
	if err != nil {
		return nil, nil, err
	}
	return body, resp, nil
}

func objectBody(path string, resp *rs.Response) ([]byte, error) {
	body := bytes.TrimSpace(resp.Body)
	// The RS client has already checked bodies declared as JSON; only other
	// media types need a look here.
	ct := resp.ContentType()
	declaredJSON := ct == "application/json" || strings.HasSuffix(ct, "+json")
	if len(body) > 0 && body[0] == '{' && (declaredJSON || json.Valid(body)) {
		return body, nil
	}
	what := "an empty body"
	switch {
	case len(body) == 0:
	case !json.Valid(body):
		what = fmt.Sprintf("%d bytes of %s that are not JSON", len(body), orUnknown(resp.ContentType()))
	default:
		what = "JSON that is not an object"
	}
	return nil, &rs.TransportError{
		Code: rs.CodeInvalidResponse, Status: resp.Status, RequestID: resp.RequestID,
		Err: fmt.Errorf("GET %s: the resource server answered HTTP %d with %s, not a JSON object", path, resp.Status, what),
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "an unknown type"
	}
	return s
}

// jsonString quotes s, a string from the RS or an argument, as a JSON string
// for text (display_name="Work Gmail"): its rendering under the visible
// rule, quoted as shownJSON quotes.
func jsonString(s string) string { return shownJSON(visible.String(s)) }

// shownJSON quotes s, text already under the visible rule, as a JSON string
// without HTML escaping.
//
// It writes what encoding/json's Encoder with SetEscapeHTML(false) writes:
// json.Marshal's escaping except that <, > and & stay as they are. Escaping
// goes code point by code point and those three are single bytes, so the
// text between them is escaped as Marshal escapes it and they are copied.
func shownJSON(s string) string {
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for {
		i := strings.IndexAny(s, "<>&")
		seg := s
		if i >= 0 {
			seg = s[:i]
		}
		n := len(b)
		b = jsonw.AppendMarshalString(b, seg)
		b = append(b[:n], b[n+1:len(b)-1]...) // without its quotes
		if i < 0 {
			break
		}
		b = append(b, s[i])
		s = s[i+1:]
	}
	return string(append(b, '"'))
}

// inline makes a value (from the RS or an argument) safe inside a space-
// and punctuation-delimited list: its rendering under the visible rule,
// JSON-quoted when it has a separator (; , [ ] { } | or whitespace; every
// mark has a space), never otherwise rewritten, so a display name reads as
// the person wrote it and an id with a space is still the id ("Personal
// Mail").
func inline(s string) string { return inlineShown(visible.String(s)) }

// inlineShown is inline of text already under the visible rule.
func inlineShown(s string) string {
	if !strings.ContainsFunc(s, isInlineSeparator) {
		return s
	}
	return shownJSON(s)
}

func isInlineSeparator(r rune) bool {
	switch r {
	case ';', ',', '[', ']', '{', '}', '|', ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return r < 0x20 || r == 0x7f
}

// providerURL is the provider that answered resp: with several providers
// behind one RS (a fan-out client), URLs in a result must name the one that
// served it, not the one the server was configured with.
func providerURL(env *Env, resp *rs.Response) string {
	base := ""
	if resp != nil {
		base = resp.BaseURL
	}
	return citationBase(env, base)
}
