// Command bench-hosted load-tests `pdpp-mcp --http` on loopback: a closed
// loop of 1, 16 and 64 clients calling the aggregate tool through the hosted
// endpoint against pkg/pdpptest, each level bounded in time and in calls. It
// reports calls per second, p50/p99 latency, errors and the gateway's
// resident memory, then floods the endpoint with one bad token and counts the
// resource-server calls that caused.
//
//	go run ./scripts/bench-hosted                      # builds ./cmd/pdpp-mcp first
//	go run ./scripts/bench-hosted -calls 10000 -duration 10s -bin ./pdpp-mcp
//
// The gateway runs as its own process (so its memory is measured alone); the
// double and the load generator share this one. Memory is read from
// /proc/<pid>/status, so the RSS column needs Linux.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/scripts/internal/benchbin"
	"github.com/pdpp-mcp/pdpp-mcp/scripts/internal/procstat"
)

func main() {
	if err := bench(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-hosted:", err)
		os.Exit(1)
	}
}

func bench() error {
	calls := flag.Int("calls", 10000, "tool calls per concurrency level, at most")
	duration := flag.Duration("duration", 10*time.Second, "time per concurrency level, at most")
	flood := flag.Int("flood", 10000, "requests of the bad-token flood")
	levels := flag.String("clients", "1,16,64", "concurrency levels")
	bin := flag.String("bin", "", "pdpp-mcp binary (default: build ./cmd/pdpp-mcp)")
	flag.Parse()

	tmp, err := os.MkdirTemp("", "bench-hosted-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if *bin, err = benchbin.Binary(*bin, tmp); err != nil {
		return err
	}
	double, err := pdpptest.Start(pdpptest.Options{})
	if err != nil {
		return err
	}
	defer double.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, *bin, "--http", "127.0.0.1:0", "--provider-url", double.URL(),
		"--access-log=false", "--log-level", "warn", "--max-in-flight-per-token", "128")
	cmd.Env = append(os.Environ(), "PDPP_OWNER_TOKEN=", "PDPP_OWNER_SESSION_COOKIE=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	url, err := waitURL(stderr)
	if err != nil {
		return err
	}
	go func() { _, _ = io.Copy(os.Stderr, stderr) }()

	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}, Timeout: 30 * time.Second}
	token := double.Token(pdpptest.TokenClient)
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"aggregate","arguments":{"stream":"messages","metric":"count"}}}`)

	// Warm-up: connections, verdict cache, capability cache.
	if _, err := loop(client, url, token, body, 4, 200, 5*time.Second); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "clients\tcalls\tcalls/s\tp50\tp99\terrors\tgateway CPU/call\tload+RS CPU/call\tRSS\tpeak RSS\t\n")
	for _, f := range strings.Split(*levels, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return fmt.Errorf("-clients: %q", f)
		}
		cpu0, self0 := procstat.CPU(cmd.Process.Pid), selfCPU()
		r, err := loop(client, url, token, body, n, *calls, *duration)
		if err != nil {
			return err
		}
		perCall := (procstat.CPU(cmd.Process.Pid) - cpu0) / time.Duration(r.calls)
		selfPerCall := (selfCPU() - self0) / time.Duration(r.calls)
		rss, peak := memory(cmd.Process.Pid)
		fmt.Fprintf(tw, "%d\t%d\t%.0f\t%s\t%s\t%d\t%dµs\t%dµs\t%s\t%s\t\n", n, r.calls, float64(r.calls)/r.elapsed.Seconds(),
			ms(pct(r.lat, 50)), ms(pct(r.lat, 99)), r.errors, perCall.Microseconds(), selfPerCall.Microseconds(), rss, peak)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	double.ResetRequests()
	bad := double.Token(pdpptest.TokenUnknown)
	r, err := loop(client, url, bad, body, 16, *flood, time.Minute)
	if err != nil {
		return err
	}
	fmt.Printf("\nbad-token flood: %d requests (16 clients), %d got 401, %d resource-server calls, %.0f requests/s\n",
		r.calls, r.status[401], len(double.Requests()), float64(r.calls)/r.elapsed.Seconds())
	return nil
}

var servingRE = regexp.MustCompile(`serving hosted MCP at (\S+)`)

func waitURL(r io.Reader) (string, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
			return m[1], nil
		}
		fmt.Fprintln(os.Stderr, sc.Text())
	}
	return "", errors.New("pdpp-mcp exited before serving")
}

type result struct {
	calls, errors int
	elapsed       time.Duration
	lat           []time.Duration
	status        map[int]int
}

// loop runs n clients, each sending its next request when the previous
// answer is read, until max calls were sent or d has passed.
func loop(client *http.Client, url, token string, body []byte, n, max int, d time.Duration) (*result, error) {
	var sent atomic.Int64
	deadline := time.Now().Add(d)
	var mu sync.Mutex
	res := &result{status: map[int]int{}}
	var wg sync.WaitGroup
	start := time.Now()
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lat []time.Duration
			status := map[int]int{}
			errs := 0
			for sent.Add(1) <= int64(max) && time.Now().Before(deadline) {
				req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("MCP-Protocol-Version", "2025-11-25")
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					errs++
					continue
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				lat = append(lat, time.Since(t0))
				status[resp.StatusCode]++
				if err != nil || resp.StatusCode != 200 || bytes.Contains(b, []byte(`"isError":true`)) {
					errs++
				}
			}
			mu.Lock()
			res.lat = append(res.lat, lat...)
			res.errors += errs
			for k, v := range status {
				res.status[k] += v
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.calls = len(res.lat)
	slices.Sort(res.lat)
	if res.calls == 0 {
		return nil, errors.New("no call completed")
	}
	return res, nil
}

func pct(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p + 99) / 100
	return sorted[max(i-1, 0)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }

// selfCPU is the CPU time this process (the load generator and the RS
// double) has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// memory reads VmRSS and VmHWM of pid, formatted.
func memory(pid int) (rss, peak string) {
	r, h, err := procstat.Memory(pid)
	if err != nil {
		return "n/a", "n/a"
	}
	return fmt.Sprintf("%.1f MiB", float64(r)/1024), fmt.Sprintf("%.1f MiB", float64(h)/1024)
}
