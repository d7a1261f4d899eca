package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/budget"
	"github.com/pdpp-mcp/pdpp-mcp/internal/testmcp"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/server"
)

// wireTools is what a test reads from the raw JSON-RPC messages a server
// sent, without the budget's code: the tools array of each tools/list page
// in order, as bytes.
type wireTools struct {
	pages [][]byte
}

// add reads one JSON-RPC message; tools/list results are kept.
func (w *wireTools) add(t *testing.T, msg []byte) {
	t.Helper()
	var m struct {
		Result *struct {
			Tools json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		t.Fatalf("a message on the wire is not JSON: %v\n%s", err, msg)
	}
	if m.Result != nil && m.Result.Tools != nil {
		w.pages = append(w.pages, m.Result.Tools)
	}
}

// array is the tools array as a client holding every page has it: the one
// page as sent, or the pages' tools, as sent, in one array.
func (w *wireTools) array(t *testing.T) (array []byte, tools []json.RawMessage) {
	t.Helper()
	for _, p := range w.pages {
		var items []json.RawMessage
		if err := json.Unmarshal(p, &items); err != nil {
			t.Fatal(err)
		}
		tools = append(tools, items...)
	}
	if len(w.pages) == 1 {
		return w.pages[0], tools
	}
	return append(append([]byte("["), bytes.Join(slices.Collect(slices.Values(asBytes(tools))), []byte(","))...), ']'), tools
}

func asBytes(ms []json.RawMessage) [][]byte {
	out := make([][]byte, len(ms))
	for i, m := range ms {
		out[i] = m
	}
	return out
}

// check compares the report with what the wire carried: every tool named,
// the tools array and each tool exactly the bytes sent.
func (w *wireTools) check(t *testing.T, r *budget.Report) {
	t.Helper()
	array, tools := w.array(t)
	if len(w.pages) == 0 {
		t.Fatal("no tools/list result on the wire")
	}
	if r.ToolsList.Bytes != len(array) {
		t.Errorf("tools array: report %d bytes, wire %d", r.ToolsList.Bytes, len(array))
	}
	if len(r.ToolsList.Tools) != len(tools) {
		t.Fatalf("report has %d tools, wire %d", len(r.ToolsList.Tools), len(tools))
	}
	for i, raw := range tools {
		var name struct{ Name string }
		if err := json.Unmarshal(raw, &name); err != nil {
			t.Fatal(err)
		}
		got := r.ToolsList.Tools[i]
		if got.Name != name.Name || got.Bytes != len(raw) {
			t.Errorf("tool %d: report %s %d bytes, wire %s %d bytes", i, got.Name, got.Bytes, name.Name, len(raw))
		}
	}
}

// measureJSON runs the command with --json and decodes the report.
func measureJSON(t *testing.T, args ...string) *budget.Report {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args = append([]string{cmdName, "--json", "--no-results"}, args...)
	if code := runWith(t.Context(), args, &stdout, &stderr, server.New); code != 0 && code != exitOverBudget {
		t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
	}
	var r budget.Report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	return &r
}

// The tools array and every tool are measured as the server put them on the
// wire, over stdio (one page and several) and Streamable HTTP; the test reads
// the wire itself: a copy of the server's stdout, or the HTTP bodies.
func TestToolsArrayIsWireBytes(t *testing.T) {
	for _, page := range []string{"", " 2"} {
		t.Run("stdio"+strings.ReplaceAll(page, " ", " page "), func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "stdout.log")
			r := measureJSON(t, "--server", "mcp-tee "+log+" testmcp-ok 5 120"+page)
			f, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			var w wireTools
			sc := bufio.NewScanner(bytes.NewReader(f))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				w.add(t, sc.Bytes())
			}
			if page != "" && len(w.pages) != 3 {
				t.Errorf("%d pages, want 3", len(w.pages))
			}
			w.check(t, r)
		})
	}
	t.Run("http", func(t *testing.T) {
		s := testmcp.Server(5, 120)
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
		var mu sync.Mutex
		var bodies [][]byte
		srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			for k, v := range rec.Header() {
				rw.Header()[k] = v
			}
			rw.WriteHeader(rec.Code)
			rw.Write(rec.Body.Bytes())
			if rec.Body.Len() > 0 {
				mu.Lock()
				bodies = append(bodies, rec.Body.Bytes())
				mu.Unlock()
			}
		}))
		defer srv.Close()
		r := measureJSON(t, "--url", srv.URL)
		var w wireTools
		mu.Lock()
		defer mu.Unlock()
		for _, b := range bodies {
			w.add(t, b)
		}
		w.check(t, r)
	})
}

// pdpp-mcp measured as a spawned stdio server (its own binary, --demo) gives
// the numbers of pdpp-mcp in process, passes the same PDPP checks (the
// repository's budget file asks for them), and needs no code of its own.
func TestPDPPOverStdio(t *testing.T) {
	bin := testmcp.PDPPMCP(t)
	budgetFile := filepath.Join("..", "..", "budget.json")
	in := measureJSON(t, "--budget", budgetFile)
	spawned := measureJSON(t, "--budget", budgetFile, "--server", bin+" --demo")
	if !in.Pass || !spawned.Pass {
		t.Errorf("pass in process %v, spawned %v", in.Pass, spawned.Pass)
	}
	if in.ToolsList.Bytes != spawned.ToolsList.Bytes || in.ToolsList.Instructions != spawned.ToolsList.Instructions {
		t.Errorf("in process %d bytes, instructions %+v; spawned %d, %+v", in.ToolsList.Bytes, in.ToolsList.Instructions,
			spawned.ToolsList.Bytes, spawned.ToolsList.Instructions)
	}
	names := func(r *budget.Report) (out []string) {
		for _, c := range r.Checks {
			out = append(out, c.Name)
		}
		return out
	}
	if !slices.Equal(names(in), names(spawned)) {
		t.Errorf("checks in process %v, spawned %v", names(in), names(spawned))
	}
	for i, tf := range in.ToolsList.Tools {
		if i >= len(spawned.ToolsList.Tools) || spawned.ToolsList.Tools[i] != tf {
			t.Errorf("tool %s: in process %+v, spawned %+v", tf.Name, tf, spawned.ToolsList.Tools)
		}
	}
}
