// Command scaleout runs the hosted gateway scaled out behind a real load
// balancer, all on loopback: the RS double (pkg/pdpptest) in this process,
// three `pdpp-mcp --http` replicas, and HAProxy in front of them with health
// checks on /readyz and layer-7 retries (every tool is a read-only GET on the
// RS, so a call may be retried on another replica without changing any
// effect). A bounded closed-loop load of aggregate calls runs through
// HAProxy; part way through, one replica is killed (SIGKILL, no drain). The
// run reports calls sent, answered, retried by HAProxy and failed, per
// replica as well, and exits 1 if any call failed.
//
//	go run ./scripts/scaleout -bin bin/pdpp-mcp -haproxy /usr/sbin/haproxy
//
// scripts/scaleout/run.sh builds the binary and finds HAProxy, which it
// expects installed (.ci/run installs it in CI).
package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "scaleout:", err)
		os.Exit(1)
	}
}

type replica struct {
	name string
	addr string
	cmd  *exec.Cmd
	done chan struct{}
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func run() error {
	bin := flag.String("bin", "bin/pdpp-mcp", "pdpp-mcp binary")
	haproxy := flag.String("haproxy", "haproxy", "HAProxy binary")
	replicas := flag.Int("replicas", 3, "gateway replicas")
	clients := flag.Int("clients", 16, "concurrent clients")
	calls := flag.Int("calls", 6000, "tool calls to send, at most")
	duration := flag.Duration("duration", 30*time.Second, "load time, at most")
	killAt := flag.Float64("kill-at", 0.33, "kill one replica after this fraction of -calls")
	flag.Parse()

	tmp, err := os.MkdirTemp("", "scaleout-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	double, err := pdpptest.Start(pdpptest.Options{})
	if err != nil {
		return err
	}
	defer double.Close()

	lbAddr, err := freeAddr()
	if err != nil {
		return err
	}
	statsAddr, err := freeAddr()
	if err != nil {
		return err
	}
	public := "http://" + lbAddr

	var reps []*replica
	defer func() {
		for _, r := range reps {
			_ = r.cmd.Process.Signal(syscall.SIGTERM)
			<-r.done
		}
	}()
	for i := range *replicas {
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		r := &replica{name: fmt.Sprintf("gw%d", i+1), addr: addr, done: make(chan struct{})}
		r.cmd = exec.Command(*bin, "--http", addr, "--provider-url", double.URL(), "--public-url", public,
			"--access-log=false", "--log-level", "warn", "--max-in-flight-per-token", "128")
		r.cmd.Env = append(os.Environ(), "PDPP_OWNER_TOKEN=", "PDPP_OWNER_SESSION_COOKIE=")
		r.cmd.Stderr = os.Stderr
		if err := r.cmd.Start(); err != nil {
			return err
		}
		go func() { _ = r.cmd.Wait(); close(r.done) }()
		reps = append(reps, r)
	}
	for _, r := range reps {
		if err := waitOK("http://"+r.addr+"/readyz", 20*time.Second); err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
	}

	// Retries go to another server (redispatch); bodies are small and
	// buffered, which layer-7 retries need.
	var servers strings.Builder
	for _, r := range reps {
		fmt.Fprintf(&servers, "    server %s %s check inter 500ms fall 2 rise 2\n", r.name, r.addr)
	}
	cfg := fmt.Sprintf(`global
    maxconn 1024
defaults
    mode http
    timeout connect 2s
    timeout client 30s
    timeout server 30s
    retries 3
    option redispatch 1
    retry-on conn-failure empty-response junk-response response-timeout 502 503 504
frontend mcp
    bind %s
    option http-buffer-request
    default_backend gateways
frontend stats
    bind %s
    stats enable
    stats uri /stats
backend gateways
    balance roundrobin
    option httpchk GET /readyz
%s`, lbAddr, statsAddr, servers.String())
	cfgFile := filepath.Join(tmp, "haproxy.cfg")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		return err
	}
	lb := exec.Command(*haproxy, "-db", "-f", cfgFile)
	lb.Stdout, lb.Stderr = os.Stderr, os.Stderr
	if err := lb.Start(); err != nil {
		return fmt.Errorf("haproxy: %w", err)
	}
	defer func() { _ = lb.Process.Signal(syscall.SIGTERM); _ = lb.Wait() }()
	if err := waitOK("http://"+statsAddr+"/stats;csv", 10*time.Second); err != nil {
		return fmt.Errorf("haproxy: %w", err)
	}
	if err := waitUp(statsAddr, len(reps), 10*time.Second); err != nil {
		return err
	}

	url := public + "/mcp"
	token := double.Token(pdpptest.TokenClient)
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"aggregate","arguments":{"stream":"messages","metric":"count"}}}`)
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}, Timeout: 30 * time.Second}

	var sent, answered, failed atomic.Int64
	var firstErr atomic.Value
	killAfter := int64(float64(*calls) * *killAt)
	var killOnce sync.Once
	victim := reps[len(reps)/2]
	var killedAt time.Duration
	deadline := time.Now().Add(*duration)
	start := time.Now()
	var lat []time.Duration
	var latMu sync.Mutex
	var wg sync.WaitGroup
	for range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for {
				n := sent.Add(1)
				if n > int64(*calls) || time.Now().After(deadline) {
					sent.Add(-1)
					break
				}
				if n == killAfter {
					killOnce.Do(func() {
						killedAt = time.Since(start)
						_ = victim.cmd.Process.Kill()
					})
				}
				t0 := time.Now()
				err := call(client, url, token, body)
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				answered.Add(1)
				mine = append(mine, time.Since(t0))
			}
			latMu.Lock()
			lat = append(lat, mine...)
			latMu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(lat)

	stats, err := backendStats(statsAddr)
	if err != nil {
		return err
	}
	fmt.Printf("scale-out: %d replicas behind HAProxy (%s), %d clients, aggregate calls\n", len(reps), haproxyVersion(*haproxy), *clients)
	fmt.Printf("killed %s (SIGKILL) at %.1fs, after %d calls\n", victim.name, killedAt.Seconds(), killAfter)
	fmt.Printf("sent %d, answered %d, retried %d, redispatched %d, failed %d in %.1fs (%.0f calls/s, p50 %s, p99 %s)\n",
		sent.Load(), answered.Load(), stats["gateways"].retries, stats["gateways"].redispatches, failed.Load(),
		elapsed.Seconds(), float64(answered.Load())/elapsed.Seconds(), ms(pct(lat, 50)), ms(pct(lat, 99)))
	for _, r := range reps {
		s := stats[r.name]
		fmt.Printf("  %s: %d answered, status %s\n", r.name, s.responses, s.status)
	}
	// The RS double saw exactly one aggregate request per answered call
	// unless a retry re-sent one whose first try reached the RS.
	fmt.Printf("RS double: %d requests\n", len(double.Requests()))
	if f := failed.Load(); f > 0 {
		return fmt.Errorf("%d calls failed (first: %v)", f, firstErr.Load())
	}
	if sent.Load() != answered.Load() {
		return fmt.Errorf("sent %d, answered %d", sent.Load(), answered.Load())
	}
	return nil
}

func call(client *http.Client, url, token string, body []byte) error {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %.200s", resp.StatusCode, b)
	}
	if !bytes.Contains(b, []byte(`"result"`)) || bytes.Contains(b, []byte(`"isError":true`)) {
		return fmt.Errorf("not a tool result: %.200s", b)
	}
	return nil
}

func waitOK(url string, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %v", url, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

type stat struct {
	retries, redispatches, responses int
	status                           string
}

// backendStats reads HAProxy's CSV statistics: per server and for the
// backend, responses, retries (wretr) and redispatches (wredis).
func backendStats(addr string) (map[string]stat, error) {
	resp, err := http.Get("http://" + addr + "/stats;csv")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(b, []byte("# "))))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil || len(rows) < 2 {
		return nil, fmt.Errorf("stats: %v", err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	get := func(row []string, name string) int {
		i, ok := col[name]
		if !ok || i >= len(row) {
			return 0
		}
		n, _ := strconv.Atoi(row[i])
		return n
	}
	out := map[string]stat{}
	for _, row := range rows[1:] {
		if len(row) < 2 || row[0] != "gateways" {
			continue
		}
		name := row[1]
		if name == "BACKEND" {
			name = "gateways"
		}
		st := ""
		if i, ok := col["status"]; ok && i < len(row) {
			st = row[i]
		}
		out[name] = stat{retries: get(row, "wretr"), redispatches: get(row, "wredis"), responses: get(row, "hrsp_2xx"), status: st}
	}
	if _, ok := out["gateways"]; !ok {
		return nil, errors.New("stats: no gateways backend")
	}
	return out, nil
}

// waitUp waits until HAProxy's health checks mark n servers UP.
func waitUp(addr string, n int, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		s, err := backendStats(addr)
		up := 0
		if err == nil {
			for name, st := range s {
				if name != "gateways" && strings.HasPrefix(st.status, "UP") {
					up++
				}
			}
		}
		if up == n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("haproxy: %d of %d servers up (%v)", up, n, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func haproxyVersion(bin string) string {
	out, err := exec.Command(bin, "-v").Output()
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(out))
	if len(f) >= 3 {
		return "HAProxy " + f[2]
	}
	return strings.TrimSpace(string(out))
}

func pct(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[max(i-1, 0)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }
