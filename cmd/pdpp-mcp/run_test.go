package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/cmdexit"
	"github.com/pdpp-mcp/pdpp-mcp/internal/testlog"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

// envVars are every variable run reads; each test starts with all of them
// unset so the developer's shell cannot leak in.
var envVars = []string{
	"PDPP_PROVIDER_URL", "PDPP_CACHE_ROOT", "PDPP_MCP_SERVER_NAME", "PDPP_MCP_LOG_LEVEL",
	"PDPP_OWNER_TOKEN", "PDPP_OWNER_SESSION_COOKIE", "PDPP_MCP_LOG_FILE",
}

// isolate unsets envVars, points HOME at an empty directory and applies env.
func isolate(t *testing.T, env map[string]string) {
	t.Helper()
	for _, k := range envVars {
		t.Setenv(k, "") // restores the old value after the test
		os.Unsetenv(k)
	}
	t.Setenv("HOME", t.TempDir())
	for k, v := range env {
		t.Setenv(k, v)
	}
}

// writeCache stores token as the `pdpp connect` credential for providerURL
// under root and returns the cache file.
func writeCache(t *testing.T, root, providerURL, credMembers string) string {
	t.Helper()
	c, err := credential.Open(root, providerURL)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(c.File), 0o700); err != nil {
		t.Fatal(err)
	}
	body := `{"provider_url":"` + c.ProviderURL + `","scope":"pdpp:read","client":{"client_id":"pdpp_cli"},"credential":{` + credMembers + `}}`
	if err := os.WriteFile(c.File, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return c.File
}

func tokenMember(tok string) string { return `"access_token":"` + tok + `","token_type":"Bearer"` }

