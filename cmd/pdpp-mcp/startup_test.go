package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/internal/testlog"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

// TestRunRefusesSpecialFiles: a FIFO at the credential path is refused
// with the credential error at once instead of blocking start-up, and a
// provider host too long for a cache file name is a usage error.
func TestRunRefusesSpecialFiles(t *testing.T) {
	isolate(t, nil)
	root := t.TempDir()
	c, err := credential.Open(root, "http://127.0.0.1:9")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(c.File), 0o700); err != nil {
		t.Fatal(err)
	}
	if haveFIFO {
		if err := mkfifo(c.File); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"fifo", []string{"--provider-url", "http://127.0.0.1:9", "--cache-root", root}, 78, "not a regular file (a named pipe)"},
		{"long host", []string{"--provider-url", "https://" + strings.Repeat("h", 300) + ".example", "--cache-root", root}, 64, "longer than 250 characters"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "fifo" && !haveFIFO {
				t.Skip("no named pipes on this system")
			}
			var stdout, stderr testlog.Buffer
			code := run(context.Background(), append([]string{cmdName}, tt.args...), strings.NewReader(""), &stdout, &stderr)
			if code != tt.code || !strings.Contains(stderr.String(), tt.stderr) || stdout.String() != "" {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr.String(), tt.code, tt.stderr)
			}
		})
	}
}

// slowProbeRS holds the owner probe until released and records the order
// of requests; it answers the probe with kind and any other read with an
// empty page.
type slowProbeRS struct {
	kind    string
	probing chan struct{} // the probe arrived
	release chan struct{}
	mu      sync.Mutex
	paths   []string
}

func (h *slowProbeRS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.paths = append(h.paths, r.URL.Path)
	first := len(h.paths) == 1
	h.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if first {
		close(h.probing)
		<-h.release
	}
	if r.URL.Path == "/v1/schema" {
		io.WriteString(w, `{"object":"schema","bearer":{"token_kind":"`+h.kind+`"},"streams":[]}`)
		return
	}
	io.WriteString(w, `{"object":"list","data":[],"has_more":false}`)
}

func (h *slowProbeRS) seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.paths)
}

// runOnPipes runs the command in-process with stdin and stdout as pipes.
func runOnPipes(t *testing.T, args ...string) (io.WriteCloser, *bufio.Reader, chan int, *testlog.Buffer) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr := &testlog.Buffer{}
	done := make(chan int, 1)
	go func() {
		code := run(context.Background(), append([]string{cmdName}, args...), inR, outW, stderr)
		outW.Close()
		done <- code
	}()
	t.Cleanup(func() { inW.Close() })
	return inW, bufio.NewReader(outR), done, stderr
}

// TestStartupDoesNotWaitForTheProbe: initialize and tools/list are answered
// while the owner probe is still out; a tool call waits for its verdict.
func TestStartupDoesNotWaitForTheProbe(t *testing.T) {
	isolate(t, nil)
	h := &slowProbeRS{kind: "client", probing: make(chan struct{}), release: make(chan struct{})}
	srv := httptest.NewServer(h)
	defer srv.Close()
	root := t.TempDir()
	writeCache(t, root, srv.URL, tokenMember("scoped-token"))
	in, out, done, stderr := runOnPipes(t, "--provider-url", srv.URL, "--cache-root", root, "--log-level", "error")
	<-h.probing
	go io.WriteString(in, initLine+`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`+"\n")
	for _, want := range []string{`"id":1,"result"`, `"id":7,"result"`} {
		if line, err := out.ReadString('\n'); err != nil || !strings.Contains(line, want) {
			t.Fatalf("answer while probing = %.80q, %v; want %s (stderr: %s)", line, err, want, stderr)
		}
	}
	go io.WriteString(in, callLine)
	if got := h.seen(); len(got) != 1 {
		t.Fatalf("requests before the verdict: %v", got)
	}
	close(h.release)
	if line, err := out.ReadString('\n'); err != nil || !strings.Contains(line, `"id":2,"result"`) {
		t.Fatalf("tool call after the verdict = %.200q, %v", line, err)
	}
	in.Close()
	if code := <-done; code != 0 {
		t.Errorf("exit %d (stderr: %s)", code, stderr)
	}
	// The held call used the start-up verdict: one probe in all. Without
	// the hold it would have asked again while the first probe was out.
	// The call reads the schema once more, for the declared roles titles
	// use (the same request as the probe).
	if got := h.seen(); got[0] != "/v1/schema" || countOf(got[1:], "/v1/schema") > 1 {
		t.Errorf("requests %v, want the probe once, first (and the roles read once)", got)
	}
}

