package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/pdpp-mcp/pdpp-mcp/internal/testmcp"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

// TestMain lets testscript (and the tests, which find them on PATH) run the
// test binary as commands: the real pdpp-mcp-budget; budget-synthetic, the
// same command measuring syntheticServer instead of the pdpp-mcp server;
// and stdio MCP servers this project did not shape for the budget:
// testmcp-ok N BYTES [PAGE] (N tools with descriptions of about BYTES, PAGE
// to a tools/list page), testmcp-bad KIND (a testmcp misbehaviour) and
// mcp-tee LOG CMD ARGS… (CMD, with its stdout copied to LOG as well).
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		cmdName: func() { os.Exit(run(context.Background(), os.Args, os.Stdout, os.Stderr)) },
		"budget-synthetic": func() {
			os.Exit(runWith(context.Background(), os.Args, os.Stdout, os.Stderr, syntheticServer))
		},
		"testmcp-ok":  testmcpOK,
		"testmcp-bad": func() { os.Exit(testmcp.Stdio(os.Args[1], os.Stdin, os.Stdout, os.Stderr)) },
		"mcp-tee":     mcpTee,
	})
}

func testmcpOK() {
	n, _ := strconv.Atoi(os.Args[1])
	size, _ := strconv.Atoi(os.Args[2])
	s := testmcp.Server(n, size)
	if len(os.Args) > 3 {
		page, _ := strconv.Atoi(os.Args[3])
		s = testmcp.ServerWith(n, size, &mcp.ServerOptions{PageSize: page})
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		os.Exit(1)
	}
}

// mcpTee runs a stdio server with its stdout copied, byte for byte, to a
// log file: what the test reads to measure the wire itself.
func mcpTee() {
	log, err := os.Create(os.Args[1])
	if err != nil {
		os.Exit(1)
	}
	cmd := exec.Command(os.Args[2], os.Args[3:]...)
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	cmd.Stdout = io.MultiWriter(os.Stdout, log)
	err = cmd.Run()
	log.Close()
	if err != nil {
		os.Exit(1)
	}
}

// TestScripts runs testdata/script/*.txtar. Exit statuses there are only
// "zero or not"; TestExitCodes pins the values. BUDGET_FILE is the
// repository's budget.json.
func TestScripts(t *testing.T) {
	budgetFile, err := filepath.Abs(filepath.Join("..", "..", "budget.json"))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("UPDATE_GOLDEN") == "1",
		Setup: func(env *testscript.Env) error {
			env.Setenv("BUDGET_FILE", budgetFile)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"rs":       cmdRS,
			"mcp-http": cmdMCPHTTP,
		},
	})
}

// cmdRS starts a pdpptest resource server (the gmail dataset) for the rest of
// the script and caches a token of the named kind for it under $WORK/cache,
// as `pdpp connect` would. It sets RS_URL and CACHE_ROOT.
//
//	rs client|owner
func cmdRS(ts *testscript.TestScript, neg bool, args []string) {
	kinds := map[string]pdpptest.TokenKind{"client": pdpptest.TokenClient, "owner": pdpptest.TokenOwner}
	if neg || len(args) != 1 || kinds[args[0]] == "" {
		ts.Fatalf("usage: rs client|owner")
	}
	srv, err := pdpptest.Start(pdpptest.Options{})
	ts.Check(err)
	ts.Defer(func() { _ = srv.Close() })

	root := ts.MkAbs("cache")
	c, err := credential.Open(root, srv.URL())
	ts.Check(err)
	ts.Check(os.MkdirAll(filepath.Dir(c.File), 0o700))
	body := `{"provider_url":"` + c.ProviderURL + `","scope":"pdpp:read","credential":{"access_token":"` +
		srv.Token(kinds[args[0]]) + `","token_type":"Bearer","expires_at":"2099-01-01T00:00:00.000Z"}}`
	ts.Check(os.WriteFile(c.File, []byte(body), 0o600))
	ts.Setenv("RS_URL", srv.URL())
	ts.Setenv("CACHE_ROOT", root)
}

// cmdMCPHTTP serves an MCP endpoint over HTTP on 127.0.0.1 for the rest of
// the script and sets MCP_URL: a testmcp misbehaviour, or "ok N BYTES" for
// a well-behaved stateless server of N tools.
//
//	mcp-http KIND | mcp-http ok N BYTES
func cmdMCPHTTP(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: mcp-http KIND | mcp-http ok N BYTES")
	}
	h := testmcp.Handler(args[0])
	if args[0] == "ok" {
		if len(args) != 3 {
			ts.Fatalf("usage: mcp-http ok N BYTES")
		}
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		size, err := strconv.Atoi(args[2])
		ts.Check(err)
		s := testmcp.Server(n, size)
		h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	}
	srv := httptest.NewServer(h)
	ts.Defer(srv.Close)
	ts.Setenv("MCP_URL", srv.URL+"/mcp")
}
