package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tourDir holds the repository's golden transcripts of the built-in tour.
const tourDir = "../../testdata/tour"

// TestTourGolden runs the built-in tour over the demo dataset and checks it
// against the checked-in transcripts, so any change to what a model reads
// shows up in review. UPDATE_GOLDEN=1 records them instead.
func TestTourGolden(t *testing.T) {
	isolate(t)
	mode := "--check"
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		mode = "--record"
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{cmdName, "--demo", "--color=never", mode, tourDir}, nil, &stdout, &stderr)
	if code != exitOK {
		out := stdout.String()
		if i := strings.Index(out, "golden mismatch"); i >= 0 {
			out = out[i:]
		}
		t.Fatalf("tour %s %s: exit %d\n%s\n%s\n(after review, regenerate with UPDATE_GOLDEN=1 go test ./cmd/pdpp-mcp-probe)", mode, tourDir, code, stderr.String(), out)
	}
}

// isolate clears the variables the probe reads and points HOME at an empty
// directory, so the developer's shell cannot leak in.
func isolate(t *testing.T) {
	t.Helper()
	for _, k := range []string{"PDPP_CACHE_ROOT", "PDPP_OWNER_TOKEN", "PDPP_OWNER_SESSION_COOKIE", "NO_COLOR", "CLICOLOR_FORCE"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("HOME", t.TempDir())
}

func TestRunExitCodes(t *testing.T) {
	isolate(t)
	golden := t.TempDir()
	var so, se bytes.Buffer
	if code := run(context.Background(), []string{cmdName, "--demo", "--record", golden, "--call", `schema {"stream":"mail_labels"}`}, nil, &so, &se); code != 0 {
		t.Fatalf("recording: exit %d: %s", code, se.String())
	}
	for _, tt := range []struct {
		name   string
		args   []string
		env    map[string]string
		code   int
		stderr string // substring of the one stderr line
	}{
		{name: "ok", args: []string{"--demo", "--call", "schema"}, code: exitOK},
		{name: "no target", args: []string{"--call", "schema"}, code: exitUsage, stderr: "no target"},
		{name: "flag error", args: []string{"--demo", "--bogus"}, code: exitUsage, stderr: "flag provided but not defined: -bogus"},
		{name: "bad call", args: []string{"--demo", "--call", "schema {"}, code: exitUsage, stderr: "--call 1: schema arguments: invalid JSON"},
		{name: "empty provider URL", args: []string{"--provider-url", "", "--call", "schema"}, code: exitUsage, stderr: "Provider URL required"},
		{name: "not connected", args: []string{"--provider-url", "http://127.0.0.1:9", "--call", "schema"}, code: 78, stderr: "No scoped PDPP credential cached"},
		{name: "owner environment", args: []string{"--demo"}, env: map[string]string{"PDPP_OWNER_TOKEN": "x"}, code: 77, stderr: "owner credentials"},
		{name: "isError", args: []string{"--demo", "--call", `query_records {"stream":"calendar_attendees"}`}, code: exitIsError,
			stderr: "call 1 (query_records) returned isError (pass --allow-errors"},
		{name: "isError allowed", args: []string{"--demo", "--allow-errors", "--call", `query_records {"stream":"calendar_attendees"}`}, code: exitOK},
		{name: "expected isError", args: []string{"--demo", "--call", `!query_records {"stream":"calendar_attendees"}`}, code: exitOK},
		{name: "expected isError missing", args: []string{"--demo", "--allow-errors", "--call", "!schema"}, code: exitIsError,
			stderr: "call 1 (schema) did not return the isError its ! expects"},
		{name: "unknown tool", args: []string{"--demo", "--call", "nope"}, code: exitFailure, stderr: `call 1 (nope): tools/call nope:`},
		{name: "missing variable", args: []string{"--demo", "--call", `fetch {"id":"$first_fetch_id"}`}, code: exitFailure,
			stderr: "call 1 (fetch, --call 1): $first_fetch_id is not available"},
		{name: "golden same", args: []string{"--demo", "--check", golden, "--call", `schema {"stream":"mail_labels"}`}, code: exitOK},
		{name: "golden differs", args: []string{"--demo", "--check", golden, "--call", `schema {"stream":"accounts"}`}, code: exitGolden,
			stderr: "1 golden transcripts in " + golden + " differ from this run (call 1)"},
		{name: "golden missing", args: []string{"--demo", "--check", filepath.Join(golden, "nope"), "--call", "schema"}, code: exitFailure,
			stderr: "does not exist; create it with --record"},
		{name: "failure before mismatch", args: []string{"--demo", "--check", golden, "--call", `schema {"stream":"accounts"}`, "--call", "nope"}, code: exitFailure},
		{name: "mismatch before isError", args: []string{"--demo", "--check", golden, "--call", `schema {"stream":"accounts"}`, "--call", `query_records {"stream":"calendar_attendees"}`}, code: exitGolden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{cmdName}, tt.args...), nil, &stdout, &stderr)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, tt.code, stderr.String())
			}
			if tt.code == exitOK {
				return
			}
			lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
			last := lines[len(lines)-1]
			if !strings.HasPrefix(last, cmdName+": ") || !strings.Contains(last, tt.stderr) {
				t.Errorf("last stderr line %q, want %q", last, tt.stderr)
			}
		})
	}
}

// A signal (a cancelled context) stops the run with exit 1 and says so.
func TestRunInterrupted(t *testing.T) {
	isolate(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{cmdName, "--server", "hostile-mcp-never-started", "--call", "schema"}, nil, &stdout, &stderr)
	if code != exitFailure || !strings.Contains(stderr.String(), "interrupted while connecting") {
		t.Fatalf("exit %d, stderr %q; want 1 and an interruption", code, stderr.String())
	}
}
