// Command bench-stdio measures what a stdio pdpp-mcp adds to the resource
// server's own time, per tool. In one interleaved run against pkg/pdpptest
// (the gmail dataset) it makes, for every tool and round: the RS request the
// tool maps to, straight from this process over a keep-alive connection (the
// floor), then the same tools/call written as one line to each pdpp-mcp
// binary's stdin and timed until its answer line is read. It prints per
// tool the floor, each binary's p50/p90, the added time (p50 of the call
// minus p50 of the floor), the answer's size and the binary's CPU per call.
//
//	go run ./scripts/bench-stdio                             # builds ./cmd/pdpp-mcp first
//	go run ./scripts/bench-stdio -rounds 200 -bin /tmp/old-pdpp-mcp -bin2 ./pdpp-mcp
//	go run ./scripts/bench-stdio -stdin socket   # stdin a socketpair, as Node-based hosts give
//
// The client side is raw JSON lines, so no client library's decoding is in
// the numbers. CPU is the process's on-CPU time from /proc (Linux
// scheduler counters, nanoseconds), summed over a tool's calls.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/scripts/internal/benchbin"
	"github.com/pdpp-mcp/pdpp-mcp/scripts/internal/procstat"
	"github.com/pdpp-mcp/pdpp-mcp/scripts/internal/stdioproc"
)

func main() {
	if err := bench(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-stdio:", err)
		os.Exit(1)
	}
}

// tool is one measured call and the RS request it makes.
type tool struct {
	name string
	args string // the arguments object
	path string
	q    rs.Query
}

var tools = []tool{
	{"schema", `{}`, "/v1/schema", rs.Query{{Key: "view", Value: "compact"}}},
	{"query_records", `{"stream":"messages","limit":25}`, "/v1/streams/messages/records", rs.Query{{Key: "limit", Value: "25"}}},
	{"aggregate", `{"stream":"messages","metric":"count","group_by":"has_attachments"}`, "/v1/streams/messages/aggregate",
		rs.Query{{Key: "metric", Value: "count"}, {Key: "group_by", Value: "has_attachments"}}},
	{"search", `{"q":"Lisbon"}`, "/v1/search", rs.Query{{Key: "q", Value: "Lisbon"}}},
	{"fetch", `{"id":"cin_gmail_personal/messages:p_msg_003"}`, "/v1/streams/messages/records/p_msg_003",
		rs.Query{{Key: "connection_id", Value: "cin_gmail_personal"}}},
	{"read_record_field", `{"id":"cin_gmail_personal/message_bodies:p_msg_002_body","field_path":"body_text"}`,
		"/v1/streams/message_bodies/records/p_msg_002_body/field-window",
		rs.Query{{Key: "connection_id", Value: "cin_gmail_personal"}, {Key: "field", Value: "body_text"}}},
}

