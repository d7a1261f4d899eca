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
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/scripts/internal/benchbin"
	"github.com/pdpp-mcp/pdpp-mcp/scripts/internal/procstat"
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
	if err := cacheToken(root, double.URL(), double.Token(pdpptest.TokenClient)); err != nil {
		return err
	}
	args := []string{"--provider-url", double.URL(), "--cache-root", root, "--log-level", "error"}

	type result struct{ rss, held, hwm []int64 }
	res := make([]result, len(bins))
	errs := make([]int, len(bins))
	for range *runs {
		for i, b := range bins {
			p, err := start(b, args...)
			if err != nil {
				return err
			}
			n, err := battery(p, *calls)
			if err != nil {
				p.stop()
				return fmt.Errorf("%s: %w", b, err)
			}
			errs[i] = n
			rss, _, err := procstat.Memory(p.cmd.Process.Pid)
			if err != nil {
				p.stop()
				return err
			}
			time.Sleep(*idle) // the process idles, as between a host's bursts
			held, hwm, err := procstat.Memory(p.cmd.Process.Pid)
			p.stop()
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

// mb prints KiB as MB (10^6 bytes), as the issue reports RSS.
func mb(kib int64) string { return fmt.Sprintf("%.1f MB", float64(kib)*1024/1e6) }

var (
	streams = []string{"labels", "threads", "messages", "message_bodies", "attachments"}
	queries = []string{"Lisbon", "receipt", "offsite", "flight", "invoice", "meeting", "hotel", "the"}
)

// battery makes calls tool calls, repeating its sequence as needed, and
// returns how many answered with an error result.
func battery(p *proc, calls int) (errResults int, err error) {
	done := 0
	call := func(tool, args string) (gjson.Result, bool) {
		if done == calls {
			return gjson.Result{}, false
		}
		done++
		r, e := p.call(tool, args)
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

func cacheToken(root, providerURL, token string) error {
	c, err := credential.Open(root, providerURL)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(c.File), 0o700); err != nil {
		return err
	}
	body := `{"provider_url":"` + c.ProviderURL + `","scope":"pdpp:read","credential":{"access_token":"` + token + `","token_type":"Bearer"}}`
	return os.WriteFile(c.File, []byte(body), 0o600)
}

// proc is a running stdio pdpp-mcp spoken to in raw JSON lines.
type proc struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	stdin  io.WriteCloser
	stdout *bufio.Reader
	next   int
}

func start(bin string, args ...string) (*proc, error) {
	cmd := exec.Command(bin, args...)
	p := &proc{cmd: cmd, stderr: &bytes.Buffer{}}
	cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p.stdout = bufio.NewReaderSize(out, 1<<20)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	a, err := p.roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench-rss","version":"0"}}}`)
	if err == nil && !gjson.Get(a, "result.protocolVersion").Exists() {
		err = fmt.Errorf("%s: initialize answered %.200s", bin, a)
	}
	if err == nil {
		_, err = io.WriteString(p.stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	}
	if err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

func (p *proc) roundTrip(line string) (string, error) {
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		return "", fmt.Errorf("write: %w (stderr: %s)", err, p.stderr)
	}
	a, err := p.stdout.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("read: %w (stderr: %s)", err, p.stderr)
	}
	return a, nil
}

// call makes one tools/call and returns its result.
func (p *proc) call(tool, args string) (gjson.Result, error) {
	p.next++
	a, err := p.roundTrip(`{"jsonrpc":"2.0","id":` + strconv.Itoa(p.next) + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`)
	if err != nil {
		return gjson.Result{}, err
	}
	r := gjson.Get(a, "result")
	if gjson.Get(a, "id").Int() != int64(p.next) || !r.Exists() {
		return gjson.Result{}, errors.New(tool + ": unexpected answer: " + a[:min(len(a), 300)])
	}
	return r, nil
}

func (p *proc) stop() {
	_ = p.stdin.Close()
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}
