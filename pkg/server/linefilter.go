package server

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/tidwall/gjson"
)

// maxDepth bounds the nesting of an inbound message. MCP requests are a few
// levels deep; the bound keeps every later (recursive) decoder far from
// stack trouble.
const maxDepth = 64

// lineError is the answer to a line that is not a usable message.
type lineError struct {
	code int64
	msg  string
}

// lineFilter checks one inbound line before anything decodes it.
type lineFilter struct {
	maxDepth int
}

var bom = []byte("\xef\xbb\xbf")

// check returns the parsed line, a zero Result for a blank line, or the
// error to answer. It accepts one JSON object or one array (a batch, judged
// later); everything else is refused. It never recurses over the input.
func (f lineFilter) check(line []byte) (gjson.Result, *lineError) {
	// Some Windows tools start their output with a byte-order mark; it is
	// not part of the message.
	line = bytes.TrimPrefix(line, bom)
	line = bytes.Trim(line, " \t\r\n")
	if len(line) == 0 {
		return gjson.Result{}, nil
	}
	if !utf8.Valid(line) {
		return gjson.Result{}, &lineError{jsonrpc.CodeParseError, "Parse error: the line is not valid UTF-8"}
	}
	if depth(line) > f.maxDepth {
		return gjson.Result{}, &lineError{jsonrpc.CodeInvalidRequest, "Invalid request: the message is nested too deeply"}
	}
	// encoding/json's validator is an iterative state machine, and it
	// refuses trailing bytes after the value.
	if !json.Valid(line) {
		return gjson.Result{}, &lineError{jsonrpc.CodeParseError, "Parse error: the line is not one JSON value"}
	}
	switch line[0] {
	case '{', '[':
		return gjson.ParseBytes(line), nil
	}
	return gjson.Result{}, &lineError{jsonrpc.CodeInvalidRequest, "Invalid request: a JSON-RPC message must be a JSON object"}
}

// depth is the deepest nesting of arrays and objects in b, strings skipped.
func depth(b []byte) int {
	d, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			d++
			deepest = max(deepest, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return deepest
}
