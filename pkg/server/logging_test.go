package server

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/internal/testlog"
)

// A session at the default info level must not add SDK lines to stderr; at
// debug level they are wanted, and warnings always pass.
func TestSDKLogLevel(t *testing.T) {
	for _, tc := range []struct {
		level     slog.Level
		wantLines bool
	}{
		{slog.LevelInfo, false},
		{slog.LevelDebug, true},
	} {
		t.Run(tc.level.String(), func(t *testing.T) {
			var buf testlog.Buffer
			logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tc.level}))
			s := New(Options{ProviderURL: "http://127.0.0.1:1", Logger: logger})
			cs := connect(t, s, nil)
			if _, err := cs.ListTools(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			if err := cs.Close(); err != nil {
				t.Fatal(err)
			}
			got := strings.TrimSpace(buf.String())
			if tc.wantLines && got == "" {
				t.Fatal("debug level: expected SDK session lines, got none")
			}
			if !tc.wantLines && got != "" {
				t.Fatalf("info level: SDK lines reached the log:\n%s", got)
			}
		})
	}
}

func TestSDKHandlerPassesWarnings(t *testing.T) {
	var buf bytes.Buffer
	h := sdkHandler{slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})}
	l := slog.New(h).With("k", "v")
	l.Info("dropped")
	l.Warn("kept")
	if out := buf.String(); strings.Contains(out, "dropped") || !strings.Contains(out, "kept") || !strings.Contains(out, "k=v") {
		t.Fatalf("log = %q", out)
	}
}
