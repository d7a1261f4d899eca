// Command bench-memory measures the peak resident memory of a pdpp-mcp
// process under two loads from a hostile loopback resource server:
//
//   - large: N concurrent query_records calls, each answered with a body just
//     under the 16 MiB response cap (default N=30; target: peak RSS < 400 MB);
//   - ordinary: N concurrent calls answered with a small page after 20 ms
//     (default N=200; target: peak RSS < 64 MB).
//
// It builds ./cmd/pdpp-mcp (or runs -bin), caches a scoped credential in a
// temporary directory, drives the binary over stdio with the Go MCP SDK
// client, and reads the peak (VmHWM) from /proc at the end. Linux only.
//
//	go run ./scripts/bench-memory                  # both scenarios
//	go run ./scripts/bench-memory -bin /tmp/old-pdpp-mcp -scenario large
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/scripts/internal/benchbin"
	"github.com/pdpp-mcp/pdpp-mcp/scripts/internal/procstat"
	"github.com/pdpp-mcp/pdpp-mcp/scripts/internal/stdioproc"
)

const token = "bench_client_token_5e1f0c2a9d8b"

func main() {
	bin := flag.String("bin", "", "pdpp-mcp binary to measure (default: build ./cmd/pdpp-mcp)")
	scenario := flag.String("scenario", "both", "large, ordinary or both")
	large := flag.Int("large", 30, "concurrent maximum-size calls")
	ordinary := flag.Int("ordinary", 200, "concurrent ordinary calls")
	flag.Parse()
	if err := run(*bin, *scenario, *large, *ordinary); err != nil {
		fmt.Fprintln(os.Stderr, "bench-memory:", err)
		os.Exit(1)
	}
}

func run(bin, scenario string, nLarge, nOrdinary int) error {
	tmp, err := os.MkdirTemp("", "bench-memory")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if bin, err = benchbin.Binary(bin, tmp); err != nil {
		return err
	}
	url, stop, err := serveHostile()
	if err != nil {
		return err
	}
	defer stop()
	if err := stdioproc.CacheToken(filepath.Join(tmp, "cache"), url, token); err != nil {
		return err
	}
	if scenario == "large" || scenario == "both" {
		if err := measure(bin, url, filepath.Join(tmp, "cache"), "large", "big", nLarge); err != nil {
			return err
		}
	}
	if scenario == "ordinary" || scenario == "both" {
		if err := measure(bin, url, filepath.Join(tmp, "cache"), "ordinary", "small", nOrdinary); err != nil {
			return err
		}
	}
	return nil
}

// serveHostile starts the loopback RS: a client-token schema, a stream whose
// page is just under the response cap, and a small slow page.
func serveHostile() (string, func(), error) {
	big := bigPage(16<<20 - 64<<10)
	small := []byte(`{"object":"list","has_more":false,"data":[` + records(5, 200) + `]}`)
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/schema", func(w http.ResponseWriter, _ *http.Request) {
		write(w, []byte(`{"object":"schema","bearer":{"token_kind":"client","scope":"grant"},"connectors":[],"streams":[]}`))
	})
	mux.HandleFunc("/v1/streams/big/records", func(w http.ResponseWriter, _ *http.Request) { write(w, big) })
	mux.HandleFunc("/v1/streams/small/records", func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(20 * time.Millisecond) // an RS's own latency, so calls overlap
		write(w, small)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

func write(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

// bigPage is a records page of about size bytes: many mail-like records.
func bigPage(size int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"object":"list","has_more":false,"data":[`)
	one := len(records(1, 900)) + 1
	b.WriteString(records((size-100)/one, 900))
	b.WriteString(`]}`)
	return b.Bytes()
}

func records(n, bodyLen int) string {
	text := strings.Repeat("lorem ipsum dolor sit amet ", bodyLen/27+1)[:bodyLen]
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		id := fmt.Sprintf("r%07d", i)
		b.WriteString(`{"object":"record","id":"` + id + `","stream":"s","data":{"id":"` + id +
			`","subject":"Subject ` + id + `","received_at":"2026-04-06T14:58:03Z","body":"` + text + `"}}`)
	}
	return b.String()
}

func measure(bin, url, cacheRoot, name, stream string, n int) error {
	cmd := exec.Command(bin, "--provider-url", url, "--cache-root", cacheRoot, "--log-level", "error")
	cmd.Stderr = os.Stderr
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench-memory", Version: "v0"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return fmt.Errorf("%s: connect: %w", name, err)
	}
	defer cs.Close()
	start := time.Now()
	var (
		mu       sync.Mutex
		outcomes = map[string]int{}
		wg       sync.WaitGroup
	)
	for range n {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
			defer cancel()
			res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "query_records", Arguments: map[string]any{"stream": stream}})
			key := "ok"
			switch {
			case err != nil:
				key = "no answer: " + err.Error()
			case res.IsError:
				key = "error " + firstField(res)
			}
			mu.Lock()
			outcomes[key]++
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	peak, err := vmHWM(cmd.Process.Pid)
	if err != nil {
		return err
	}
	fmt.Printf("%-8s calls=%d peak_rss=%.1f MB wall=%s outcomes=%v\n", name, n, float64(peak)/1e6, elapsed.Round(time.Millisecond), outcomes)
	return nil
}

func firstField(res *mcp.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return ""
	}
	line, _, _ := strings.Cut(tc.Text, "\n")
	f := strings.Fields(line)
	if len(f) > 1 {
		return f[1]
	}
	return line
}

// vmHWM reads the process's peak resident set size in bytes.
func vmHWM(pid int) (int64, error) {
	_, hwm, err := procstat.Memory(pid)
	return hwm * 1024, err
}
