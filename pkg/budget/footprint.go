package budget

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Surface is the tool set a PDPP MCP server exposes: these six, in the
// documented order, and nothing else (seed 004, exact membership).
var Surface = []string{"schema", "query_records", "aggregate", "search", "fetch", "read_record_field"}

// AnchorToolsListBytes is the TypeScript adapter's tools array, for
// comparison in reports: 23,953 bytes against its own 24,576-byte budget.
const AnchorToolsListBytes = 23953

// Tokenizer counts model tokens in text.
type Tokenizer interface {
	Count(text string) (int, error)
	// Name says how the count is made, for the report.
	Name() string
}

// Session is the part of an MCP client session the measurements use; a
// *mcp.ClientSession satisfies it.
type Session interface {
	InitializeResult() *mcp.InitializeResult
	Tools(ctx context.Context, params *mcp.ListToolsParams) iter.Seq2[*mcp.Tool, error]
	CallTool(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error)
	ReadResource(ctx context.Context, params *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error)
}

// Connect serves s over an in-memory transport and returns a client session
// to it: tools/list as a client receives it, through the SDK on both sides.
// close ends both sessions.
func Connect(ctx context.Context, s *mcp.Server) (cs *mcp.ClientSession, close func(), err error) {
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("connect server: %w", err)
	}
	cs, err = mcp.NewClient(&mcp.Implementation{Name: "pdpp-mcp-budget", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		_ = ss.Close()
		return nil, nil, fmt.Errorf("connect client: %w", err)
	}
	return cs, func() { _ = cs.Close(); _ = ss.Close() }, nil
}

// SurfaceText is what a client learns before any tool call: the tools and the
// instructions, as the client decoded them.
type SurfaceText struct {
	Tools        []*mcp.Tool
	Instructions string
}

// ReadSurface lists every tool (all pages) and reads the instructions from
// the initialise result.
func ReadSurface(ctx context.Context, s Session) (*SurfaceText, error) {
	st := &SurfaceText{}
	if ir := s.InitializeResult(); ir != nil {
		st.Instructions = ir.Instructions
	}
	for t, err := range s.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		st.Tools = append(st.Tools, t)
	}
	return st, nil
}

// Footprint is the measured size of a surface. Bytes are of compact JSON as
// encoding/json writes what the client decoded: the tools array exactly as
// it travels in a tools/list result, whatever key order the server used.
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
	all, err := json.Marshal(st.Tools)
	if err != nil {
		return nil, fmt.Errorf("encode tools: %w", err)
	}
	size, err := sizeOf(string(all), tok)
	if err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	instructions, err := sizeOf(st.Instructions, tok)
	if err != nil {
		return nil, fmt.Errorf("instructions: %w", err)
	}
	fp := &Footprint{Bytes: size.Bytes, Tokens: size.Tokens, AnchorBytes: AnchorToolsListBytes, Instructions: instructions}
	for _, t := range st.Tools {
		tf, err := measureTool(t, tok)
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

func surfaceIndex(name string) int {
	if i := slices.Index(Surface, name); i >= 0 {
		return i
	}
	return len(Surface)
}

func measureTool(t *mcp.Tool, tok Tokenizer) (ToolFootprint, error) {
	tf := ToolFootprint{Name: t.Name}
	b, err := json.Marshal(t)
	if err != nil {
		return tf, fmt.Errorf("encode tool %q: %w", t.Name, err)
	}
	size, err := sizeOf(string(b), tok)
	if err != nil {
		return tf, fmt.Errorf("tool %q: %w", t.Name, err)
	}
	tf.Bytes, tf.Tokens = size.Bytes, size.Tokens
	for _, part := range []struct {
		n *int
		v any
	}{{&tf.DescriptionBytes, t.Description}, {&tf.InputSchemaBytes, t.InputSchema}, {&tf.OutputSchemaBytes, t.OutputSchema}} {
		if *part.n, err = encodedLen(part.v); err != nil {
			return tf, fmt.Errorf("encode tool %q: %w", t.Name, err)
		}
	}
	return tf, nil
}

// encodedLen is the compact JSON size of a member value; nil and "" count
// zero, as they are left out of a tool.
func encodedLen(v any) (int, error) {
	switch x := v.(type) {
	case nil:
		return 0, nil
	case string:
		if x == "" {
			return 0, nil
		}
	}
	b, err := json.Marshal(v)
	return len(b), err
}