// TestStartupOwnerVerdictKeepsServing: the session is already serving when
// the probe says owner; the call waiting for the verdict and every later
// one are answered with the reason as tool results, tools/list is still
// answered, no data request reaches the resource server, and the process
// exits 77 only once the client closes stdin.
func TestStartupOwnerVerdictKeepsServing(t *testing.T) {
	isolate(t, nil)
	h := &slowProbeRS{kind: "owner", probing: make(chan struct{}), release: make(chan struct{})}
	srv := httptest.NewServer(h)
	defer srv.Close()
	root := t.TempDir()
	writeCache(t, root, srv.URL, tokenMember("owner-token"))
	in, out, done, stderr := runOnPipes(t, "--provider-url", srv.URL, "--cache-root", root, "--log-level", "error")
	<-h.probing
	go io.WriteString(in, initLine)
	if line, err := out.ReadString('\n'); err != nil || !strings.Contains(line, `"id":1,"result"`) {
		t.Fatalf("initialize: %q %v", line, err)
	}
	go io.WriteString(in, callLine)
	close(h.release)
	refusal := `"code":"owner_token_refused","message":"Refusing the cached PDPP credential for ` + srv.URL + `: the resource server reports it is an owner token`
	for _, id := range []string{"2", "3"} {
		if id == "3" {
			go io.WriteString(in, strings.Replace(callLine, `"id":2`, `"id":3`, 1))
		}
		if line, err := out.ReadString('\n'); err != nil || !strings.Contains(line, `"id":`+id+`,"result"`) || !strings.Contains(line, refusal) ||
			!strings.Contains(line, "`pdpp connect "+srv.URL+"`") || !strings.Contains(line, `"isError":true`) {
			t.Fatalf("tool call %s: %q %v", id, line, err)
		}
	}
	go io.WriteString(in, `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`+"\n")
	if line, err := out.ReadString('\n'); err != nil || !strings.Contains(line, `"id":8,"result":{"tools"`) {
		t.Fatalf("tools/list after the verdict: %.200q %v", line, err)
	}
	select {
	case code := <-done:
		t.Fatalf("exited %d with stdin open (stderr: %s)", code, stderr)
	default:
	}
	in.Close()
	go io.Copy(io.Discard, out)
	if code := <-done; code != 77 {
		t.Errorf("exit %d, want 77 (stderr: %s)", code, stderr)
	}
	if !strings.Contains(stderr.String(), "reports it is an owner token") {
		t.Errorf("stderr: %s", stderr)
	}
	for _, p := range h.seen() {
		if p != "/v1/schema" {
			t.Errorf("data request %s with an owner token", p)
		}
	}
}

