package budget

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Call is the measured result of one scenario step.
type Call struct {
	Seq       int             `json:"seq"`
	Line      int             `json:"line"`
	Method    StepKind        `json:"method"`
	Tool      string          `json:"tool,omitempty"`
	URI       string          `json:"uri,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`

	// Text is the content[] text blocks (resource contents for a read),
	// concatenated as a model would see them.
	Text TextSize `json:"text"`
	// NonText counts content blocks that are not text (images, resources,
	// blobs); their bytes are not in Text.
	NonText int `json:"non_text_blocks,omitempty"`
	// Structured is the compact JSON of structuredContent.
	Structured TextSize `json:"structured"`
	IsError    bool     `json:"is_error,omitempty"`
	// ErrorLine is the first line of an error result's text.
	ErrorLine string `json:"error_line,omitempty"`
	// Error is why the step did not produce a result: a protocol error or an
	// unset variable. Sizes are zero then.
	Error string `json:"error,omitempty"`
}

// Label names the call in reports: the tool, or the method for other steps.
func (c *Call) Label() string {
	switch c.Method {
	case StepTool:
		return c.Tool
	case StepRead:
		return string(StepRead)
	}
	return string(c.Method)
}

// RunScenario runs every step in order against s. A step that fails is
// recorded and the run goes on; only a cancelled ctx stops it.
func RunScenario(ctx context.Context, s Session, sc *Scenario, tok Tokenizer) ([]Call, error) {
	vars := map[string]string{}
	calls := make([]Call, 0, len(sc.Steps))
	for i, st := range sc.Steps {
		if err := ctx.Err(); err != nil {
			return calls, fmt.Errorf("scenario %s line %d: %w", sc.Name, st.Line, err)
		}
		c := Call{Seq: i + 1, Line: st.Line, Method: st.Kind, Tool: st.Tool, URI: st.URI}
		var err error
		switch st.Kind {
		case StepTool:
			err = callTool(ctx, s, st, vars, tok, &c)
		case StepRead:
			err = readResource(ctx, s, st.URI, tok, &c)
		case StepListTools:
			err = listTools(ctx, s, tok, &c)
		}
		if err != nil {
			if ctx.Err() != nil {
				return calls, fmt.Errorf("scenario %s line %d: %w", sc.Name, st.Line, ctx.Err())
			}
			c.Error = err.Error()
		}
		calls = append(calls, c)
	}
	return calls, nil
}

func callTool(ctx context.Context, s Session, st Step, vars map[string]string, tok Tokenizer, c *Call) error {
	args, err := expand(st.Args, vars)
	if err != nil {
		return err
	}
	if c.Arguments, err = json.Marshal(args); err != nil {
		return fmt.Errorf("encode arguments: %w", err)
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: st.Tool, Arguments: args})
	if err != nil {
		return err
	}
	var text strings.Builder
	for _, block := range res.Content {
		if t, ok := block.(*mcp.TextContent); ok {
			text.WriteString(t.Text)
			continue
		}
		c.NonText++
	}
	if c.Text, err = sizeOf(text.String(), tok); err != nil {
		return fmt.Errorf("content text: %w", err)
	}
	if c.IsError = res.IsError; c.IsError {
		c.ErrorLine, _, _ = strings.Cut(text.String(), "\n")
	}
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return fmt.Errorf("encode structuredContent: %w", err)
		}
		if c.Structured, err = sizeOf(string(b), tok); err != nil {
			return fmt.Errorf("structuredContent: %w", err)
		}
	}
	if !res.IsError {
		readHandles(text.String(), vars)
	}
	return nil
}

func readResource(ctx context.Context, s Session, uri string, tok Tokenizer, c *Call) error {
	res, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return err
	}
	var text strings.Builder
	for _, rc := range res.Contents {
		if rc == nil {
			continue
		}
		text.WriteString(rc.Text)
		if len(rc.Blob) > 0 {
			c.NonText++
		}
	}
	c.Text, err = sizeOf(text.String(), tok)
	return err
}

func listTools(ctx context.Context, s Session, tok Tokenizer, c *Call) error {
	var tools []*mcp.Tool
	for t, err := range s.Tools(ctx, nil) {
		if err != nil {
			return err
		}
		tools = append(tools, t)
	}
	b, err := json.Marshal(tools)
	if err != nil {
		return fmt.Errorf("encode tools: %w", err)
	}
	c.Text, err = sizeOf(string(b), tok)
	return err
}

// CheckResults turns each call into checks: that it produced a result (and
// not an error result, unless allowErrors), and its sizes against the limits
// for its tool.
func CheckResults(calls []Call, l *Limits, allowErrors bool) []Check {
	var checks []Check
	for _, c := range calls {
		prefix := fmt.Sprintf("result[%d].%s", c.Seq, c.Label())
		at := fmt.Sprintf("scenario line %d (%s)", c.Line, c.Label())
		switch {
		case c.Error != "":
			checks = append(checks, findings(prefix+".call", "findings", []string{c.Error}, at+" produced no result"))
			continue
		case c.IsError && !allowErrors:
			checks = append(checks, findings(prefix+".call", "findings", []string{c.ErrorLine},
				at+" returned an error result (--allow-errors measures it without failing)"))
		}
		lim, ok := l.Results[c.Label()]
		if !ok {
			continue
		}
		for _, b := range []struct {
			metric, unit string
			measured     int
			limit        int
			what         string
		}{
			{"text_bytes", "bytes", c.Text.Bytes, lim.TextMaxBytes, "content[] text"},
			{"text_chars", "chars", c.Text.Chars, lim.TextMaxChars, "content[] text"},
			{"structured_bytes", "bytes", c.Structured.Bytes, lim.StructuredMaxBytes, "structuredContent"},
		} {
			if b.limit > 0 {
				checks = append(checks, atMost(prefix+"."+b.metric, b.unit, b.measured, b.limit, at+" "+b.what))
			}
		}
	}
	return checks
}