func bench() error {
	rounds := flag.Int("rounds", 200, "calls per tool and binary")
	bin := flag.String("bin", "", "pdpp-mcp binary (default: build ./cmd/pdpp-mcp)")
	bin2 := flag.String("bin2", "", "a second binary, measured interleaved with -bin")
	only := flag.String("tools", "", "comma-separated tools to measure (default: all six)")
	stdinKind := flag.String("stdin", "pipe", "what the binaries read stdin from: pipe (as Go and Python hosts give) or socket (a socketpair, as libuv and so Node-based hosts give)")
	flag.Parse()
	if *stdinKind != "pipe" && *stdinKind != "socket" {
		return fmt.Errorf("-stdin %q: want pipe or socket", *stdinKind)
	}

	tmp, err := os.MkdirTemp("", "bench-stdio-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if *bin, err = benchbin.Binary(*bin, tmp); err != nil {
		return err
	}
	bins := []string{*bin}
	if *bin2 != "" {
		bins = append(bins, *bin2)
	}
	measured := tools
	if *only != "" {
		measured = nil
		for _, t := range tools {
			if slices.Contains(strings.Split(*only, ","), t.name) {
				measured = append(measured, t)
			}
		}
	}

	double, err := pdpptest.Start(pdpptest.Options{})
	if err != nil {
		return err
	}
	defer double.Close()
	token := double.Token(pdpptest.TokenClient)
	root := filepath.Join(tmp, "cache")
	if err := stdioproc.CacheToken(root, double.URL(), token); err != nil {
		return err
	}
	floor, err := rs.New(rs.Options{BaseURL: double.URL(), Token: func() string { return token }})
	if err != nil {
		return err
	}
	defer floor.CloseIdleConnections()

	var procs []*stdioproc.Proc
	for _, b := range bins {
		p, err := stdioproc.Start(b, *stdinKind == "socket", "--provider-url", double.URL(), "--cache-root", root, "--log-level", "error")
		if err != nil {
			return fmt.Errorf("%s: %w", b, err)
		}
		defer p.Stop()
		if err := p.Initialize("bench-stdio"); err != nil {
			return fmt.Errorf("%s: %w", b, err)
		}
		procs = append(procs, p)
	}

	type sample struct {
		lat   []time.Duration
		cpu   time.Duration
		bytes int
	}
	floors := map[string][]time.Duration{}
	per := make([]map[string]*sample, len(procs))
	for i := range procs {
		per[i] = map[string]*sample{}
		for _, t := range measured {
			per[i][t.name] = &sample{}
		}
	}
	ctx := context.Background()
	// Warm-up: connections, the capability cache, the page cache.
	for range 5 {
		for _, t := range measured {
			if _, err := floor.Get(ctx, t.path, t.q); err != nil {
				return fmt.Errorf("%s floor: %w", t.name, err)
			}
			for _, p := range procs {
				if _, _, err := call(p, t); err != nil {
					return err
				}
			}
		}
	}
	// The floor is honest only if a call makes exactly the request the
	// floor makes (warm caches: no capability lookups left).
	for _, t := range measured {
		double.ResetRequests()
		if _, _, err := call(procs[0], t); err != nil {
			return err
		}
		reqs := double.Requests()
		if len(reqs) != 1 || reqs[0].Path != t.path || reqs[0].RawQuery != t.q.Encode() {
			fmt.Fprintf(os.Stderr, "bench-stdio: warning: %s made %d RS requests (%+v), the floor makes GET %s?%s\n",
				t.name, len(reqs), reqs, t.path, t.q.Encode())
		}
	}
	for range *rounds {
		for _, t := range measured {
			t0 := time.Now()
			if _, err := floor.Get(ctx, t.path, t.q); err != nil {
				return fmt.Errorf("%s floor: %w", t.name, err)
			}
			floors[t.name] = append(floors[t.name], time.Since(t0))
			for i, p := range procs {
				cpu0 := procstat.RunTime(p.Pid())
				d, n, err := call(p, t)
				if err != nil {
					return err
				}
				s := per[i][t.name]
				s.cpu += procstat.RunTime(p.Pid()) - cpu0
				s.lat = append(s.lat, d)
				s.bytes = n
			}
		}
	}

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "tool\tRS floor p50\tp90\t"
	for i := range procs {
		head += fmt.Sprintf("bin%d p50\tp90\tadded p50\tbytes\tCPU/call\t", i+1)
	}
	fmt.Fprintln(tw, head)
	for _, t := range measured {
		f := floors[t.name]
		slices.Sort(f)
		line := fmt.Sprintf("%s\t%s\t%s\t", t.name, ms(pct(f, 50)), ms(pct(f, 90)))
		for i := range procs {
			s := per[i][t.name]
			slices.Sort(s.lat)
			line += fmt.Sprintf("%s\t%s\t%s\t%d\t%dµs\t", ms(pct(s.lat, 50)), ms(pct(s.lat, 90)), ms(pct(s.lat, 50)-pct(f, 50)),
				s.bytes, s.cpu.Microseconds()/int64(len(s.lat)))
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Printf("%d rounds, stdin a %s; ", *rounds, *stdinKind)
	for i, b := range bins {
		fmt.Printf("bin%d: %s  ", i+1, b)
	}
	fmt.Println()
	return nil
}

// call makes one tools/call and returns its round-trip time and the size of
// the answer line.
func call(p *stdioproc.Proc, t tool) (time.Duration, int, error) {
	params := stdioproc.ToolParams(t.name, t.args)
	t0 := time.Now()
	a, err := p.RoundTrip("tools/call", params)
	d := time.Since(t0)
	if err != nil {
		return 0, 0, err
	}
	if r, err := stdioproc.Result("tools/call", a); err != nil || r.Get("isError").Bool() {
		return 0, 0, errors.New(t.name + ": unexpected answer: " + a[:min(len(a), 300)])
	}
	return d, len(a), nil
}

func pct(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[max(i-1, 0)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }
