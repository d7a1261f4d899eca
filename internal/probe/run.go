package probe

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
	"github.com/pdpp-mcp/pdpp-mcp/internal/o200k"
)

// Session is what the probe needs of an MCP client session;
// *mcp.ClientSession has it.
type Session interface {
	CallTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error)
	ListTools(ctx context.Context, p *mcp.ListToolsParams) (*mcp.ListToolsResult, error)
	ReadResource(ctx context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error)
}

// Size measures model-visible text.
type Size struct {
	Bytes int `json:"bytes"` // UTF-8 bytes
	Chars int `json:"chars"` // Unicode code points
	// Tokens counts o200k_base tokens (the encoding of OpenAI's GPT-4o and
	// GPT-5 families, as pdpp-mcp-budget counts them). Other model families
	// tokenise differently, so it is an approximation for them.
	Tokens int `json:"tokens_approx"`
}

// TokenRule says how Size.Tokens is computed, for people reading output.
const TokenRule = "o200k_base"

// tokenizer loads the encoding once per process.
var tokenizer = sync.OnceValues(o200k.New)

// measure returns the size of s.
func measure(s string) (Size, error) {
	tok, err := tokenizer()
	if err != nil {
		return Size{}, err
	}
	n, err := tok.Count(s)
	if err != nil {
		return Size{}, err
	}
	return Size{Bytes: len(s), Chars: utf8.RuneCountInString(s), Tokens: n}, nil
}

// Block is one item of what the model sees: a content[] item of a tool
// result, a contents[] item of a resource read, or the tool list.
type Block struct {
	// Label names the item: "content[0] text", "contents[0] text
	// pdpp://…", "tools".
	Label string
	// Text is the item's text verbatim; empty for binary items.
	Text string
	// Note describes what is not shown as text (an image's type and size).
	Note string
}

// Result is the outcome of one call.
type Result struct {
	// N numbers the call from 1 in run order.
	N    int
	Call Call
	// Args are the arguments sent (tools/call), variables expanded.
	Args json.RawMessage
	// URI is the URI read (resources/read), variables expanded.
	URI string
	// Uses are the variables the call used.
	Uses []Use
	// Blocks are what the model sees, in order.
	Blocks []Block
	// Size sums the text of Blocks (for tools/list: the tools array as
	// compact JSON, as a client receives it).
	Size Size
	// Structured is structuredContent as received, if any.
	Structured json.RawMessage
	// Raw is the JSON-RPC result as received.
	Raw json.RawMessage
	// IsError is the tool result's isError.
	IsError bool
	// Latency is the client-side round trip of the request(s), SDK encoding
	// and decoding included.
	Latency time.Duration
	// Err is a failure that left no result: a protocol or transport error,
	// or a variable the call could not get.
	Err error
}

