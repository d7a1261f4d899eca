// Command bench-startup measures the pdpp-mcp process: cold start (process
// spawn until the tools/list answer arrives, and until a first tool call is
// answered) against a running resource server and with --demo, and resident
// memory after a run of tool calls.
//
//	go run ./scripts/bench-startup            # builds ./cmd/pdpp-mcp first
//	go run ./scripts/bench-startup -runs 50 -calls 1000 -bin ./pdpp-mcp
//	go run ./scripts/bench-startup -rs-delay 20ms   # a resource server 20 ms away
//
// The running resource server is pkg/pdpptest, started in this process on
// 127.0.0.1 with a cached client credential, as `pdpp connect` would leave it.
// Memory is read from /proc/<pid>/status (VmRSS now, VmHWM the peak), so the
// memory rows need Linux.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/scripts/internal/benchbin"
	"github.com/pdpp-mcp/pdpp-mcp/scripts/internal/procstat"
	"github.com/pdpp-mcp/pdpp-mcp/scripts/internal/stdioproc"
)

func main() {
	if err := benchmark(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-startup:", err)
		os.Exit(1)
	}
}

func benchmark() error {
	runs := flag.Int("runs", 30, "cold starts per mode (after one warm-up)")
	calls := flag.Int("calls", 1000, "tool calls before reading resident memory")
	bin := flag.String("bin", "", "pdpp-mcp binary to measure (default: build ./cmd/pdpp-mcp)")
	delay := flag.Duration("rs-delay", 0, "latency added to every resource server answer (e.g. 20ms)")
	flag.Parse()

	tmp, err := os.MkdirTemp("", "bench-startup-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if *bin, err = benchbin.Binary(*bin, tmp); err != nil {
		return err
	}

	srv, err := pdpptest.Start(pdpptest.Options{})
	if err != nil {
		return err
	}
	defer srv.Close()
	rsURL := srv.URL()
	if *delay > 0 {
		slow, err := delayed(rsURL, *delay)
		if err != nil {
			return err
		}
		defer slow.Close()
		rsURL = slow.URL
	}
	root := filepath.Join(tmp, "cache")
	if err := stdioproc.CacheToken(root, rsURL, srv.Token(pdpptest.TokenClient)); err != nil {
		return err
	}

	modes := []struct {
		name string
		args []string
	}{
		{"running RS", []string{"--provider-url", rsURL, "--cache-root", root, "--log-level", "error"}},
		{"--demo", []string{"--demo", "--log-level", "error"}},
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "mode\tcold start p50\tp90\tmin\tmax\tfirst tool call p50\tp90\truns\t\n")
	for _, m := range modes {
		var list, first []time.Duration
		for i := range *runs + 1 {
			l, f, err := coldStart(*bin, m.args)
			if err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
			if i > 0 { // the first run warms the page cache
				list, first = append(list, l), append(first, f)
			}
		}
		slices.Sort(list)
		slices.Sort(first)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", m.name, ms(pct(list, 50)), ms(pct(list, 90)), ms(list[0]), ms(list[len(list)-1]),
			ms(pct(first, 50)), ms(pct(first, 90)), len(list))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Println()
	tw = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "mode\tRSS after start\tRSS after calls\tpeak (VmHWM)\tcalls\terror results\t\n")
	for _, m := range modes {
		r, err := memory(*bin, m.args, *calls)
		if err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t\n", m.name, mib(r.start), mib(r.end), mib(r.peak), *calls, r.errors)
	}
	return tw.Flush()
}

// delayed fronts the resource server at target with a proxy that waits d
// before passing each request on, like a resource server across a network.
func delayed(target string, d time.Duration) (*httptest.Server, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			proxy.ServeHTTP(w, r)
		case <-r.Context().Done():
		}
	})), nil
}

// pct is the p-th percentile of sorted durations (nearest rank).
func pct(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p + 99) / 100
	return sorted[max(i-1, 0)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
func mib(kb int64) string       { return fmt.Sprintf("%.1f MiB", float64(kb)/1024) }

// coldStart measures spawn until the tools/list answer, and spawn until the
// answer to a first tools/call (schema), which includes whatever the server
// defers past the handshake.
func coldStart(bin string, args []string) (list, first time.Duration, err error) {
	t0 := time.Now()
	p, err := stdioproc.Start(bin, false, args...)
	if err != nil {
		return 0, 0, err
	}
	defer func() {
		if stopErr := p.Stop(); err == nil {
			err = stopErr
		}
	}()
	if err := p.Initialize("bench-startup"); err != nil {
		return 0, 0, err
	}
	if _, err := p.Call("tools/list", `{}`); err != nil {
		return 0, 0, err
	}
	list = time.Since(t0)
	res, err := p.Tool("schema", `{}`)
	if err != nil {
		return 0, 0, err
	}
	if res.Get("isError").Bool() {
		return 0, 0, fmt.Errorf("schema call failed: %s", res.Get("content.0.text").String())
	}
	return list, time.Since(t0), nil
}

type memResult struct {
	start, end, peak int64 // KiB
	errors           int
}

func memory(bin string, args []string, calls int) (memResult, error) {
	var r memResult
	p, err := stdioproc.Start(bin, false, args...)
	if err != nil {
		return r, err
	}
	defer p.Stop()
	if err := p.Initialize("bench-startup"); err != nil {
		return r, err
	}
	if _, err := p.Call("tools/list", `{}`); err != nil {
		return r, err
	}
	if r.start, _, err = procstat.Memory(p.Pid()); err != nil {
		return r, err
	}
	// Pick a stream and connection from the schema tool itself, so the mix
	// works with whatever dataset the server reads.
	sch, err := p.Tool("schema", `{}`)
	if err != nil {
		return r, err
	}
	conn := sch.Get("structuredContent.data.connectors.0")
	scope := ""
	if cid := conn.Get("granted_connections.0.connection_id").String(); cid != "" {
		scope = `,"connection_id":` + strconv.Quote(cid)
	}
	// Use the first stream that can be counted, so every call in the mix is
	// one that succeeds.
	stream := ""
	for _, st := range conn.Get("streams.#.name").Array() {
		res, err := p.Tool("aggregate", `{"stream":`+strconv.Quote(st.String())+`,"metric":"count"`+scope+`}`)
		if err != nil {
			return r, err
		}
		if !res.Get("isError").Bool() {
			stream = st.String()
			break
		}
	}
	if stream == "" {
		return r, errors.New("no stream of the schema answers aggregate count")
	}
	mix := []string{
		`{"name":"schema","arguments":{}}`,
		`{"name":"schema","arguments":{"stream":` + strconv.Quote(stream) + scope + `}}`,
		`{"name":"query_records","arguments":{"stream":` + strconv.Quote(stream) + `,"limit":5` + scope + `}}`,
		`{"name":"aggregate","arguments":{"stream":` + strconv.Quote(stream) + `,"metric":"count"` + scope + `}}`,
	}
	for i := range calls {
		res, err := p.Call("tools/call", mix[i%len(mix)])
		if err != nil {
			return r, err
		}
		if res.Get("isError").Bool() {
			r.errors++
		}
	}
	r.end, r.peak, err = procstat.Memory(p.Pid())
	return r, err
}
