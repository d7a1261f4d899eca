package budget

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
	"github.com/pdpp-mcp/pdpp-mcp/internal/mcptarget"
	"github.com/pdpp-mcp/pdpp-mcp/internal/probe"
)

// surface is the tool set a PDPP MCP server exposes: these six, in the
// order the README documents, and nothing else. Membership is exact because
// every extra tool costs every agent context on every session, and the ones
// proposed so far (stream listing, blob fetching, event subscriptions,
// developer tools) duplicate a tool or do not belong on a read surface.
var surface = []string{"schema", "query_records", "aggregate", "search", "fetch", "read_record_field"}

// Surface returns the six tool names in the documented order.
func Surface() []string { return slices.Clone(surface) }

// AnchorToolsListBytes is the TypeScript adapter's tools array, for
// comparison in reports: 23,953 bytes against its own 24,576-byte budget.
const AnchorToolsListBytes = 23953

// Tokenizer counts model tokens in text.
type Tokenizer interface {
	Count(text string) (int, error)
	// Name says how the count is made, for the report.
	Name() string
}

// Session is the part of an MCP client session the measurements use (the
// scenario runs through package probe, so it is probe's Session plus the
// initialise result and the other lists a client reads at the start); a
// *mcp.ClientSession satisfies it.
type Session interface {
	probe.Session
	InitializeResult() *mcp.InitializeResult
	ListResourceTemplates(ctx context.Context, p *mcp.ListResourceTemplatesParams) (*mcp.ListResourceTemplatesResult, error)
	ListPrompts(ctx context.Context, p *mcp.ListPromptsParams) (*mcp.ListPromptsResult, error)
}

// Connect serves s over an in-memory transport and returns a client session
// to it, with a recorder of the results as they came over the wire: sizes
// are of the bytes the server sent, not of a re-encoding of what the client
// decoded. stop ends both sessions.
func Connect(ctx context.Context, s *mcp.Server) (cs *mcp.ClientSession, wire *probe.Wire, stop func(), err error) {
	c, err := mcptarget.InProcess(ctx, s, mcptarget.Options{Client: &mcp.Implementation{Name: "pdpp-mcp-budget", Version: "v0"}})
	if err != nil {
		return nil, nil, nil, err
	}
	return c.Session, c.Wire, func() { _ = c.Close() }, nil
}

// SurfaceText is what a client learns before any tool call: the tools, as
// decoded and as sent, the instructions, and the resource templates and
// prompts when the server offers them.
type SurfaceText struct {
	Tools []*mcp.Tool
	// Raw holds each tool's JSON as the server sent it, in the order of
	// Tools, and RawTools the tools array: as sent when it came in one
	// page, else the pages' tools joined into one array. Both are nil when
	// the session's traffic was not recorded, and then sizes come from
	// re-encoding Tools.
	Raw          []json.RawMessage
	RawTools     json.RawMessage
	Instructions string
	// ResourceTemplates and Prompts are the arrays as sent (joined like
	// RawTools); nil when the server does not offer them.
	ResourceTemplates *RawList
	Prompts           *RawList
}

// RawList is a list result's array as the server sent it.
type RawList struct {
	Count int
	Raw   json.RawMessage
}

// MaxPages bounds a paginated list: a server that keeps returning a
// nextCursor is refused after this many pages.
const MaxPages = 1000

// pager reads a paginated list through the wire recorder, which has the
// items as sent. page asks for one page and returns its nextCursor and how
// many items it decoded.
type pager struct {
	what, key string // the method, and the result's array key
	timeout   time.Duration
}

