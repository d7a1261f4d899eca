// Command bench-hosted load-tests `pdpp-mcp --http` on loopback: a closed
// loop of 1, 16 and 64 clients calling the aggregate tool through the hosted
// endpoint against pkg/pdpptest, each level bounded in time and in calls. It
// reports calls per second, p50/p99 latency, errors and the gateway's
// resident memory. A second table gives the gateway's CPU per request for
// each protocol revision and method (tools/call, tools/list, resources/read;
// initialize for the revisions that have it), and last it floods the
// endpoint with one bad token and counts the resource-server calls that
// caused.
//
//	go run ./scripts/bench-hosted                      # builds ./cmd/pdpp-mcp first
//	go run ./scripts/bench-hosted -calls 10000 -duration 10s -bin ./pdpp-mcp
//	go run ./scripts/bench-hosted -clients 16 -per-method 2000 -bin /tmp/old -bin2 ./pdpp-mcp
//
// With -bin2 the per-revision table is measured for both binaries in one
// interleaved run (A, B, A, B, … in rounds), which is how before/after
// numbers are taken on a loaded machine.
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
	"text/tabwriter"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/internal/cputime"
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
	bin2 := flag.String("bin2", "", "a second binary, measured interleaved with -bin in the per-revision table")
	perMethod := flag.Int("per-method", 2000, "requests per revision and method in the per-revision table (0 skips it)")
	rounds := flag.Int("rounds", 4, "interleaved rounds the per-method requests are split into")
	methodClients := flag.Int("method-clients", 4, "concurrency of the per-revision table")
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
	gw, err := startGateway(ctx, *bin, double.URL())
	if err != nil {
		return err
	}
	gws := []*gateway{gw}
	if *bin2 != "" {
		g2, err := startGateway(ctx, *bin2, double.URL())
		if err != nil {
			return err
		}
		gws = append(gws, g2)
	}

	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}, Timeout: 30 * time.Second}
	token := double.Token(pdpptest.TokenClient)
	call := aggregateCall("2025-11-25")

	// Warm-up: connections, verdict cache, capability cache.
	for _, g := range gws {
		if _, err := loop(client, g.url, token, call, 4, 200, 5*time.Second); err != nil {
			return err
		}
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "clients\tcalls\tcalls/s\tp50\tp99\terrors\tgateway CPU/call\tload+RS CPU/call\tRSS\tpeak RSS\t\n")
	for _, f := range strings.Split(*levels, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return fmt.Errorf("-clients: %q", f)
		}
		cpu0, self0 := procstat.CPU(gw.pid()), selfCPU()
		r, err := loop(client, gw.url, token, call, n, *calls, *duration)
		if err != nil {
			return err
		}
		perCall := (procstat.CPU(gw.pid()) - cpu0) / time.Duration(r.calls)
		selfPerCall := (selfCPU() - self0) / time.Duration(r.calls)
		rss, peak := memory(gw.pid())
		fmt.Fprintf(tw, "%d\t%d\t%.0f\t%s\t%s\t%d\t%dµs\t%dµs\t%s\t%s\t\n", n, r.calls, float64(r.calls)/r.elapsed.Seconds(),
			ms(pct(r.lat, 50)), ms(pct(r.lat, 99)), r.errors, perCall.Microseconds(), selfPerCall.Microseconds(), rss, peak)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	if *perMethod > 0 {
		if err := byRevision(client, gws, token, *perMethod, max(*rounds, 1), *methodClients); err != nil {
			return err
		}
	}

	double.ResetRequests()
	bad := double.Token(pdpptest.TokenUnknown)
	r, err := loop(client, gw.url, bad, call, 16, *flood, time.Minute)
	if err != nil {
		return err
	}
	fmt.Printf("\nbad-token flood: %d requests (16 clients), %d got 401, %d resource-server calls, %.0f requests/s\n",
		r.calls, r.status[401], len(double.Requests()), float64(r.calls)/r.elapsed.Seconds())
	return nil
}

// gateway is one pdpp-mcp --http process.
type gateway struct {
	bin string
	cmd *exec.Cmd
	url string
}

func (g *gateway) pid() int { return g.cmd.Process.Pid }

func startGateway(ctx context.Context, bin, provider string) (*gateway, error) {
	cmd := exec.CommandContext(ctx, bin, "--http", "127.0.0.1:0", "--provider-url", provider,
		"--access-log=false", "--log-level", "warn", "--max-in-flight-per-token", "128")
	cmd.Env = append(os.Environ(), "PDPP_OWNER_TOKEN=", "PDPP_OWNER_SESSION_COOKIE=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	context.AfterFunc(ctx, func() { _ = cmd.Wait() })
	url, err := waitURL(stderr)
	if err != nil {
		_ = cmd.Process.Kill()
		return nil, err
	}
	go func() { _, _ = io.Copy(os.Stderr, stderr) }()
	return &gateway{bin: bin, cmd: cmd, url: url}, nil
}

// request is one MCP request: its body and its MCP headers.
type request struct {
	body   []byte
	header map[string]string
}

// meta2026 is the _meta a 2026-07-28 request carries.
const meta2026 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"0"}}`

func mcpRequest(rev, method, name, params string) request {
	h := map[string]string{}
	if rev != "" {
		h["MCP-Protocol-Version"] = rev
	}
	if rev >= "2026-07-28" {
		h["Mcp-Method"] = method
		if name != "" {
			h["Mcp-Name"] = name
		}
		if params == "" {
			params = meta2026
		} else {
			params = meta2026 + "," + params
		}
	}
	return request{body: []byte(`{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + `}}`), header: h}
}

