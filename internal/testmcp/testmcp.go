// Package testmcp provides MCP servers for tests: well-behaved ones of a
// chosen size, built with the go-sdk, and hand-written ones that misbehave
// the ways a broken or hostile server can (never answering, exiting at once,
// logging on stdout, sending a tools list of 50 MB, paging without end), over
// stdio and over HTTP.
package testmcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is a well-behaved server with n tools, tool_01 to tool_NN, each
// with a description of about descBytes bytes and a small input schema;
// every tool answers with its name.
func Server(n, descBytes int) *mcp.Server { return ServerWith(n, descBytes, nil) }

// ServerWith is Server with server options (a page size for tools/list).
func ServerWith(n, descBytes int, o *mcp.ServerOptions) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "testmcp", Version: "v0"}, o)
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("tool_%02d", i)
		// Padding words carry the tool's number, so no two tools share a
		// phrase (which the repeated-prose check would report).
		// "<&>" stay as they are on the wire; a re-encoding would escape
		// them, so a test can tell the two apart.
		head := fmt.Sprintf("Test tool %d <&>.", i)
		desc := head
		for k := 0; len(desc) < descBytes; k++ {
			desc += fmt.Sprintf(" w%d.%d", i, k)
		}
		desc = desc[:max(descBytes, len(head))]
		s.AddTool(&mcp.Tool{
			Name:        name,
			Description: desc,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`),
		}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "called " + name}}}, nil
		})
	}
	return s
}

// The misbehaviours, by name.
const (
	// Silent reads requests and never answers.
	Silent = "silent"
	// Exit writes a line on stderr and exits with status 3 at once.
	Exit = "exit"
	// Garbage writes a log line on stdout (over HTTP: a JSON body that is
	// not JSON).
	Garbage = "garbage"
	// Huge answers tools/list with a tools array of HugeBytes.
	Huge = "huge"
	// Pages answers every tools/list with one tool and a new nextCursor.
	Pages = "pages"
	// SameCursor answers every tools/list with one tool and the same
	// nextCursor.
	SameCursor = "same-cursor"
)

// HugeBytes is the size of the Huge tools array.
const HugeBytes = 50 << 20

// Kinds lists the misbehaviours.
var Kinds = []string{Silent, Exit, Garbage, Huge, Pages, SameCursor}

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Cursor string `json:"cursor"`
	} `json:"params"`
}

// answer writes the reply to req, if any, as one line without the newline.
// Only server/discover is refused, so that a client falls back to
// initialize.
func answer(w io.Writer, kind string, req request) error {
	if len(req.ID) == 0 {
		return nil // a notification
	}
	head := `{"jsonrpc":"2.0","id":` + string(req.ID) + `,`
	var body string
	switch req.Method {
	case "initialize":
		body = `"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"testmcp-` + kind + `","version":"0"}}}`
	case "tools/list":
		if kind == Huge {
			return huge(w, head)
		}
		next := "c1"
		if kind == Pages {
			n := 0
			fmt.Sscanf(req.Params.Cursor, "c%d", &n)
			next = fmt.Sprintf("c%d", n+1)
		}
		body = `"result":{"tools":[{"name":"t` + next + `","inputSchema":{"type":"object"}}],"nextCursor":"` + next + `"}}`
	default:
		body = `"error":{"code":-32601,"message":"method not found"}}`
	}
	_, err := io.WriteString(w, head+body)
	return err
}

// huge streams a tools array of HugeBytes without holding it.
func huge(w io.Writer, head string) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(head + `"result":{"tools":[`)
	tool := `{"name":"` + strings.Repeat("t", 1000) + `","inputSchema":{"type":"object"}}`
	for n := 0; n < HugeBytes/len(tool); n++ {
		if n > 0 {
			bw.WriteByte(',')
		}
		if _, err := bw.WriteString(tool); err != nil {
			return err // the client stopped reading
		}
	}
	bw.WriteString(`]}}`)
	return bw.Flush()
}

// Stdio serves the misbehaviour kind over in and out, and returns the
// process's exit status.
func Stdio(kind string, in io.Reader, out, stderr io.Writer) int {
	switch kind {
	case Exit:
		fmt.Fprintln(stderr, "testmcp: cannot start: no configuration")
		return 3
	case Garbage:
		fmt.Fprintln(out, "Starting the server on port 8080...")
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var req request
		if json.Unmarshal(sc.Bytes(), &req) != nil || kind == Silent {
			continue
		}
		if err := answer(out, kind, req); err != nil {
			return 1
		}
		if len(req.ID) > 0 {
			if _, err := io.WriteString(out, "\n"); err != nil {
				return 1
			}
		}
	}
	if kind == Silent {
		select {} // stdin is closed, and it still does not go
	}
	return 0
}

// Handler serves the misbehaviour kind as a Streamable HTTP endpoint with
// JSON responses.
func Handler(kind string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req request
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if len(req.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		switch kind {
		case Silent:
			<-r.Context().Done()
			return
		case Exit:
			// An endpoint cannot exit; the nearest is a connection cut
			// before any answer.
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					c.Close()
					return
				}
			}
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if kind == Garbage && req.Method == "tools/list" {
			io.WriteString(w, "Starting the server on port 8080...")
			return
		}
		answer(w, kind, req)
	})
}
