package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/testlog"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// TestDemoStartFailure: when the demo data cannot be built, the handshake
// still works, tool calls say why they fail, and closing stdin exits 0.
func TestDemoStartFailure(t *testing.T) {
	isolate(t, nil)
	orig := demoDataset
	demoDataset = func() (*dataset.Dataset, error) { return nil, errors.New("generator broke") }
	t.Cleanup(func() { demoDataset = orig })

	ctx := context.Background()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr testlog.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{cmdName, "--demo"}, inR, outW, &stderr)
		outW.Close()
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "schema", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	text := ""
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	if !res.IsError || !strings.Contains(text, "demo dataset: generator broke") {
		t.Errorf("result = error %v, text %q", res.IsError, text)
	}
	cs.Close()
	if code := <-done; code != 0 {
		t.Errorf("exit code = %d, want 0", code)
	}
	if !strings.Contains(stderr.String(), "demo resource server did not start") {
		t.Errorf("stderr does not report the failure:\n%s", stderr.String())
	}
}