// Text joins the text of the blocks: what variables are read from.
func (r *Result) Text() string {
	var parts []string
	for _, b := range r.Blocks {
		if b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Unexpected reports an isError result the script did not expect, or an
// expected one that did not come.
func (r *Result) Unexpected() bool {
	return r.Err == nil && r.Call.Kind == KindTool && r.IsError != r.Call.ExpectError
}

// Runner runs calls against a session.
type Runner struct {
	Session Session
	// Wire, when set, supplies the result bytes as received; without it
	// results are re-encoded from the decoded values.
	Wire *Wire
	// Timeout bounds each call; 0 means none beyond ctx.
	Timeout time.Duration
}

// Run makes the calls in order and hands each result to each. A call whose
// variable is missing ends the run with a *VarError (its result, with Err
// set, is handed over first); an error from each ends it too. Protocol
// errors do not end the run: they are in Result.Err.
func (r *Runner) Run(ctx context.Context, calls []Call, each func(*Result) error) error {
	vars := NewVars()
	for i, c := range calls {
		res := r.call(ctx, i+1, c, vars)
		if res.Err == nil {
			vars.Observe(res.N, c.Name(), res.Text())
		}
		if err := each(res); err != nil {
			return err
		}
		var ve *VarError
		if errors.As(res.Err, &ve) {
			return ve
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

func (r *Runner) call(ctx context.Context, n int, c Call, vars *Vars) *Result {
	res := &Result{N: n, Call: c}
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.Timeout)
		defer cancel()
	}
	if r.Wire != nil {
		r.Wire.Reset() // traffic from before this call is not its result
	}
	switch c.Kind {
	case KindTool:
		args, uses, err := vars.Expand(n, c)
		res.Args, res.Uses = args, uses
		if err != nil {
			res.Err = err
			return res
		}
		start := time.Now()
		out, err := r.Session.CallTool(ctx, &mcp.CallToolParams{Name: c.Tool, Arguments: args})
		res.Latency = time.Since(start)
		if err != nil {
			res.Err = fmt.Errorf("tools/call %s: %w", c.Tool, err)
			return res
		}
		res.IsError = out.IsError
		res.Raw = r.raw(methodCallTool, out)
		res.Blocks = contentBlocks(out.Content)
		if sc := gjson.GetBytes(res.Raw, "structuredContent"); sc.Exists() {
			res.Structured = json.RawMessage(sc.Raw)
		}
	case KindReadResource:
		uri, uses, err := vars.ExpandURI(n, c)
		res.URI, res.Uses = uri, uses
		if err != nil {
			res.Err = err
			return res
		}
		start := time.Now()
		out, err := r.Session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		res.Latency = time.Since(start)
		if err != nil {
			res.Err = fmt.Errorf("resources/read %s: %w", uri, err)
			return res
		}
		res.Raw = r.raw(MethodReadResource, out)
		res.Blocks = resourceBlocks(out.Contents)
	case KindListTools:
		start := time.Now()
		tools, raw, err := r.listTools(ctx)
		res.Latency = time.Since(start)
		if err != nil {
			res.Err = fmt.Errorf("tools/list: %w", err)
			return res
		}
		res.Raw = raw
		res.Blocks = []Block{{Label: fmt.Sprintf("tools: %d", gjson.ParseBytes(tools).Get("#").Int()), Text: prettyJSON(tools)}}
		res.Size, res.Err = measure(string(tools))
		return res
	}
	var text strings.Builder
	for _, b := range res.Blocks {
		text.WriteString(b.Text)
	}
	res.Size, res.Err = measure(text.String())
	return res
}

// raw returns the result bytes the wire recorded for the call just made, or
// v re-encoded when there is no recording.
func (r *Runner) raw(method string, v any) json.RawMessage {
	if r.Wire != nil {
		if got := r.Wire.Take(method); len(got) > 0 {
			return got[len(got)-1]
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// listTools reads every page of tools/list. tools is the tools array as
// compact JSON, raw the result (of the last page when there are several).
func (r *Runner) listTools(ctx context.Context) (tools, raw json.RawMessage, err error) {
	var items []json.RawMessage
	var decoded []*mcp.Tool
	params := &mcp.ListToolsParams{}
	for page := 0; ; page++ {
		if page == 1000 {
			return nil, nil, errors.New("more than 1000 pages: the server keeps returning nextCursor")
		}
		out, err := r.Session.ListTools(ctx, params)
		if err != nil {
			return nil, nil, err
		}
		decoded = append(decoded, out.Tools...)
		if r.Wire != nil {
			for _, p := range r.Wire.Take(MethodListTools) {
				raw = p
				for _, t := range gjson.GetBytes(p, "tools").Array() {
					items = append(items, json.RawMessage(t.Raw))
				}
			}
		}
		if out.NextCursor == "" {
			break
		}
		params = &mcp.ListToolsParams{Cursor: out.NextCursor}
	}
	if len(items) != len(decoded) { // no recording: re-encode
		b, err := json.Marshal(decoded)
		if err != nil {
			return nil, nil, err
		}
		return b, b, nil
	}
	c, err := compactJSON(string(jsonw.Array(items)))
	return c, raw, err
}

// prettyJSON indents JSON keeping key order (gjson's @pretty).
func prettyJSON(b []byte) string {
	return strings.TrimSuffix(gjson.GetBytes(b, `@pretty:{"sortKeys":false}`).Raw, "\n")
}

func contentBlocks(cs []mcp.Content) []Block {
	out := make([]Block, 0, len(cs))
	for i, c := range cs {
		label := fmt.Sprintf("content[%d]", i)
		switch c := c.(type) {
		case *mcp.TextContent:
			out = append(out, Block{Label: label + " text", Text: c.Text})
		case *mcp.ImageContent:
			out = append(out, Block{Label: label + " image", Note: binaryNote(c.MIMEType, c.Data)})
		case *mcp.AudioContent:
			out = append(out, Block{Label: label + " audio", Note: binaryNote(c.MIMEType, c.Data)})
		case *mcp.ResourceLink:
			out = append(out, Block{Label: label + " resource_link", Note: fmt.Sprintf("uri=%s name=%q", c.URI, c.Name)})
		case *mcp.EmbeddedResource:
			if c.Resource == nil {
				out = append(out, Block{Label: label + " resource", Note: "no resource"})
				continue
			}
			b := resourceBlock(label+" resource", c.Resource)
			out = append(out, b)
		default:
			out = append(out, Block{Label: fmt.Sprintf("%s %T", label, c), Note: "content type the probe does not show"})
		}
	}
	return out
}

func resourceBlocks(rs []*mcp.ResourceContents) []Block {
	out := make([]Block, 0, len(rs))
	for i, rc := range rs {
		out = append(out, resourceBlock(fmt.Sprintf("contents[%d]", i), rc))
	}
	return out
}

func resourceBlock(label string, rc *mcp.ResourceContents) Block {
	label += " " + rc.URI
	if rc.MIMEType != "" {
		label += " (" + rc.MIMEType + ")"
	}
	if rc.Blob != nil {
		return Block{Label: label, Note: fmt.Sprintf("blob, %d bytes (not shown)", len(rc.Blob))}
	}
	return Block{Label: label, Text: rc.Text}
}

func binaryNote(mimeType string, data []byte) string {
	return fmt.Sprintf("%s, %d bytes (base64 %d characters, not shown)", mimeType, len(data), base64.StdEncoding.EncodedLen(len(data)))
}