func (p pager) read(ctx context.Context, wire *probe.Wire, page func(ctx context.Context, cursor string) (next string, n int, err error)) (items []json.RawMessage, array json.RawMessage, count int, err error) {
	seen := map[string]bool{}
	cursor := ""
	for pages := 0; ; pages++ {
		if pages == MaxPages {
			return nil, nil, 0, fmt.Errorf("%s: more than %d pages; the server keeps returning nextCursor", p.what, MaxPages)
		}
		if wire != nil {
			wire.Reset()
		}
		pctx, cancel := ctx, context.CancelFunc(func() {})
		if p.timeout > 0 {
			pctx, cancel = context.WithTimeout(ctx, p.timeout)
		}
		next, n, err := page(pctx, cursor)
		cancel()
		if err != nil {
			return nil, nil, 0, fmt.Errorf("%s: %w", p.what, err)
		}
		count += n
		if wire != nil {
			for _, r := range wire.Take(p.what) {
				a := gjson.GetBytes(r, p.key)
				if pages == 0 && next == "" {
					array = json.RawMessage(a.Raw)
				}
				for _, t := range a.Array() {
					items = append(items, json.RawMessage(t.Raw))
				}
			}
		}
		if next == "" {
			break
		}
		if seen[next] {
			return nil, nil, 0, fmt.Errorf("%s: the server returned the cursor %q a second time; its pages would never end", p.what, next)
		}
		seen[next] = true
		cursor = next
	}
	if wire == nil {
		return nil, nil, count, nil
	}
	if len(items) != count {
		return nil, nil, 0, fmt.Errorf("%s: recorded %d items on the wire but decoded %d", p.what, len(items), count)
	}
	if array == nil {
		array = jsonw.Array(items)
	}
	return items, array, count, nil
}

// ReadSurface lists every tool (all pages), and the resource templates and
// prompts when the server's capabilities offer them, and reads the
// instructions from the initialise result. wire, when not nil, records the
// session's traffic (see Connect). timeout, when positive, bounds each
// page.
func ReadSurface(ctx context.Context, s Session, wire *probe.Wire, timeout time.Duration) (*SurfaceText, error) {
	st := &SurfaceText{}
	var caps *mcp.ServerCapabilities
	if ir := s.InitializeResult(); ir != nil {
		st.Instructions, caps = ir.Instructions, ir.Capabilities
	}
	var err error
	st.Raw, st.RawTools, _, err = pager{probe.MethodListTools, "tools", timeout}.read(ctx, wire, func(ctx context.Context, cursor string) (string, int, error) {
		res, err := s.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return "", 0, err
		}
		st.Tools = append(st.Tools, res.Tools...)
		return res.NextCursor, len(res.Tools), nil
	})
	if err != nil {
		return nil, err
	}
	if caps != nil && caps.Resources != nil {
		items, array, n, err := pager{"resources/templates/list", "resourceTemplates", timeout}.read(ctx, wire, func(ctx context.Context, cursor string) (string, int, error) {
			res, err := s.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
			if err != nil {
				return "", 0, err
			}
			return res.NextCursor, len(res.ResourceTemplates), nil
		})
		if err != nil && !notOffered(err) {
			return nil, err
		}
		if err == nil {
			st.ResourceTemplates = &RawList{Count: n, Raw: orEmpty(array, items)}
		}
	}
	if caps != nil && caps.Prompts != nil {
		items, array, n, err := pager{"prompts/list", "prompts", timeout}.read(ctx, wire, func(ctx context.Context, cursor string) (string, int, error) {
			res, err := s.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
			if err != nil {
				return "", 0, err
			}
			return res.NextCursor, len(res.Prompts), nil
		})
		if err != nil && !notOffered(err) {
			return nil, err
		}
		if err == nil {
			st.Prompts = &RawList{Count: n, Raw: orEmpty(array, items)}
		}
	}
	return st, nil
}

// notOffered is a list the server declared a capability for but does not
// answer: nothing a client could put in a model's context.
func notOffered(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we) && we.Code == jsonrpc.CodeMethodNotFound
}

func orEmpty(array json.RawMessage, items []json.RawMessage) json.RawMessage {
	if array == nil && items == nil {
		return nil // not recorded
	}
	return array
}

// Footprint is the measured size of a surface: bytes as the server sent
// them (the tools array exactly as it travels in a tools/list result), and
// UTF-8 bytes of the instructions.
type Footprint struct {
	Bytes  int `json:"bytes"`
	Tokens int `json:"tokens"`
	// AnchorBytes is the TypeScript adapter's tools array, for comparison
	// (pdpp-mcp only).
	AnchorBytes  int             `json:"anchor_bytes,omitempty"`
	Tools        []ToolFootprint `json:"tools"`
	Instructions TextSize        `json:"instructions"`
	// ResourceTemplates and Prompts are measured when the server offers
	// them.
	ResourceTemplates *ListSize `json:"resource_templates,omitempty"`
	Prompts           *ListSize `json:"prompts,omitempty"`
}

// ListSize is the size of a list result's array as sent.
type ListSize struct {
	Count  int `json:"count"`
	Bytes  int `json:"bytes"`
	Tokens int `json:"tokens"`
}

