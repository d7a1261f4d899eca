package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

// TestMain lets testscript run the test binary as the pdpp-mcp command, so the
// scripts exercise the real process: argv, exit status, stdin, stdout, stderr.
//
// With PDPP_MCP_TEST_MAIN=1 the test binary is the command itself, signal
// handling included, for tests that start it as a process.
func TestMain(m *testing.M) {
	if os.Getenv("PDPP_MCP_TEST_MAIN") == "1" {
		os.Exit(mainCode())
	}
	testscript.Main(m, map[string]func(){
		cmdName: func() { os.Exit(mainCode()) },
	})
}

// TestScripts runs testdata/script/*.txtar. Exit statuses are only "zero or
// not" there; TestRunExitCodes pins the exact values.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("UPDATE_GOLDEN") == "1",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"rs":        cmdRS,
			"jsonlines": cmdJSONLines,
		},
	})
}

// cmdRS starts a pdpptest resource server for the rest of the script and
// caches a token of the named kind for it under $WORK/cache, as
// `pdpp connect` would. It sets RS_URL, RS_TOKEN, CACHE_ROOT and CACHE_FILE,
// each name followed by the optional suffix, so a script can start several.
//
//	rs client|owner|revoked|unknown [suffix]
func cmdRS(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: rs client|owner|revoked|unknown [suffix]")
	}
	suffix := ""
	if len(args) == 2 {
		suffix = args[1]
	}
	kinds := map[string]pdpptest.TokenKind{
		"client": pdpptest.TokenClient, "owner": pdpptest.TokenOwner,
		"revoked": pdpptest.TokenRevoked, "unknown": pdpptest.TokenUnknown,
	}
	k, ok := kinds[args[0]]
	if !ok {
		ts.Fatalf("rs: unknown token kind %q", args[0])
	}
	srv, err := pdpptest.Start(pdpptest.Options{})
	ts.Check(err)
	ts.Defer(func() { srv.Close() })

	root := ts.MkAbs("cache")
	c, err := credential.Open(root, srv.URL())
	ts.Check(err)
	ts.Check(os.MkdirAll(filepath.Dir(c.File), 0o700))
	body := `{"provider_url":"` + c.ProviderURL + `","scope":"pdpp:read","credential":{"access_token":"` +
		srv.Token(k) + `","token_type":"Bearer","expires_at":"2099-01-01T00:00:00.000Z"}}`
	ts.Check(os.WriteFile(c.File, []byte(body), 0o600))
	ts.Setenv("RS_URL"+suffix, srv.URL())
	ts.Setenv("RS_TOKEN"+suffix, srv.Token(k))
	ts.Setenv("CACHE_ROOT"+suffix, root)
	ts.Setenv("CACHE_FILE"+suffix, c.File)
}

// cmdJSONLines fails unless every line of the named output (stdout or
// stderr) is a JSON-RPC 2.0 message, and there is at least one.
//
//	jsonlines stdout
func cmdJSONLines(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: jsonlines stdout|stderr")
	}
	text := ts.ReadFile(args[0])
	n := 0
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		var msg struct {
			JSONRPC string `json:"jsonrpc"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil || msg.JSONRPC != "2.0" {
			ts.Fatalf("%s line %d is not a JSON-RPC message: %q", args[0], i+1, line)
		}
		n++
	}
	if text == "" || n == 0 {
		ts.Fatalf("%s is empty", args[0])
	}
}
