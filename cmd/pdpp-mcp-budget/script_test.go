package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

// TestMain lets testscript run the test binary as the command: the real
// pdpp-mcp-budget, and budget-synthetic, the same command measuring
// syntheticServer instead of the pdpp-mcp server.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		cmdName: func() { os.Exit(run(context.Background(), os.Args, os.Stdout, os.Stderr)) },
		"budget-synthetic": func() {
			os.Exit(runWith(context.Background(), os.Args, os.Stdout, os.Stderr, syntheticServer))
		},
	})
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
			"rs": cmdRS,
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
