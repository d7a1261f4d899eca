package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/internal/testlog"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

// TestBundlePlaceholders runs the bundle's command line as Claude Desktop
// fills it in: an optional field the person left unset arrives as the
// placeholder text itself, a blank one as "". Either must read as unset (the
// default cache root, no log file), not as a path named after the text.
func TestBundlePlaceholders(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string // after --provider-url URL; LOG and ROOT are replaced
		env  map[string]string
		code int
		log  bool // LOG must hold the diagnostics
		home bool // the credential is cached under $HOME/.pdpp, else under ROOT
	}{
		{name: "unset optional fields", home: true,
			args: []string{"--cache-root", "${user_config.cache_root}"},
			env:  map[string]string{"PDPP_MCP_LOG_FILE": "${user_config.log_file}"}},
		{name: "unset, flag=value form", home: true,
			args: []string{"--cache-root=${user_config.cache_root}", "--log-file=${user_config.log_file}"}},
		{name: "unset, in the environment", home: true,
			env: map[string]string{"PDPP_CACHE_ROOT": "${user_config.cache_root}", "PDPP_MCP_LOG_FILE": "${user_config.log_file}"}},
		{name: "unset log file alone", home: true,
			args: []string{"--log-file", "${user_config.log_file}"}},
		{name: "blank fields", home: true,
			args: []string{"--cache-root", "", "--log-file", ""}},
		{name: "set fields", log: true,
			args: []string{"--cache-root", "ROOT", "--log-file", "LOG"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t, tt.env)
			// The working directory must stay empty: a placeholder taken
			// literally would create a log file or be searched for a cache here.
			wd := t.TempDir()
			t.Chdir(wd)
			srv := pdpptest.New(t, pdpptest.Options{})
			root := t.TempDir()
			if tt.home {
				root = filepath.Join(os.Getenv("HOME"), ".pdpp")
			}
			writeCache(t, root, srv.URL(), tokenMember(srv.Token(pdpptest.TokenClient)))
			logFile := filepath.Join(t.TempDir(), "pdpp-mcp.log")
			args := []string{cmdName, "--provider-url", srv.URL(), "--log-level", "warn"}
			for _, a := range tt.args {
				args = append(args, strings.NewReplacer("LOG", logFile, "ROOT", root).Replace(a))
			}
			var stdout, stderr testlog.Buffer
			if code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr); code != 0 {
				t.Fatalf("exit code = %d, want 0; stderr:\n%s", code, stderr.String())
			}
			if ents, _ := os.ReadDir(wd); len(ents) > 0 {
				t.Errorf("the working directory gained %s", ents[0].Name())
			}
			if _, err := os.Stat(logFile); (err == nil) != tt.log {
				t.Errorf("log file exists = %v, want %v", err == nil, tt.log)
			}
		})
	}
}

// TestBundlePlaceholderProviderURL: an unexpanded provider URL is a missing
// one, with the message that says how to give it.
func TestBundlePlaceholderProviderURL(t *testing.T) {
	isolate(t, nil)
	var stdout, stderr testlog.Buffer
	code := run(context.Background(), []string{cmdName, "--provider-url", "${user_config.provider_url}"}, strings.NewReader(""), &stdout, &stderr)
	if code != 64 || !strings.Contains(stderr.String(), "Provider URL required") {
		t.Errorf("exit %d, stderr %q; want 64 and Provider URL required", code, stderr.String())
	}
}