// ToolFootprint is one tool's share of the tools array. The parts are the
// bytes each member's value takes (a description's quotes and escapes
// included); the rest of the tool's bytes are its name, title, annotations,
// icons, _meta and keys.
type ToolFootprint struct {
	Name              string `json:"name"`
	Bytes             int    `json:"bytes"`
	Tokens            int    `json:"tokens"`
	DescriptionBytes  int    `json:"description_bytes"`
	InputSchemaBytes  int    `json:"input_schema_bytes"`
	OutputSchemaBytes int    `json:"output_schema_bytes"`
	RestBytes         int    `json:"rest_bytes"`
}

// TextSize is the size of a text in bytes (UTF-8), characters (code points)
// and tokens.
type TextSize struct {
	Bytes  int `json:"bytes"`
	Chars  int `json:"chars"`
	Tokens int `json:"tokens"`
}

func sizeOf(s string, tok Tokenizer) (TextSize, error) {
	n, err := tok.Count(s)
	if err != nil {
		return TextSize{}, fmt.Errorf("count tokens: %w", err)
	}
	return TextSize{Bytes: len(s), Chars: utf8.RuneCountInString(s), Tokens: n}, nil
}

// Measure sizes the surface, tools in the order the server listed them.
func Measure(st *SurfaceText, tok Tokenizer) (*Footprint, error) {
	raw, array := st.Raw, st.RawTools
	if raw == nil {
		for _, t := range st.Tools {
			b, err := json.Marshal(t)
			if err != nil {
				return nil, fmt.Errorf("encode tool %q: %w", t.Name, err)
			}
			raw = append(raw, b)
		}
		array = jsonw.Array(raw)
	}
	size, err := sizeOf(string(array), tok)
	if err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	instructions, err := sizeOf(st.Instructions, tok)
	if err != nil {
		return nil, fmt.Errorf("instructions: %w", err)
	}
	fp := &Footprint{Bytes: size.Bytes, Tokens: size.Tokens, Instructions: instructions}
	for i, t := range st.Tools {
		tf, err := measureTool(t.Name, raw[i], tok)
		if err != nil {
			return nil, err
		}
		fp.Tools = append(fp.Tools, tf)
	}
	for _, l := range []struct {
		list *RawList
		size **ListSize
		what string
	}{{st.ResourceTemplates, &fp.ResourceTemplates, "resource templates"}, {st.Prompts, &fp.Prompts, "prompts"}} {
		if l.list == nil {
			continue
		}
		b := l.list.Raw
		if b == nil {
			b = []byte("[]") // not recorded: counted, not sized
		}
		size, err := sizeOf(string(b), tok)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.what, err)
		}
		*l.size = &ListSize{Count: l.list.Count, Bytes: size.Bytes, Tokens: size.Tokens}
	}
	return fp, nil
}

// PDPPOrder puts the six tools in the order the README documents, for a
// report on a PDPP surface; other tools follow by name. It also sets the
// TypeScript adapter's size for comparison.
func (fp *Footprint) PDPPOrder() {
	fp.AnchorBytes = AnchorToolsListBytes
	slices.SortStableFunc(fp.Tools, func(a, b ToolFootprint) int {
		if c := cmp.Compare(surfaceIndex(a.Name), surfaceIndex(b.Name)); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}

func measureTool(name string, raw []byte, tok Tokenizer) (ToolFootprint, error) {
	size, err := sizeOf(string(raw), tok)
	if err != nil {
		return ToolFootprint{}, fmt.Errorf("tool %q: %w", name, err)
	}
	tf := ToolFootprint{
		Name:              name,
		Bytes:             size.Bytes,
		Tokens:            size.Tokens,
		DescriptionBytes:  len(gjson.GetBytes(raw, "description").Raw),
		InputSchemaBytes:  len(gjson.GetBytes(raw, "inputSchema").Raw),
		OutputSchemaBytes: len(gjson.GetBytes(raw, "outputSchema").Raw),
	}
	tf.RestBytes = tf.Bytes - tf.DescriptionBytes - tf.InputSchemaBytes - tf.OutputSchemaBytes
	return tf, nil
}

func surfaceIndex(name string) int {
	if i := slices.Index(surface, name); i >= 0 {
		return i
	}
	return len(surface)
}
