package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets testscript run the test binary as the pdpptest command.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"pdpptest": func() { os.Exit(run(context.Background(), os.Args, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs testdata/script/*.txtar: usage errors and their exit codes.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Dir: "testdata/script", RequireExplicitExec: true})
}

// TestRunServesUntilCancelled starts the command on each dataset, reads the
// URL and client token it prints, calls the server with them, then interrupts it.
func TestRunServesUntilCancelled(t *testing.T) {
	for _, name := range []string{"gmail", "demo"} {
		t.Run(name, func(t *testing.T) { serveOnce(t, name) })
	}
}

func serveOnce(t *testing.T, name string) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := run(ctx, []string{"pdpptest", "--dataset", name, "--addr", "127.0.0.1:0"}, outW, io.Discard)
		outW.Close()
		done <- code
	}()

	// Every line fits 80 columns, through the end of the curl example.
	printed := map[string]string{}
	sc := bufio.NewScanner(outR)
	for sc.Scan() {
		line := sc.Text()
		if n := utf8.RuneCountInString(line); n > 80 {
			t.Errorf("%d columns: %q", n, line)
		}
		if key, value, _ := strings.Cut(line, " "); key != "" {
			printed[key] = strings.TrimSpace(value)
		}
		if strings.Contains(line, "/v1/schema?view=compact") {
			break
		}
	}
	for _, k := range []string{"url", "dataset", "owner", "client", "mcp_package", "revoked", "expired", "unknown", "try"} {
		if printed[k] == "" {
			t.Errorf("stdout has no %q line: %v", k, printed)
		}
	}
	if printed["dataset"] != name {
		t.Errorf("dataset line = %q, want %q", printed["dataset"], name)
	}
	go func() { _, _ = io.Copy(io.Discard, outR) }()

	req, err := http.NewRequest("GET", printed["url"]+"/v1/schema?view=compact", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+printed["client"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /v1/schema with the printed client token: status %d", resp.StatusCode)
	}

	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit code after interrupt = %d, want 0", code)
	}
}

func TestRunExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"unknown dataset", []string{"--dataset", "nope"}, 64},
		{"unknown flag", []string{"--bogus"}, 64},
		{"extra argument", []string{"serve"}, 64},
		{"address in use or invalid", []string{"--addr", "256.0.0.1:1"}, 1},
		{"help", []string{"-h"}, 0},
		{"version", []string{"--version"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := run(context.Background(), append([]string{"pdpptest"}, tc.args...), io.Discard, io.Discard); got != tc.want {
				t.Errorf("exit code = %d, want %d", got, tc.want)
			}
		})
	}
}
