package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/internal/budget"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/server"
)

// thirdParty is a server this project did not write, as the proof runs it.
type thirdParty struct {
	name     string
	argv     string   // --server value
	tools    int      // how many tools it lists
	scenario []string // probe lines, each expected to succeed
}

// thirdParties are the servers scripts/budget-servers/run.sh builds or
// installs: PDPP_MCP_BUDGET_SERVERS is the directory of the Go ones (the
// go-sdk's examples/server/everything and memory, mark3labs/mcp-go's
// examples/everything) and PDPP_MCP_BUDGET_NODE_SERVER the command of the
// TypeScript @modelcontextprotocol/server-everything. Without them the
// tests skip: building them needs the module proxy and npm, which go test
// ./... must not.
func thirdParties(t *testing.T) (dir string, servers []thirdParty) {
	dir = os.Getenv("PDPP_MCP_BUDGET_SERVERS")
	if dir == "" {
		t.Skip("PDPP_MCP_BUDGET_SERVERS is not set; scripts/budget-servers/run.sh builds the servers and runs this test")
	}
	servers = []thirdParty{
		{"go-sdk everything", filepath.Join(dir, "everything"), 10, []string{`greet {"name": "budget"}`}},
		{"go-sdk memory", filepath.Join(dir, "memory"), 9, []string{
			`create_entities {"entities": [{"name": "budget", "entityType": "tool", "observations": ["measures MCP servers"]}]}`,
			`search_nodes {"query": "budget"}`,
			`read_graph {}`,
		}},
		{"mcp-go everything", filepath.Join(dir, "mcpgo-everything"), 6, []string{`echo {"message": "hi"}`, `add {"a": 1, "b": 2}`}},
	}
	if node := os.Getenv("PDPP_MCP_BUDGET_NODE_SERVER"); node != "" {
		servers = append(servers, thirdParty{"TypeScript server-everything", node, 14, []string{
			`echo {"message": "hi"}`, `get-sum {"a": 1, "b": 2}`, `get-structured-content {"location": "New York"}`,
		}})
	} else if os.Getenv("CI") == "true" {
		t.Fatal("PDPP_MCP_BUDGET_NODE_SERVER is not set under CI")
	}
	return dir, servers
}

// emptyBudget is a budget file with no limits: only the generic checks and
// the --limit flags apply.
func emptyBudget(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "budget.json")
	if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runReport runs the command with --json and decodes the report, expecting
// the exit status code.
func runReport(t *testing.T, code int, args ...string) *budget.Report {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args = append([]string{cmdName, "--json"}, args...)
	if got := runWith(t.Context(), args, &stdout, &stderr, server.New); got != code {
		t.Fatalf("%q: exit %d, want %d\n%s", args, got, code, stderr.String())
	}
	var r budget.Report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	return &r
}

// Every third-party server is measured over stdio: every tool is named in
// the report, the tools array and each tool are the bytes its stdout
// carried, and the scenario's results are budgeted.
func TestThirdPartyServers(t *testing.T) {
	_, servers := thirdParties(t)
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			dir := t.TempDir()
			log := filepath.Join(dir, "stdout.log")
			r := runReport(t, 0, "--no-results", "--budget", emptyBudget(t), "--limit", "schema.max_portability_findings=1000",
				"--server", "mcp-tee "+log+" "+s.argv)
			if len(r.ToolsList.Tools) != s.tools {
				t.Errorf("%d tools in the report, want %d", len(r.ToolsList.Tools), s.tools)
			}
			f, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			var w wireTools
			sc := bufio.NewScanner(bytes.NewReader(f))
			sc.Buffer(nil, 16<<20)
			for sc.Scan() {
				w.add(t, sc.Bytes())
			}
			w.check(t, r)
			var names []string
			for _, tf := range r.ToolsList.Tools {
				names = append(names, tf.Name)
			}
			t.Logf("%d tools, %d bytes, %d tokens: %s", len(names), r.ToolsList.Bytes, r.ToolsList.Tokens, strings.Join(names, ", "))

			// Results: each call's text and structuredContent, budgeted by
			// the limit for any tool; an impossible limit fails the run.
			scenario := filepath.Join(dir, "calls.probe")
			if err := os.WriteFile(scenario, []byte(strings.Join(s.scenario, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			r = runReport(t, 0, "--budget", emptyBudget(t), "--limit", "schema.max_portability_findings=1000",
				"--server", s.argv, "--scenario", scenario, "--limit", "results.*.text_max_bytes=100000")
			if len(r.Results) != len(s.scenario) {
				t.Fatalf("%d results, want %d", len(r.Results), len(s.scenario))
			}
			budgeted := 0
			for _, c := range r.Results {
				if c.Error != "" || c.IsError || c.Text.Bytes == 0 {
					t.Errorf("call %d (%s): error %q, isError %v, %d text bytes", c.Seq, c.Label(), c.Error, c.IsError, c.Text.Bytes)
				}
				t.Logf("call %d (%s): %d text bytes, %d structured bytes", c.Seq, c.Label(), c.Text.Bytes, c.Structured.Bytes)
			}
			for _, ch := range r.Checks {
				if ch.Name == "results.*.text_max_bytes" {
					budgeted++
				}
			}
			if budgeted != len(s.scenario) {
				t.Errorf("%d result checks, want %d", budgeted, len(s.scenario))
			}
			r = runReport(t, exitOverBudget, "--budget", emptyBudget(t), "--limit", "schema.max_portability_findings=1000",
				"--server", s.argv, "--scenario", scenario, "--limit", "results.*.text_max_bytes=1")
			if r.Pass {
				t.Error("an impossible result limit passed")
			}
		})
	}
}