// TestStartupRefusedGrantKeepsServing: a grant the RS refuses right after
// start (revoked) is handled as a refusal in the middle of a session:
// initialize is answered, then every tool call, however late, gets the
// reason and `pdpp connect <url>` as its result; nothing ends the process
// but the client closing stdin (the refusal's old linger bound is set to a
// millisecond here, and ignored), and it then exits 78. A credential cached
// meanwhile is picked up by the next call, and the exit is then 0.
func TestStartupRefusedGrantKeepsServing(t *testing.T) {
	for _, reconnect := range []bool{false, true} {
		t.Run(map[bool]string{false: "still revoked", true: "connected again"}[reconnect], func(t *testing.T) {
			isolate(t, nil)
			d := pdpptest.New(t, pdpptest.Options{})
			root := t.TempDir()
			writeCache(t, root, d.URL(), tokenMember(d.Token(pdpptest.TokenRevoked)))
			inR, in := io.Pipe()
			outR, outW := io.Pipe()
			stderr := &testlog.Buffer{}
			args := []string{cmdName, "--provider-url", d.URL(), "--cache-root", root, "--log-level", "error"}
			st := &startup{stdin: inR, stdout: outW, args: args, linger: time.Millisecond}
			done := make(chan int, 1)
			go func() {
				done <- runWith(context.Background(), st, args, inR, outW, stderr)
				outW.Close()
			}()
			defer in.Close()
			out := bufio.NewReader(outR)
			go io.WriteString(in, initLine)
			if line, err := out.ReadString('\n'); err != nil || !strings.Contains(line, `"id":1,"result"`) {
				t.Fatalf("initialize: %q %v", line, err)
			}
			guidance := "`pdpp connect " + d.URL() + "`"
			for id := 2; id <= 4; id++ {
				go io.WriteString(in, strings.Replace(callLine, `"id":2`, `"id":`+strconv.Itoa(id), 1))
				line, err := out.ReadString('\n')
				if err != nil || !strings.Contains(line, `"id":`+strconv.Itoa(id)+`,"result"`) || !strings.Contains(line, `"code":"grant_revoked"`) ||
					!strings.Contains(line, guidance) || !strings.Contains(line, `"isError":true`) {
					t.Fatalf("tool call %d: %q %v (stderr: %s)", id, line, err, stderr)
				}
				// Another round trip between calls: the process must still
				// be there, answering.
				go io.WriteString(in, `{"jsonrpc":"2.0","id":"p","method":"ping"}`+"\n")
				if line, err := out.ReadString('\n'); err != nil || !strings.Contains(line, `"id":"p","result"`) {
					t.Fatalf("ping after call %d: %q %v", id, line, err)
				}
			}
			want := 78
			if reconnect {
				// As in a session: the call that meets the refusal loads the
				// new credential and says to call again; the next is served.
				writeCache(t, root, d.URL(), tokenMember(d.Token(pdpptest.TokenClient)))
				go io.WriteString(in, strings.Replace(callLine, `"id":2`, `"id":9`, 1))
				if line, err := out.ReadString('\n'); err != nil || !strings.Contains(line, "loaded a new credential") {
					t.Fatalf("tool call after pdpp connect: %.300q %v", line, err)
				}
				go io.WriteString(in, strings.Replace(callLine, `"id":2`, `"id":10`, 1))
				if line, err := out.ReadString('\n'); err != nil || !strings.Contains(line, `"id":10,"result"`) || strings.Contains(line, `"isError":true`) {
					t.Fatalf("the call after that: %.300q %v", line, err)
				}
				want = 0
			}
			select {
			case code := <-done:
				t.Fatalf("exited %d with stdin open (stderr: %s)", code, stderr)
			default:
			}
			in.Close()
			go io.Copy(io.Discard, out)
			select {
			case code := <-done:
				if code != want {
					t.Errorf("exit %d, want %d (stderr: %s)", code, want, stderr)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("did not exit after stdin closed")
			}
			if want == 78 && !strings.Contains(stderr.String(), "grant_revoked") {
				t.Errorf("stderr: %s", stderr)
			}
		})
	}
}

// TestStartupRefusalReachesTheClient: a start-up failure is the answer to
// initialize (and to any later request) while the client keeps stdin open;
// the process then exits with the failure's status, after the linger bound
// when the client does not close stdin, at once when it does.
func TestStartupRefusalReachesTheClient(t *testing.T) {
	for _, tt := range []struct {
		name      string
		args      []string
		code      int
		closeIn   bool
		inMessage string
	}{
		{"not connected, stdin closed", []string{"--provider-url", "http://127.0.0.1:9"}, 78, true, "No scoped PDPP credential cached for http://127.0.0.1:9 (looked for "},
		{"not connected, stdin open", []string{"--provider-url", "http://127.0.0.1:9"}, 78, false, "Run `pdpp connect http://127.0.0.1:9`"},
		{"no provider URL", nil, 64, true, "Pass --provider-url <url> or set PDPP_PROVIDER_URL"},
		{"bad flag", []string{"--timeout", "-1s", "--demo"}, 64, true, "--timeout must be positive"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t, nil)
			inR, in := io.Pipe()
			outR, outW := io.Pipe()
			stderr := &testlog.Buffer{}
			done := make(chan int, 1)
			// Closing stdin is what ends a refusal here, except where the
			// test is that the linger bound ends it.
			linger := time.Hour
			if !tt.closeIn {
				linger = time.Millisecond
			}
			st := &startup{stdin: inR, stdout: outW, args: append([]string{cmdName}, tt.args...), linger: linger}
			go func() {
				done <- runWith(context.Background(), st, st.args, inR, outW, stderr)
				outW.Close()
			}()
			defer in.Close()
			out := bufio.NewReader(outR)
			send, ids := initLine+`{"jsonrpc":"2.0","id":"x","method":"tools/list"}`+"\n", []string{`1`, `"x"`}
			if !tt.closeIn {
				send, ids = initLine, ids[:1]
			}
			go io.WriteString(in, send)
			for _, id := range ids {
				line, err := out.ReadString('\n')
				if err != nil || !strings.HasPrefix(line, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32050,"message":"pdpp-mcp cannot start: `) ||
					!strings.Contains(line, tt.inMessage) || !strings.Contains(line, `"exit_code":`+strconv.Itoa(tt.code)) {
					t.Fatalf("answer to id %s = %q, %v", id, line, err)
				}
			}
			if tt.closeIn {
				in.Close()
			}
			go io.Copy(io.Discard, out)
			select {
			case code := <-done:
				if code != tt.code {
					t.Errorf("exit %d, want %d (stderr: %s)", code, tt.code, stderr)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the command did not exit")
			}
			if !strings.Contains(stderr.String(), tt.inMessage) {
				t.Errorf("stderr %q lacks %q", stderr, tt.inMessage)
			}
		})
	}
}

func countOf(s []string, v string) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}
