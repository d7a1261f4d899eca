package mcptarget

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/testmcp"
)

// TestMain lets a test start this test binary as a stdio MCP server:
// MCPTARGET_TEST_SERVER names a testmcp misbehaviour, or "ok" for a
// well-behaved server of three tools.
func TestMain(m *testing.M) {
	switch kind := os.Getenv("MCPTARGET_TEST_SERVER"); kind {
	case "":
		os.Exit(m.Run())
	case "ok":
		if err := testmcp.Server(3, 40).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	default:
		os.Exit(testmcp.Stdio(kind, os.Stdin, os.Stdout, os.Stderr))
	}
}

// self is argv that starts this test binary as the server kind.
func self(t *testing.T, kind string) []string {
	t.Helper()
	t.Setenv("MCPTARGET_TEST_SERVER", kind)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe}
}

func opts() Options {
	return Options{Client: &mcp.Implementation{Name: "mcptarget-test", Version: "v0"}}
}

// listAll pages tools/list until it fails or ends.
func listAll(ctx context.Context, c *Conn) error {
	p := &mcp.ListToolsParams{}
	for range 100000 {
		res, err := c.Session.ListTools(ctx, p)
		if err != nil {
			return c.Explain("tools/list", err)
		}
		if res.NextCursor == "" {
			return nil
		}
		p.Cursor = res.NextCursor
	}
	return errors.New("the guard never stopped the pages")
}

// Every misbehaving stdio server ends in an error that says what it did,
// within the deadline given, and leaves no process behind.
func TestCommandMisbehaves(t *testing.T) {
	for _, tt := range []struct {
		kind    string
		limits  Limits
		connect bool // the handshake succeeds; tools/list fails
		is      error
		says    []string
	}{
		{kind: testmcp.Silent, is: context.DeadlineExceeded, says: []string{"connect to --server "}},
		{kind: testmcp.Exit, says: []string{"the server exited with status 3", `its last stderr line: "testmcp: cannot start: no configuration"`}},
		{kind: testmcp.Garbage, is: ErrNotJSONRPC, says: []string{`the server wrote "Starting the server on port 8080..." on line 1 of stdout`}},
		{kind: testmcp.Huge, connect: true, is: ErrTooLarge, says: []string{"tools/list: the server sent a line over 16 MiB; reading stopped there"}},
		{kind: testmcp.Pages, connect: true, limits: Limits{MaxTotal: 64 << 10}, is: ErrTooLarge, says: []string{"more than 65536 bytes in all"}},
	} {
		t.Run(tt.kind, func(t *testing.T) {
			o := opts()
			o.Limits = tt.limits
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			if tt.kind == testmcp.Silent {
				var cancel2 context.CancelFunc
				ctx, cancel2 = context.WithTimeout(ctx, 300*time.Millisecond)
				defer cancel2()
			}
			c, err := Command(ctx, self(t, tt.kind), o)
			if tt.connect {
				if err != nil {
					t.Fatalf("connect: %v", err)
				}
				err = listAll(ctx, c)
				proc := c.proc
				c.Abort()
				if proc.exit() == "" {
					t.Error("the server still runs after Abort")
				}
			}
			if err == nil {
				t.Fatal("no error")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			for _, s := range tt.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
		})
	}
}

// A well-behaved server is measured and stopped by closing its stdin, well
// before the grace period runs out.
func TestCommandCloses(t *testing.T) {
	c, err := Command(t.Context(), self(t, "ok"), opts())
	if err != nil {
		t.Fatal(err)
	}
	if err := listAll(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	proc := c.proc
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if got := proc.exit(); got != "exited with status 0" {
		t.Errorf("the server %s", got)
	}
}

// The same misbehaviours over Streamable HTTP.
func TestHTTPMisbehaves(t *testing.T) {
	for _, tt := range []struct {
		kind    string
		connect bool
		is      error
		says    string
	}{
		{kind: testmcp.Silent, is: context.DeadlineExceeded, says: "connect to "},
		{kind: testmcp.Exit, says: "connect to "},
		{kind: testmcp.Garbage, connect: true, says: "tools/list: "},
		{kind: testmcp.Huge, connect: true, is: ErrTooLarge, says: "tools/list: the server sent a response body over 16 MiB"},
	} {
		t.Run(tt.kind, func(t *testing.T) {
			srv := httptest.NewServer(testmcp.Handler(tt.kind))
			defer srv.Close()
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			if tt.kind == testmcp.Silent {
				var cancel2 context.CancelFunc
				ctx, cancel2 = context.WithTimeout(ctx, 300*time.Millisecond)
				defer cancel2()
			}
			c, err := HTTP(ctx, srv.URL, opts())
			if tt.connect {
				if err != nil {
					t.Fatalf("connect: %v", err)
				}
				err = listAll(ctx, c)
				c.Abort()
			}
			if err == nil {
				t.Fatal("no error")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("error %q does not say %q", err, tt.says)
			}
		})
	}
}
