package server

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"
)

const refusal = "No scoped PDPP credential cached for https://pdpp.example.com (looked for /home/p/.pdpp/clients/pdpp.example.com.json). Run `pdpp connect https://pdpp.example.com` and try again."

// TestRefuseAnswers: every request is answered with the refusal and its id
// echoed byte for byte; notifications and responses get nothing; lines
// that are not JSON-RPC get RunStdio's answers.
func TestRefuseAnswers(t *testing.T) {
	body := `{"code":-32050,"message":"` + refusal + `","data":{"reason":"not_connected"}}`
	for _, tt := range []struct {
		name, in, want string
	}{
		{"initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
			`{"jsonrpc":"2.0","id":1,"error":` + body + `}`},
		{"string id kept", `{"jsonrpc":"2.0","id":"a\u00e9","method":"tools/list"}`,
			`{"jsonrpc":"2.0","id":"a\u00e9","error":` + body + `}`},
		{"number id kept", `{"jsonrpc":"2.0","id":1.50,"method":"ping"}`,
			`{"jsonrpc":"2.0","id":1.50,"error":` + body + `}`},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, ``},
		{"response", `{"jsonrpc":"2.0","id":3,"result":{}}`, ``},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, ``},
		{"blank", `   `, ``},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"x"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`,
			`[{"jsonrpc":"2.0","id":1,"error":` + body + `},{"jsonrpc":"2.0","id":2,"error":` + body + `}]`},
		{"not json", `{"jsonrpc":`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the line is not one JSON value"}}`},
		{"too long", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 200) + `"}}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: line longer than 128 bytes"}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			err := Refuse(context.Background(), strings.NewReader(tt.in+"\n"), &out, refusal, RefuseOptions{
				MaxLineBytes: 128, Data: []byte(`{"reason":"not_connected"}`),
			})
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if want != "" {
				want += "\n"
			}
			if out.String() != want {
				t.Errorf("stdout\n got %s\nwant %s", out.String(), want)
			}
		})
	}
}

// TestRefuseBounds: with stdin left open, Refuse returns once Wait passes
// without a request, and once Linger passes after its first answer.
func TestRefuseBounds(t *testing.T) {
	for _, tt := range []struct {
		name   string
		send   string
		o      RefuseOptions
		answer bool
	}{
		{"no request", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, RefuseOptions{Wait: time.Millisecond, Linger: time.Hour}, false},
		{"after an answer", `{"jsonrpc":"2.0","id":1,"method":"initialize"}`, RefuseOptions{Wait: time.Hour, Linger: time.Millisecond}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			inR, inW := io.Pipe()
			defer inW.Close() // stdin stays open until the test ends
			outR, outW := io.Pipe()
			done := make(chan error, 1)
			go func() {
				done <- Refuse(context.Background(), inR, outW, refusal, tt.o)
				outW.Close()
			}()
			go io.WriteString(inW, tt.send+"\n")
			got, _ := io.ReadAll(outR)
			if answered := strings.Contains(string(got), `"id":1,"error"`); answered != tt.answer {
				t.Errorf("stdout %q, want an answer: %v", got, tt.answer)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Error(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Refuse did not return")
			}
		})
	}
}

// TestRefuseSeenByClient: the Go SDK's client gets the refusal as the
// initialize error, message intact, instead of a closed connection.
func TestRefuseSeenByClient(t *testing.T) {
	cIn, sOut := io.Pipe()
	sIn, cOut := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Refuse(context.Background(), sIn, sOut, refusal, RefuseOptions{})
		sOut.Close()
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := client.Connect(ctx, &mcp.IOTransport{Reader: cIn, Writer: cOut}, nil)
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != CodeRefused || werr.Message != refusal {
		t.Errorf("connect error %v, want code %d and the refusal", err, CodeRefused)
	}
	cOut.Close()
	if err := <-done; err != nil {
		t.Error(err)
	}
}

// TestRefuseWire: a refusal is a valid JSON-RPC error response in every
// revision's schema.
func TestRefuseWire(t *testing.T) {
	for _, version := range wireVersions {
		t.Run(version, func(t *testing.T) {
			ws := loadWireSchema(t, version)
			var out strings.Builder
			in := `{"jsonrpc":"2.0","id":"init-1","method":"initialize","params":{"protocolVersion":"` + version + `"}}` + "\n"
			if err := Refuse(context.Background(), strings.NewReader(in), &out, refusal, RefuseOptions{Data: []byte(`{"exit_code":78}`)}); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(strings.NewReader(out.String()))
			n := 0
			for sc.Scan() {
				n++
				checkWireMessage(t, ws, version, wireMessage{raw: []byte(sc.Text())}, map[string]int{})
			}
			if n != 1 {
				t.Errorf("%d lines, want 1: %q", n, out.String())
			}
		})
	}
}

// TestStdioRefused: once StdioOptions.Refused has an error, every request
// (a data call, a list, a ping) is answered with it under CodeRefused, and
// requests before that are served.
func TestStdioRefused(t *testing.T) {
	var mu sync.Mutex
	var reason error
	st := startStdio(t, context.Background(), StdioOptions{Refused: func() error {
		mu.Lock()
		defer mu.Unlock()
		return reason
	}})
	st.initialize("2025-06-18")
	st.send(ping)
	if a := st.recv(); !strings.Contains(a, `"result":{}`) {
		t.Fatalf("ping before the refusal: %s", a)
	}
	mu.Lock()
	reason = errors.New(refusal)
	mu.Unlock()
	for _, req := range []string{
		ping,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}` + "\n",
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"schema","arguments":{}}}` + "\n",
	} {
		st.send(req)
		a := st.recv()
		if code := gjson.Get(a, "error.code").Int(); code != CodeRefused || gjson.Get(a, "error.message").Str != refusal {
			t.Errorf("answer to %s = %s", strings.TrimSpace(req), a)
		}
	}
}
