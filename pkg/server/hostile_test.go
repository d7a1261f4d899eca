package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/testlog"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

const hostileToken = "tok/HOSTILE_SERVER_0c9e4b7a2f1d"

// hostileServer serves the tools over an RS whose every answer is h, and
// returns a client session and the captured frames the server wrote.
func hostileServer(t *testing.T, h http.HandlerFunc, budget *rs.Budget) (*mcp.ClientSession, *testlog.Buffer) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return pipeSession(t, srv.URL, budget)
}

// pipeSession serves the tools, reading the RS at rsURL with hostileToken,
// over newline-delimited JSON on pipes (as RunStdio reads and writes it),
// and returns a client session and a copy of every byte the server wrote.
func pipeSession(t *testing.T, rsURL string, budget *rs.Budget) (*mcp.ClientSession, *testlog.Buffer) {
	t.Helper()
	client, err := rs.New(rs.Options{BaseURL: rsURL, Token: func() string { return hostileToken }, Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.CloseIdleConnections)
	s := New(Options{RS: client, ProviderURL: rsURL})
	var frames testlog.Buffer
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	st := &mcp.IOTransport{Reader: c2sR, Writer: teeCloser{io.MultiWriter(&frames, s2cW), s2cW}}
	ct := &mcp.IOTransport{Reader: s2cR, Writer: c2sW, MaxLineLength: -1}
	ss, err := s.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "pipe-test", Version: "v0"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, &frames
}

type teeCloser struct {
	io.Writer
	io.Closer
}

func rsAnswer(status int, body []byte, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}
}

// callTool calls a tool and fails the test when no answer comes within a
// minute (the SDK drops answers it cannot encode).
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return res
}

// callRecords is callTool of query_records on the stream messages.
func callRecords(t *testing.T, cs *mcp.ClientSession) *mcp.CallToolResult {
	t.Helper()
	return callTool(t, cs, "query_records", map[string]any{"stream": "messages"})
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func jsonU(s string) string {
	var b strings.Builder
	for _, r := range s {
		h := strconv.FormatInt(int64(r), 16)
		b.WriteString(`\u` + strings.Repeat("0", 4-len(h)) + h)
	}
	return b.String()
}

func TestHostileRSThroughTools(t *testing.T) {
	escTok := strings.ReplaceAll(hostileToken, "/", `\/`)
	list := func(records string) []byte {
		return []byte(`{"object":"list","has_more":false,"data":[` + records + `]}`)
	}
	tests := []struct {
		name      string
		h         http.HandlerFunc
		wantError bool
		want      string // in the text
	}{
		{"16 MB of [", rsAnswer(200, bytes.Repeat([]byte("["), 16<<20-1)), true, "rs_invalid_response"},
		{"record nested 10,000 deep", rsAnswer(200, list(`{"id":"r","data":{"x":`+strings.Repeat("[", 10000)+strings.Repeat("]", 10000)+`}}`)), true, "rs_invalid_response"},
		{"empty envelope", rsAnswer(200, []byte(`{}`)), true, "rs_invalid_response"},
		{"data is a string", rsAnswer(200, []byte(`{"object":"list","data":"oops"}`)), true, "rs_invalid_response"},
		{"redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://127.0.0.1:1/steal", http.StatusTemporaryRedirect)
		}, true, "rs_redirect"},
		{"token u-escaped in message", rsAnswer(401, []byte(`{"error":{"code":"bad","message":"got `+jsonU(hostileToken)+`"}}`)), true, "code=bad"},
		{"token in Request-Id on 400", rsAnswer(400, []byte(`{"error":{"code":"bad","message":"x"}}`), "Request-Id", hostileToken), true, "code=bad"},
		{"token in Request-Id on 200", rsAnswer(200, list(`{"id":"r1","data":{"s":"x"}}`), "Request-Id", hostileToken), false, "r1"},
		{"token escaped in a record", rsAnswer(200, list(`{"id":"r1","data":{"s":"`+escTok+`","t":"`+jsonU(hostileToken)+`"}}`)), false, "r1"},
		{"invalid UTF-8 in a record", rsAnswer(200, list("{\"id\":\"r1\",\"data\":{\"s\":\"a\xff\xfeb\"}}")), false, "r1"},
		{"huge error message", rsAnswer(400, []byte(`{"error":{"code":"bad","message":"`+strings.Repeat("m", 15<<20)+`"}}`)), true, "cut at"},
		{"Retry-After", rsAnswer(429, []byte(`{"error":{"code":"rate_limited","message":"slow down"}}`), "Retry-After", "7"), true, "retry_after_s=7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, frames := hostileServer(t, tt.h, nil)
			res := callRecords(t, cs)
			text := resultText(res)
			if res.IsError != tt.wantError || !strings.Contains(text, tt.want) {
				t.Fatalf("isError=%v, want %v with %q:\n%.500s", res.IsError, tt.wantError, tt.want, text)
			}
			if len(text) > 8192 {
				t.Errorf("text of %d bytes", len(text))
			}
			if strings.Contains(text, "0 record") && tt.wantError {
				t.Errorf("an invalid answer shown as records: %s", text)
			}
			out := frames.String()
			if !utf8.ValidString(out) {
				t.Error("the server wrote invalid UTF-8")
			}
			var decoded bytes.Buffer
			for _, line := range strings.Split(out, "\n") {
				var v any
				if json.Unmarshal([]byte(line), &v) == nil {
					b, _ := json.Marshal(v)
					decoded.Write(b)
				}
			}
			if strings.Contains(out, hostileToken) || strings.Contains(decoded.String(), hostileToken) ||
				strings.Contains(decoded.String(), strings.ReplaceAll(hostileToken, "/", `\/`)) {
				t.Errorf("the token reached the client")
			}
		})
	}
}

// TestConcurrentMaximumAnswers answers many large calls at once through a
// budget that holds two of them: all are answered with their data.
func TestConcurrentMaximumAnswers(t *testing.T) {
	const size = 1 << 20
	body := []byte(`{"object":"list","has_more":false,"data":[{"id":"r1","data":{"s":"` + strings.Repeat("x", size-100) + `"}}]}`)
	cs, _ := hostileServer(t, rsAnswer(200, body), rs.NewBudget(2*size+4096, time.Minute))
	var wg sync.WaitGroup
	results := make(chan *mcp.CallToolResult, 6)
	for range cap(results) {
		wg.Go(func() { results <- callRecords(t, cs) })
	}
	wg.Wait()
	close(results)
	for res := range results {
		if res.IsError {
			t.Errorf("call failed: %.300s", resultText(res))
		}
	}
}

// TestAnswerUnencodable shows that a result the SDK cannot encode is
// answered with an error result instead of never.
func TestAnswerUnencodable(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "v0"}, nil)
	s.AddReceivingMiddleware(answer(slog.New(slog.DiscardHandler)))
	s.AddTool(&mcp.Tool{Name: "nan", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: "ok"}},
				StructuredContent: map[string]any{"v": math.NaN()},
			}, nil
		})
	s.AddTool(&mcp.Tool{Name: "panic", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { panic("boom") })
	cs := connect(t, s, nil)
	for _, name := range []string{"nan", "panic"} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !res.IsError || !strings.Contains(resultText(res), "internal_error") {
			t.Errorf("%s: %+v", name, res)
		}
	}
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Errorf("the session did not survive: %v", err)
	}
}