func TestRunExitCodes(t *testing.T) {
	// Nothing listens on port 9 of the loopback address: cases that reach the
	// network would fail loudly rather than pass by accident.
	const deadURL = "http://127.0.0.1:9"
	root := t.TempDir()
	for _, tt := range []struct {
		name   string
		args   []string
		env    map[string]string
		setup  func(t *testing.T) // writes cache files under root
		code   int
		stderr string // exact; ROOT is replaced by the cache root
		prefix bool   // stderr need only start with the text
		stdout string // a prefix of stdout; "" wants nothing there
	}{
		// Help and version, asked for, are the output.
		{name: "help", args: []string{"--help"}, code: 0, stdout: "NAME:\n   pdpp-mcp - serve a PDPP grant to MCP clients over stdio"},
		{name: "short help", args: []string{"-h"}, code: 0, stdout: "NAME:\n   pdpp-mcp"},
		{name: "version", args: []string{"--version"}, code: 0, stdout: "pdpp-mcp version "},
		{name: "missing provider URL", code: 64,
			stderr: "pdpp-mcp: Provider URL required. Pass --provider-url <url> or set PDPP_PROVIDER_URL. To try pdpp-mcp without a resource server, run it with --demo.\n"},
		{name: "invalid provider URL with =", args: []string{"--provider-url=ftp://h.example"}, code: 64,
			stderr: "pdpp-mcp: Invalid provider URL \"ftp://h.example\": only http and https are supported. Pass the resource server's base URL, for example https://pdpp.example.com.\n"},
		{name: "invalid provider URL from env", env: map[string]string{"PDPP_PROVIDER_URL": "https://h.example:99999"}, code: 64,
			stderr: "pdpp-mcp: Invalid provider URL \"https://h.example:99999\": port out of range. Pass the resource server's base URL, for example https://pdpp.example.com.\n"},
		{name: "unknown flag", args: []string{"--provider-url", deadURL, "--bogus"}, code: 64,
			stderr: "pdpp-mcp: flag provided but not defined: -bogus (see pdpp-mcp --help)\n"},
		{name: "positional argument", args: []string{"stdio"}, code: 64,
			stderr: "pdpp-mcp: unexpected argument \"stdio\": pdpp-mcp takes flags only (see pdpp-mcp --help)\n"},
		{name: "bad log level", args: []string{"--log-level=loud"}, code: 64,
			stderr: "pdpp-mcp: --log-level: log level \"loud\" is not debug, info, warn or error (see pdpp-mcp --help)\n"},
		{name: "bad timeout", args: []string{"--timeout=soon"}, code: 64,
			stderr: "pdpp-mcp: invalid value \"soon\" for flag -timeout: parse error (see pdpp-mcp --help)\n"},
		{name: "zero timeout", args: []string{"--timeout=0s"}, code: 64,
			stderr: "pdpp-mcp: --timeout must be positive, got 0s (see pdpp-mcp --help)\n"},
		{name: "negative body cap", args: []string{"--max-response-bytes=-1"}, code: 64,
			stderr: "pdpp-mcp: --max-response-bytes must be positive, got -1 (see pdpp-mcp --help)\n"},
		{name: "missing URL beats owner env", env: map[string]string{"PDPP_OWNER_TOKEN": "x"}, code: 64,
			stderr: "pdpp-mcp: Provider URL required.", prefix: true},
		{name: "owner token in env", args: []string{"--provider-url", deadURL}, env: map[string]string{"PDPP_OWNER_TOKEN": "x"}, code: 77,
			stderr: "pdpp-mcp: Refusing to start: owner credentials (PDPP_OWNER_TOKEN / PDPP_OWNER_SESSION_COOKIE) are present in the environment. Unset them before running the MCP adapter.\n"},
		{name: "owner cookie in env", args: []string{"--provider-url", deadURL}, env: map[string]string{"PDPP_OWNER_SESSION_COOKIE": "sid=x"}, code: 77,
			stderr: "pdpp-mcp: Refusing to start: owner credentials", prefix: true},
		{name: "owner env with demo", args: []string{"--demo"}, env: map[string]string{"PDPP_OWNER_TOKEN": "x"}, code: 77,
			stderr: "pdpp-mcp: Refusing to start: owner credentials", prefix: true},
		{name: "not connected", args: []string{"--provider-url", deadURL, "--cache-root", root}, code: 78,
			stderr: "pdpp-mcp: No scoped PDPP credential cached for http://127.0.0.1:9 (looked for ROOT/clients/127.0.0.1_9.json). Run `pdpp connect http://127.0.0.1:9` and try again.\n"},
		{name: "malformed JSON", args: []string{"--provider-url=" + deadURL + "/", "--cache-root=" + root}, code: 78,
			setup: func(t *testing.T) {
				writeCache(t, root, deadURL, `"access_token": `) // cut short
			},
			stderr: "pdpp-mcp: Cached PDPP credential for http://127.0.0.1:9 is malformed (not valid JSON in ROOT/clients/127.0.0.1_9.json); re-run `pdpp connect http://127.0.0.1:9`.\n"},
		{name: "expired", args: []string{"--provider-url", deadURL}, env: map[string]string{"PDPP_CACHE_ROOT": root}, code: 78,
			setup: func(t *testing.T) {
				writeCache(t, root, deadURL, tokenMember("abc")+`,"expires_at":"2020-01-01T00:00:00.000Z"`)
			},
			stderr: "pdpp-mcp: Cached PDPP credential for http://127.0.0.1:9 in ROOT/clients/127.0.0.1_9.json is expired (expires_at 2020-01-01T00:00:00.000Z). Run `pdpp connect http://127.0.0.1:9` again.\n"},
		{name: "unparseable expiry", args: []string{"--provider-url", deadURL, "--cache-root", root}, code: 78,
			setup: func(t *testing.T) {
				writeCache(t, root, deadURL, tokenMember("abc")+`,"expires_at":"soon"`)
			},
			stderr: "pdpp-mcp: Cached PDPP credential for http://127.0.0.1:9 is malformed (credential.expires_at \"soon\" is not an RFC 3339 time in ROOT/clients/127.0.0.1_9.json); re-run `pdpp connect http://127.0.0.1:9`.\n"},
		{name: "owner metadata", args: []string{"--provider-url", deadURL, "--cache-root", root}, code: 77,
			setup: func(t *testing.T) {
				writeCache(t, root, deadURL, tokenMember("abc")+`,"pdpp_token_kind":"owner"`)
			},
			stderr: "pdpp-mcp: Refusing the cached PDPP credential for http://127.0.0.1:9: ROOT/clients/127.0.0.1_9.json marks it as an owner credential (credential.pdpp_token_kind says owner), and the MCP adapter serves only grant-scoped client tokens. Run `pdpp connect http://127.0.0.1:9` to cache a client grant.\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t, tt.env)
			os.RemoveAll(filepath.Join(root, "clients"))
			if tt.setup != nil {
				tt.setup(t)
			}
			var stdout, stderr testlog.Buffer
			code := run(context.Background(), append([]string{cmdName}, tt.args...), strings.NewReader(""), &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit code = %d, want %d", code, tt.code)
			}
			if got := stdout.String(); tt.stdout == "" && got != "" || !strings.HasPrefix(got, tt.stdout) {
				t.Errorf("stdout = %q, want %q", got, tt.stdout)
			}
			want := strings.ReplaceAll(tt.stderr, "ROOT", root)
			got := stderr.String()
			if tt.prefix && !strings.HasPrefix(got, want) || !tt.prefix && got != want {
				t.Errorf("stderr:\n%s\nwant%s:\n%s", got, map[bool]string{true: " a prefix"}[tt.prefix], want)
			}
			if tt.code != 0 && strings.Count(got, "\n") != 1 {
				t.Errorf("a failure prints %d lines, want one", strings.Count(got, "\n"))
			}
		})
	}
}

