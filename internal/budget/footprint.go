package budget

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
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
// initialise result); a *mcp.ClientSession satisfies it.
type Session interface {
	probe.Session
	InitializeResult() *mcp.InitializeResult
}

// Connect serves s over an in-memory transport and returns a client session
// to it, with a recorder of the results as they came over the wire: sizes
// are of the bytes the server sent, not of a re-encoding of what the client
// decoded. stop ends both sessions.
func Connect(ctx context.Context, s *mcp.Server) (cs *mcp.ClientSession, wire *probe.Wire, stop func(), err error) {
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("connect server: %w", err)
	}
	wire = probe.NewWire()
	cs, err = mcp.NewClient(&mcp.Implementation{Name: "pdpp-mcp-budget", Version: "v0"}, nil).Connect(ctx, wire.Transport(ct), nil)
	if err != nil {
		_ = ss.Close()
		return nil, nil, nil, fmt.Errorf("connect client: %w", err)
	}
	return cs, wire, func() { _ = cs.Close(); _ = ss.Close() }, nil
}

// SurfaceText is what a client learns before any tool call: the tools, as
// decoded and as sent, and the instructions.
type SurfaceText struct {
	Tools []*mcp.Tool
	// Raw holds each tool's compact JSON as the server sent it, in the order
	// of Tools; nil when the session's traffic was not recorded, and then
	// sizes come from re-encoding Tools.
	Raw          []json.RawMessage
	Instructions string
}

// ReadSurface lists every tool (all pages) and reads the instructions from
// the initialise result. wire, when not nil, records the session's traffic
// (see Connect).
func ReadSurface(ctx context.Context, s Session, wire *probe.Wire) (*SurfaceText, error) {
	st := &SurfaceText{}
	if ir := s.InitializeResult(); ir != nil {
		st.Instructions = ir.Instructions
	}
	params := &mcp.ListToolsParams{}
	for page := 0; ; page++ {
		if page == 1000 {
			return nil, errors.New("tools/list: more than 1000 pages; the server keeps returning nextCursor")
		}
		if wire != nil {
			wire.Reset()
		}
		res, err := s.ListTools(ctx, params)
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		st.Tools = append(st.Tools, res.Tools...)
		if wire != nil {
			for _, r := range wire.Take(probe.MethodListTools) {
				for _, t := range gjson.GetBytes(r, "tools").Array() {
					var b bytes.Buffer
					if err := json.Compact(&b, []byte(t.Raw)); err != nil {
						return nil, fmt.Errorf("tools/list: %w", err)
					}
					st.Raw = append(st.Raw, b.Bytes())
				}
			}
		}
		if res.NextCursor == "" {
			break
		}
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
	if wire != nil && len(st.Raw) != len(st.Tools) {
		return nil, fmt.Errorf("tools/list: recorded %d tools on the wire but decoded %d", len(st.Raw), len(st.Tools))
	}
	return st, nil
}

// Footprint is the measured size of a surface: bytes of compact JSON as the
// server sent it (the tools array exactly as it travels in a tools/list
// result), and UTF-8 bytes of the instructions.
type Footprint struct {
	Bytes        int             `json:"bytes"`
	Tokens       int             `json:"tokens"`
	AnchorBytes  int             `json:"anchor_bytes"`
	Tools        []ToolFootprint `json:"tools"`
	Instructions TextSize        `json:"instructions"`
}

// ToolFootprint is one tool's share of the tools array. The parts are the
// bytes each member's value takes (a description's quotes and escapes
// included); the rest of the tool's bytes are its name, title, annotations
// and keys.
type ToolFootprint struct {
	Name              string `json:"name"`
	Bytes             int    `json:"bytes"`
	Tokens            int    `json:"tokens"`
	DescriptionBytes  int    `json:"description_bytes"`
	InputSchemaBytes  int    `json:"input_schema_bytes"`
	OutputSchemaBytes int    `json:"output_schema_bytes"`
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

// Measure sizes the surface.
func Measure(st *SurfaceText, tok Tokenizer) (*Footprint, error) {
	raw := st.Raw
	if raw == nil {
		for _, t := range st.Tools {
			b, err := json.Marshal(t)
			if err != nil {
				return nil, fmt.Errorf("encode tool %q: %w", t.Name, err)
			}
			raw = append(raw, b)
		}
	}
	size, err := sizeOf(string(jsonw.Array(raw)), tok)
	if err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	instructions, err := sizeOf(st.Instructions, tok)
	if err != nil {
		return nil, fmt.Errorf("instructions: %w", err)
	}
	fp := &Footprint{Bytes: size.Bytes, Tokens: size.Tokens, AnchorBytes: AnchorToolsListBytes, Instructions: instructions}
	for i, t := range st.Tools {
		tf, err := measureTool(t.Name, raw[i], tok)
		if err != nil {
			return nil, err
		}
		fp.Tools = append(fp.Tools, tf)
	}
	// Report in the documented order; tools outside it follow by name.
	slices.SortStableFunc(fp.Tools, func(a, b ToolFootprint) int {
		if c := cmp.Compare(surfaceIndex(a.Name), surfaceIndex(b.Name)); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return fp, nil
}

func measureTool(name string, raw []byte, tok Tokenizer) (ToolFootprint, error) {
	size, err := sizeOf(string(raw), tok)
	if err != nil {
		return ToolFootprint{}, fmt.Errorf("tool %q: %w", name, err)
	}
	return ToolFootprint{
		Name:              name,
		Bytes:             size.Bytes,
		Tokens:            size.Tokens,
		DescriptionBytes:  len(gjson.GetBytes(raw, "description").Raw),
		InputSchemaBytes:  len(gjson.GetBytes(raw, "inputSchema").Raw),
		OutputSchemaBytes: len(gjson.GetBytes(raw, "outputSchema").Raw),
	}, nil
}

func surfaceIndex(name string) int {
	if i := slices.Index(surface, name); i >= 0 {
		return i
	}
	return len(surface)
}
