package budget

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pdpp-mcp/pdpp-mcp/internal/probe"
)

// Call is the measured result of one scenario call.
type Call struct {
	Seq int `json:"seq"`
	// Source is where the call is written: "file:line".
	Source    string          `json:"source"`
	Method    string          `json:"method"` // tools/call, resources/read or tools/list
	Tool      string          `json:"tool,omitempty"`
	URI       string          `json:"uri,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// ExpectError marks a call written with a leading "!".
	ExpectError bool `json:"expect_error,omitempty"`

	// Text is the model-visible text: content[] text blocks (resource
	// contents for a read, the tools array for tools/list) concatenated.
	Text TextSize `json:"text"`
	// NonText counts items that are not text (images, blobs, links); their
	// bytes are not in Text.
	NonText int `json:"non_text_blocks,omitempty"`
	// Structured is structuredContent's compact JSON.
	Structured TextSize `json:"structured"`
	IsError    bool     `json:"is_error,omitempty"`
	// ErrorLine is the first line of an error result's text.
	ErrorLine string `json:"error_line,omitempty"`
	// Error is why the call produced no result: a protocol error, a variable
	// no earlier text provided, or an earlier call that stopped the run.
	// Sizes are zero then.
	Error string `json:"error,omitempty"`
}

// Label names the call in reports: the tool, or the method.
func (c *Call) Label() string {
	if c.Method == "tools/call" {
		return c.Tool
	}
	return c.Method
}

// unexpected reports an error result the script did not mark with "!", or a
// "!" call that succeeded.
func (c *Call) unexpected() bool {
	return c.Error == "" && c.Method == "tools/call" && c.IsError != c.ExpectError
}

// RunScenario runs the calls in order with runner, probe's, whose Wire,
// when set, records the session's traffic so structuredContent is measured
// as sent (see Connect). A call without a result is recorded and the run
// goes on, except when a variable is missing: later calls depend on it, so
// they are recorded as not run. Only a cancelled ctx or a failure to size a
// result returns an error.
func RunScenario(ctx context.Context, runner *probe.Runner, sc *Scenario, tok Tokenizer) ([]Call, error) {
	calls := make([]Call, 0, len(sc.Calls))
	err := runner.Run(ctx, sc.Calls, func(r *probe.Result) error {
		c, err := fromProbe(r, tok)
		if err != nil {
			return fmt.Errorf("scenario %s: %w", r.Call.Source, err)
		}
		calls = append(calls, c)
		return nil
	})
	var ve *probe.VarError
	switch {
	case errors.As(err, &ve):
		for _, pc := range sc.Calls[len(calls):] {
			c := base(len(calls)+1, pc)
			c.Error = fmt.Sprintf("not run: the scenario stopped at call %d (%s), whose variable had no value", ve.N, ve.Call.Source)
			calls = append(calls, c)
		}
	case err != nil:
		return calls, err
	}
	return calls, nil
}

func base(seq int, pc probe.Call) Call {
	c := Call{Seq: seq, Source: pc.Source, Method: pc.Name(), ExpectError: pc.ExpectError}
	if pc.Kind == probe.KindTool {
		c.Method, c.Tool = "tools/call", pc.Tool
	}
	return c
}

func fromProbe(r *probe.Result, tok Tokenizer) (Call, error) {
	c := base(r.N, r.Call)
	c.Arguments, c.URI = r.Args, r.URI
	if r.Err != nil {
		c.Error = r.Err.Error()
		return c, nil
	}
	var text strings.Builder
	for _, b := range r.Blocks {
		if b.Text == "" && b.Note != "" {
			c.NonText++
		}
		text.WriteString(b.Text)
	}
	var err error
	if c.Text, err = sizeOf(text.String(), tok); err != nil {
		return c, fmt.Errorf("text: %w", err)
	}
	if len(r.Structured) > 0 {
		if c.Structured, err = sizeOf(string(r.Structured), tok); err != nil {
			return c, fmt.Errorf("structuredContent: %w", err)
		}
	}
	if c.IsError = r.IsError; c.IsError {
		c.ErrorLine, _, _ = strings.Cut(text.String(), "\n")
	}
	return c, nil
}

// CheckResults turns each call into checks: that it produced the result its
// script line expects (a success, or an error result for a "!" call; any
// outcome with allowErrors), and its sizes against the limits for its tool,
// or those for any tool (AnyTool).
func CheckResults(calls []Call, l *Limits, allowErrors bool) []Check {
	var checks []Check
	for _, c := range calls {
		prefix := fmt.Sprintf("result[%d].%s", c.Seq, c.Label())
		at := fmt.Sprintf("%s (%s)", c.Source, c.Label())
		switch {
		case c.Error != "":
			checks = append(checks, findings(prefix+".call", "findings", []string{c.Error}, at+" produced no result"))
			continue
		case c.unexpected() && !allowErrors && c.IsError:
			checks = append(checks, findings(prefix+".call", "findings", []string{c.ErrorLine},
				at+" returned an error result (mark the line with ! when that is the point, or pass --allow-errors)"))
		case c.unexpected() && !allowErrors:
			checks = append(checks, findings(prefix+".call", "findings", []string{"isError is false"},
				at+" is marked ! but succeeded"))
		}
		name, subject := c.Label(), fmt.Sprintf("call %d", c.Seq)
		lim, ok := l.Results[name]
		if !ok {
			lim, ok = l.Results[AnyTool]
			name, subject = AnyTool, fmt.Sprintf("call %d (%s)", c.Seq, c.Label())
		}
		if !ok {
			continue
		}
		for _, b := range []struct {
			key, unit string
			measured  int
			limit     int
			what      string
		}{
			{"text_max_bytes", "bytes", c.Text.Bytes, lim.TextMaxBytes, "content[] text"},
			{"text_max_chars", "chars", c.Text.Chars, lim.TextMaxChars, "content[] text"},
			{"structured_max_bytes", "bytes", c.Structured.Bytes, lim.StructuredMaxBytes, "structuredContent"},
		} {
			if b.limit > 0 {
				checks = append(checks, atMost("results."+name+"."+b.key, subject, b.unit, b.measured, b.limit, at+" "+b.what))
			}
		}
	}
	return checks
}