func TestRunProbe(t *testing.T) {
	for _, tt := range []struct {
		name   string
		kind   pdpptest.TokenKind
		code   int
		stderr string
	}{
		{"owner token without metadata", pdpptest.TokenOwner, 77,
			"pdpp-mcp: Refusing the cached PDPP credential for URL: the resource server reports it is an owner token (GET /v1/schema bearer.token_kind), and the MCP adapter serves only grant-scoped client tokens. Run `pdpp connect URL` to cache a client grant.\n"},
		{"revoked grant", pdpptest.TokenRevoked, 78,
			"pdpp-mcp: The resource server at URL rejected the cached PDPP credential from FILE (HTTP 403 grant_revoked). Run `pdpp connect URL` again.\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t, nil)
			srv := pdpptest.New(t, pdpptest.Options{})
			root := t.TempDir()
			file := writeCache(t, root, srv.URL(), tokenMember(srv.Token(tt.kind)))
			var stdout, stderr testlog.Buffer
			code := run(context.Background(), []string{cmdName, "--provider-url", srv.URL(), "--cache-root", root}, strings.NewReader(""), &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit code = %d, want %d", code, tt.code)
			}
			want := strings.NewReplacer("URL", srv.URL(), "FILE", file).Replace(tt.stderr)
			if stderr.String() != want || stdout.String() != "" {
				t.Errorf("stderr:\n%s\nwant:\n%s\nstdout: %q", stderr.String(), want, stdout.String())
			}
			for _, r := range srv.Requests() {
				if r.Path != "/v1/schema" {
					t.Errorf("request %s reached the resource server before the owner check", r.Path)
				}
			}
		})
	}
}