func aggregateCall(rev string) request {
	return mcpRequest(rev, "tools/call", "aggregate", `"name":"aggregate","arguments":{"stream":"messages","metric":"count"}`)
}

// byRevision prints the gateway's CPU per request for each protocol
// revision and method, for every binary, interleaved in rounds.
func byRevision(client *http.Client, gws []*gateway, token string, n, rounds, clients int) error {
	type row struct{ rev, method string }
	var rows []row
	reqs := map[row]request{}
	for _, rev := range []string{"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"} {
		rs := map[string]request{
			"tools/call":     aggregateCall(rev),
			"tools/list":     mcpRequest(rev, "tools/list", "", ""),
			"resources/read": mcpRequest(rev, "resources/read", "pdpp://stream/messages", `"uri":"pdpp://stream/messages"`),
		}
		if rev < "2026-07-28" {
			// initialize names its revision in params, not in the header.
			rs["initialize"] = mcpRequest("", "initialize", "", `"protocolVersion":"`+rev+`","capabilities":{},"clientInfo":{"name":"bench","version":"0"}`)
		} else {
			rs["server/discover"] = mcpRequest(rev, "server/discover", "", "")
		}
		for _, m := range []string{"tools/call", "tools/list", "resources/read", "initialize", "server/discover"} {
			if r, ok := rs[m]; ok {
				rows = append(rows, row{rev, m})
				reqs[row{rev, m}] = r
			}
		}
	}
	type total struct {
		cpu   time.Duration
		calls int
		lat   []time.Duration
		errs  int
	}
	totals := make([]map[row]*total, len(gws))
	for i := range gws {
		totals[i] = map[row]*total{}
		for _, r := range rows {
			totals[i][r] = &total{}
		}
	}
	for range rounds {
		for _, r := range rows {
			for i, g := range gws {
				cpu0 := procstat.CPU(g.pid())
				res, err := loop(client, g.url, token, reqs[r], clients, n/rounds, time.Minute)
				if err != nil {
					return fmt.Errorf("%s %s: %w", r.rev, r.method, err)
				}
				t := totals[i][r]
				t.cpu += procstat.CPU(g.pid()) - cpu0
				t.calls += res.calls
				t.lat = append(t.lat, res.lat...)
				t.errs += res.errors
			}
		}
	}
	fmt.Printf("\ngateway CPU per request by protocol revision and method (%d clients, %d rounds interleaved):\n", clients, rounds)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "revision\tmethod\t"
	for i := range gws {
		head += fmt.Sprintf("bin%d CPU/req\tbin%d p50\tbin%d errors\t", i+1, i+1, i+1)
	}
	if len(gws) == 2 {
		head += "bin2/bin1\t"
	}
	fmt.Fprintln(tw, head)
	for _, r := range rows {
		line := r.rev + "\t" + r.method + "\t"
		var per [2]float64
		for i := range gws {
			t := totals[i][r]
			slices.Sort(t.lat)
			p := float64(t.cpu.Microseconds()) / float64(max(t.calls, 1))
			if i < 2 {
				per[i] = p
			}
			line += fmt.Sprintf("%.0fµs\t%s\t%d\t", p, ms(pct(t.lat, 50)), t.errs)
		}
		if len(gws) == 2 {
			line += fmt.Sprintf("%.2f\t", per[1]/per[0])
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for i, g := range gws {
		fmt.Printf("bin%d: %s\n", i+1, g.bin)
	}
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
func loop(client *http.Client, url, token string, rq request, n, max int, d time.Duration) (*result, error) {
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
				req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(rq.body))
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				for k, v := range rq.header {
					req.Header.Set(k, v)
				}
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
				if err != nil || resp.StatusCode != 200 || bytes.Contains(b, []byte(`"isError":true`)) ||
					bytes.HasPrefix(b, []byte(`{"jsonrpc":"2.0","id":1,"error"`)) {
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
// double) has used (0 where the system does not say, as procstat.CPU).
func selfCPU() time.Duration {
	d, _ := cputime.Self()
	return d
}

// memory reads VmRSS and VmHWM of pid, formatted.
func memory(pid int) (rss, peak string) {
	r, h, err := procstat.Memory(pid)
	if err != nil {
		return "n/a", "n/a"
	}
	return fmt.Sprintf("%.1f MiB", float64(r)/1024), fmt.Sprintf("%.1f MiB", float64(h)/1024)
}
