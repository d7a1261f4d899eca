// Command bench-rss measures the resident memory a stdio pdpp-mcp holds
// after a battery of tool calls against pkg/pdpptest (the gmail dataset):
// every tool, global and per-stream schemas, pages of one to a hundred
// records and their next pages, counts, searches in every mode at small and
// large limits, and the fetches and field reads those searches lead to;
// 146 calls by default. Each binary runs the battery in fresh processes,
// interleaved, and the median of the runs is printed: VmRSS when the last
// answer has arrived, VmRSS once the process has then been idle for -idle
// (what it holds between a host's bursts of calls), and the peak (VmHWM).
//
//	go run ./scripts/bench-rss                                    # builds ./cmd/pdpp-mcp first
//	go run ./scripts/bench-rss -bin /tmp/old-pdpp-mcp -bin2 ./pdpp-mcp -runs 5
//
// Linux only (/proc).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/scripts/internal/benchbin"
	"github.com/pdpp-mcp/pdpp-mcp/scripts/internal/procstat"
	"github.com/pdpp-mcp/pdpp-mcp/scripts/internal/stdioproc"
)

func main() {
	if err := bench(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-rss:", err)
		os.Exit(1)
	}
}

func bench() error {
	bin := flag.String("bin", "", "pdpp-mcp binary (default: build ./cmd/pdpp-mcp)")
	bin2 := flag.String("bin2", "", "a second binary, run interleaved with -bin")
	calls := flag.Int("calls", 146, "tool calls in the battery")
	runs := flag.Int("runs", 3, "fresh processes per binary")
	idle := flag.Duration("idle", 2*time.Second, "idle time after the battery before the second reading")
	flag.Parse()

	tmp, err := os.MkdirTemp("", "bench-rss-")
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
	double, err := pdpptest.Start(pdpptest.Options{})
	if err != nil {
		return err
	}
	defer double.Close()
	root := filepath.Join(tmp, "cache")
	if err := stdioproc.CacheToken(root, double.URL(), double.Token(pdpptest.TokenClient)); err != nil {
		return err
	}
	args := []string{"--provider-url", double.URL(), "--cache-root", root, "--log-level", "error"}

	type result struct{ rss, held, hwm []int64 }
	res := make([]result, len(bins))
	errs := make([]int, len(bins))
	for range *runs {
		for i, b := range bins {
			p, err := stdioproc.Start(b, false, args...)
			if err == nil {
				err = p.Initialize("bench-rss")
			}
			if err != nil {
				if p != nil {
					_ = p.Stop()
				}
				return fmt.Errorf("%s: %w", b, err)
			}
			n, err := battery(p, *calls)
			if err != nil {
				_ = p.Stop()
				return fmt.Errorf("%s: %w", b, err)
			}
			errs[i] = n
			rss, _, err := procstat.Memory(p.Pid())
			if err != nil {
				_ = p.Stop()
				return err
			}
			time.Sleep(*idle) // the process idles, as between a host's bursts
			held, hwm, err := procstat.Memory(p.Pid())
			_ = p.Stop()
			if err != nil {
				return err
			}
			res[i].rss, res[i].held, res[i].hwm = append(res[i].rss, rss), append(res[i].held, held), append(res[i].hwm, hwm)
		}
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "binary\tRSS at the last answer\tRSS after %s idle\tpeak (VmHWM)\terror results\t\n", *idle)
	for i, b := range bins {
		r := res[i]
		for _, v := range [][]int64{r.rss, r.held, r.hwm} {
			slices.Sort(v)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t\n", b, mb(r.rss[len(r.rss)/2]), mb(r.held[len(r.held)/2]), mb(r.hwm[len(r.hwm)/2]), errs[i])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Printf("%d calls per run, %d runs per binary (median shown)\n", *calls, *runs)
	return nil
}

// mb prints KiB as MB (10^6 bytes).
func mb(kib int64) string { return fmt.Sprintf("%.1f MB", float64(kib)*1024/1e6) }

var (
	streams = []string{"labels", "threads", "messages", "message_bodies", "attachments"}
	queries = []string{"Lisbon", "receipt", "offsite", "flight", "invoice", "meeting", "hotel", "the"}
)

// battery makes calls tool calls, repeating its sequence as needed, and
// returns how many answered with an error result.
func battery(p *stdioproc.Proc, calls int) (errResults int, err error) {
	done := 0
	call := func(tool, args string) (gjson.Result, bool) {
		if done == calls {
			return gjson.Result{}, false
		}
		done++
		r, e := p.Tool(tool, args)
		if e != nil {
			err = e
			return gjson.Result{}, false
		}
		if r.Get("isError").Bool() {
			errResults++
		}
		return r, true
	}
	q := strconv.Quote
	for done < calls && err == nil {
		call("schema", `{}`)
		for _, s := range streams {
			call("schema", `{"stream":`+q(s)+`}`)
			call("schema", `{"stream":`+q(s)+`,"connection_id":"cin_gmail_personal"}`)
		}
		for _, s := range streams {
			r, ok := call("query_records", `{"stream":`+q(s)+`,"limit":5,"connection_id":"cin_gmail_personal"}`)
			if c := r.Get("structuredContent.data.next_cursor").Str; ok && c != "" {
				call("query_records", `{"stream":`+q(s)+`,"limit":5,"connection_id":"cin_gmail_personal","cursor":`+q(c)+`}`)
			}
			call("query_records", `{"stream":`+q(s)+`,"limit":25,"connection_id":"cin_gmail_work"}`)
			call("query_records", `{"stream":`+q(s)+`,"limit":100,"connection_id":"cin_gmail_personal"}`)
			call("aggregate", `{"stream":`+q(s)+`,"metric":"count","connection_id":"cin_gmail_personal"}`)
		}
		call("aggregate", `{"stream":"messages","metric":"count","group_by":"has_attachments","connection_id":"cin_gmail_work"}`)
		for _, word := range queries {
			for _, mode := range []string{"lexical", "semantic", "hybrid"} {
				limit := 10
				if mode == "lexical" {
					limit = 100
				}
				r, ok := call("search", `{"q":`+q(word)+`,"mode":"`+mode+`","limit":`+strconv.Itoa(limit)+`}`)
				if !ok {
					break
				}
				txt := r.Get("content.0.text").Str
				if id := firstFetchID(txt); id != "" {
					call("fetch", `{"id":`+q(id)+`}`)
				}
				if a := readArgs(txt); a != "" {
					call("read_record_field", a)
				}
			}
		}
	}
	return errResults, err
}

func firstFetchID(txt string) string {
	_, rest, ok := strings.Cut(txt, "first_fetch_id=")
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(rest, " ")
	id, _, _ = strings.Cut(id, "\n")
	return id
}

func readArgs(txt string) string {
	_, rest, ok := strings.Cut(txt, "read_record_field args=")
	if !ok {
		return ""
	}
	a, _, _ := strings.Cut(rest, "\n")
	return a
}