// session runs the command with args on pipes, connects the go-sdk client
// over them, lists tools and calls schema, then closes stdin. It returns the
// exit code, the stdout lines and stderr.
func session(t *testing.T, args ...string) (int, []string, string) {
	t.Helper()
	ctx := context.Background()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr testlog.Buffer
	done := make(chan int, 1)
	go func() {
		code := run(ctx, append([]string{cmdName}, args...), inR, outW, &stderr)
		outW.Close()
		done <- code
	}()
	var out bytes.Buffer
	var outMu sync.Mutex
	tee := io.TeeReader(outR, writerFunc(func(p []byte) (int, error) {
		outMu.Lock()
		defer outMu.Unlock()
		return out.Write(p)
	}))
	client := mcp.NewClient(&mcp.Implementation{Name: "run-test", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: io.NopCloser(tee), Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connect: %v (stderr: %s)", err, stderr.String())
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	names := map[string]bool{}
	for _, tool := range lt.Tools {
		names[tool.Name] = true
	}
	for _, n := range []string{"schema", "query_records", "aggregate"} {
		if !names[n] {
			t.Errorf("tools/list lacks %s: %v", n, names)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "schema", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("tools/call schema: %v", err)
	}
	if res.IsError {
		t.Errorf("schema returned an error result: %+v", res.Content)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	code := <-done
	io.Copy(io.Discard, outR)
	outMu.Lock()
	defer outMu.Unlock()
	var lines []string
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return code, lines, stderr.String()
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestRunServesStdio(t *testing.T) {
	for _, tt := range []struct {
		name string
		args func(t *testing.T) ([]string, string)
	}{
		{"provider", func(t *testing.T) ([]string, string) {
			srv := pdpptest.New(t, pdpptest.Options{})
			root := t.TempDir()
			file := writeCache(t, root, srv.URL(), tokenMember(srv.Token(pdpptest.TokenClient)))
			return []string{"--provider-url=" + srv.URL() + "/", "--cache-root=" + root, "--log-level=warn"},
				cmdexit.Note(cmdName, "connected to "+srv.URL()+" using scoped credential at "+file)
		}},
		{"demo", func(t *testing.T) ([]string, string) {
			return []string{"--demo", "--provider-url=ignored://x", "--log-level=warn"}, "pdpp-mcp: demo: serving the "
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t, nil)
			args, wantStderr := tt.args(t)
			code, lines, stderr := session(t, args...)
			if code != 0 {
				t.Errorf("exit code = %d, want 0 (stderr: %s)", code, stderr)
			}
			if !strings.HasPrefix(stderr, wantStderr) {
				t.Errorf("stderr:\n%s\nwant it to start with:\n%s", stderr, wantStderr)
			}
			if len(lines) < 3 {
				t.Errorf("stdout has %d lines, want at least 3 answers", len(lines))
			}
			for i, l := range lines {
				var msg struct {
					JSONRPC string `json:"jsonrpc"`
				}
				if err := json.Unmarshal([]byte(l), &msg); err != nil || msg.JSONRPC != "2.0" {
					t.Errorf("stdout line %d is not a JSON-RPC message: %q", i+1, l)
				}
			}
		})
	}
}

// TestRunStopsOnSignal cancels the context (what SIGINT/SIGTERM do through
// signal.NotifyContext) while stdin is still open: run returns 0.
func TestRunStopsOnSignal(t *testing.T) {
	isolate(t, nil)
	srv := pdpptest.New(t, pdpptest.Options{})
	root := t.TempDir()
	writeCache(t, root, srv.URL(), tokenMember(srv.Token(pdpptest.TokenClient)))
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr testlog.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{cmdName, "--provider-url", srv.URL(), "--cache-root", root, "--log-level=error"}, inR, outW, &stderr)
		outW.Close()
	}()
	go io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`+"\n")
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil || !strings.Contains(line, `"id":1,"result"`) {
		t.Fatalf("initialize answer = %q, %v (stderr: %s)", line, err, stderr.String())
	}
	cancel()
	go io.Copy(io.Discard, outR)
	if code := <-done; code != 0 {
		t.Errorf("exit code = %d, want 0 (stderr: %s)", code, stderr.String())
	}
	inW.Close()
}

func TestRunLogFile(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		env  bool // pass the path through PDPP_MCP_LOG_FILE
	}{
		{name: "flag", args: []string{"--log-level=loud"}},
		{name: "env", args: []string{"--log-level=loud"}, env: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "pdpp-mcp.log")
			env := map[string]string{}
			args := tt.args
			if tt.env {
				env["PDPP_MCP_LOG_FILE"] = path
			} else {
				args = append([]string{"--log-file", path}, args...)
			}
			isolate(t, env)
			// Earlier content stays: the file is appended to.
			if err := os.WriteFile(path, []byte("before\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"pdpp-mcp"}, args...), strings.NewReader(""), &stdout, &stderr)
			if code != 64 {
				t.Fatalf("exit %d, stderr %q", code, stderr.String())
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want := "before\n" + stderr.String()
			if string(b) != want {
				t.Errorf("log file %q, want %q", b, want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q", stdout.String())
			}
		})
	}
	t.Run("unwritable", func(t *testing.T) {
		isolate(t, nil)
		var stdout, stderr bytes.Buffer
		path := filepath.Join(t.TempDir(), "missing", "x.log")
		code := run(context.Background(), []string{"pdpp-mcp", "--demo", "--log-file", path}, strings.NewReader(""), &stdout, &stderr)
		if code != 64 || !strings.Contains(stderr.String(), "--log-file") {
			t.Errorf("exit %d, stderr %q", code, stderr.String())
		}
	})
}

func TestRunLogFileGetsServingDiagnostics(t *testing.T) {
	isolate(t, nil)
	path := filepath.Join(t.TempDir(), "demo.log")
	var stdout, stderr bytes.Buffer
	// stdin is empty: the demo starts, announces itself and stops at EOF.
	code := run(context.Background(), []string{"pdpp-mcp", "--demo", "--log-file", path}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "demo:") || string(b) != stderr.String() {
		t.Errorf("log file %q, stderr %q", b, stderr.String())
	}
}