// The go-sdk's everything server lists ten tools: a 1,000-byte ceiling
// fails the run naming the largest, and a baseline of its memory server
// (nine other tools) compared with it names every added tool.
func TestThirdPartyLimitsAndBaselines(t *testing.T) {
	dir, _ := thirdParties(t)
	everything, memory := filepath.Join(dir, "everything"), filepath.Join(dir, "memory")
	none := emptyBudget(t)
	r := runReport(t, exitOverBudget, "--no-results", "--budget", none, "--server", everything, "--limit", "tools_list.max_bytes=1000")
	var total budget.Check
	for _, c := range r.Checks {
		if c.Name == "tools_list.max_bytes" {
			total = c
		}
	}
	if total.Pass || !strings.Contains(total.Message, "shrink the largest tools: greet (with Icons) ") {
		t.Errorf("tools_list.max_bytes: %+v", total)
	}

	base := filepath.Join(t.TempDir(), "memory.json")
	runReport(t, exitOverBudget, "--no-results", "--budget", none, "--server", memory, "--write-baseline", base) // its schemas are not portable
	r = runReport(t, exitOverBudget, "--no-results", "--budget", none, "--server", everything, "--baseline", base, "--limit", "schema.max_portability_findings=1000")
	var growth budget.Check
	for _, c := range r.Checks {
		if c.Name == "baseline.growth" {
			growth = c
		}
	}
	if !strings.Contains(strings.Join(growth.Findings, "\n"), "added tool greet (with Icons)") {
		t.Errorf("baseline.growth: %+v", growth)
	}
	runReport(t, exitOverBudget, "--no-results", "--budget", none, "--server", memory, "--baseline", base) // same server: only portability fails
	r = runReport(t, 0, "--no-results", "--budget", none, "--server", memory, "--baseline", base, "--limit", "schema.max_portability_findings=1000")
	if len(r.Baseline.Changed()) != 0 {
		t.Errorf("the memory server changed against its own baseline: %+v", r.Baseline.Changed())
	}
}

// The go-sdk's everything server over Streamable HTTP (-http): every tool,
// and the tools array as its event stream carried it, read by a recording
// proxy in front of it.
func TestThirdPartyHTTP(t *testing.T) {
	dir, _ := thirdParties(t)
	addr := startEverythingHTTP(t, filepath.Join(dir, "everything"))
	var mu sync.Mutex
	var bodies [][]byte
	target, _ := url.Parse("http://" + addr)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Method != http.MethodPost {
			return nil
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		resp.Body = io.NopCloser(bytes.NewReader(b))
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
		return nil
	}
	front := httptest.NewServer(proxy)
	defer front.Close()

	r := runReport(t, 0, "--no-results", "--budget", emptyBudget(t), "--url", front.URL)
	var w wireTools
	mu.Lock()
	defer mu.Unlock()
	for _, b := range bodies {
		for _, msg := range messages(b) {
			w.add(t, msg)
		}
	}
	w.check(t, r)
	if len(r.ToolsList.Tools) != 10 {
		t.Errorf("%d tools over HTTP, want 10", len(r.ToolsList.Tools))
	}
}

// messages are the JSON-RPC messages of a response body: the body itself,
// or the data of each event of an event stream.
func messages(b []byte) [][]byte {
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		return [][]byte{t}
	}
	var out [][]byte
	var data []byte
	for _, line := range bytes.Split(b, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case len(line) == 0:
			if len(data) > 0 {
				out = append(out, data)
			}
			data = nil
		case bytes.HasPrefix(line, []byte("data:")):
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))...)
		}
	}
	if len(data) > 0 {
		out = append(out, data)
	}
	return out
}

// startEverythingHTTP runs the everything server with -http on a free
// loopback port (it takes an address, not a listener, so the port is found
// first and tried again should another process take it meanwhile).
func startEverythingHTTP(t *testing.T, bin string) string {
	t.Helper()
	for range 3 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		cmd := exec.Command(bin, "-http", addr)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		if waitListening(addr, exited) {
			t.Cleanup(func() { cmd.Process.Kill(); <-exited })
			return addr
		}
		cmd.Process.Kill()
		<-exited
	}
	t.Fatal("the everything server did not listen on any of three ports")
	return ""
}

// waitListening polls until addr accepts a connection, the process exits,
// or ten seconds pass.
func waitListening(addr string, exited <-chan struct{}) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var d net.Dialer
	for {
		if c, err := d.DialContext(ctx, "tcp", addr); err == nil {
			c.Close()
			return true
		}
		select {
		case <-exited:
			return false
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
}
