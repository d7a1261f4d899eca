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

// fakeTimer is a Wait and Linger timer that fires when the test says.
type fakeTimer struct {
	c      chan time.Time
	resets []time.Duration
	reset  chan struct{} // receives once per Reset
}

func newFakeTimer() *fakeTimer {
	return &fakeTimer{c: make(chan time.Time, 1), reset: make(chan struct{}, 16)}
}

func (f *fakeTimer) C() <-chan time.Time { return f.c }

// Reset drops a firing not yet received, as a *time.Timer's does.
func (f *fakeTimer) Reset(d time.Duration) {
	select {
	case <-f.c:
	default:
	}
	f.resets = append(f.resets, d)
	f.reset <- struct{}{}
}

func (f *fakeTimer) Stop() {}

func (f *fakeTimer) fire() {
	select {
	case f.c <- time.Time{}:
	default:
	}
}

// heldInput gives its text in one Read, then holds every further Read
// until the test ends (then io.EOF); entered receives once per Read held.
type heldInput struct {
	text    string
	given   bool
	entered chan struct{}
	release chan struct{}
}

func newHeldInput(t *testing.T, text string) *heldInput {
	h := &heldInput{text: text, entered: make(chan struct{}, 16), release: make(chan struct{})}
	t.Cleanup(func() { close(h.release) })
	return h
}

func (h *heldInput) Read(p []byte) (int, error) {
	if !h.given && h.text != "" {
		h.given = true
		return copy(p, h.text), nil
	}
	h.entered <- struct{}{}
	<-h.release
	return 0, io.EOF
}

// hookedOutput records what Refuse writes and runs hook after its n-th
// write (counted from 1).
type hookedOutput struct {
	mu    sync.Mutex
	b     strings.Builder
	at    int
	hook  func()
	lines int
}

func (o *hookedOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	o.b.Write(p)
	o.lines++
	fire := o.lines == o.at
	o.mu.Unlock()
	if fire {
		o.hook()
	}
	return len(p), nil
}

func (o *hookedOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// TestRefuseAnswersWhatWasRead: when Wait or Linger runs out, or ctx ends,
// as Refuse writes an answer, the requests of lines it has read already
// are still answered; a last line still missing its end is not one, and
// nothing more is read.
func TestRefuseAnswersWhatWasRead(t *testing.T) {
	const (
		notJSON = `{"jsonrpc":`
		req1    = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`
		req2    = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
		req3    = `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`
		partial = `{"jsonrpc":"2.0","id":4,"meth`
	)
	for _, tt := range []struct {
		name string
		in   string
		at   int    // the write during which time runs out
		stop string // "timer" or "ctx"
		want []string
		// held: a whole line is still unread when time runs out, so the
		// input cannot have been read again before.
		held bool
	}{
		{"wait ends", notJSON + "\n" + req1 + "\n" + req2 + "\n", 1, "timer", []string{`"id":null`, `"id":1,`, `"id":2,`}, true},
		{"linger ends", req1 + "\n" + req2 + "\n" + req3 + "\n", 2, "timer", []string{`"id":1,`, `"id":2,`, `"id":3,`}, true},
		{"ctx ends", req1 + "\n" + req2 + "\n", 1, "ctx", []string{`"id":1,`, `"id":2,`}, true},
		{"a cut line is not a request", req1 + "\n" + req2 + "\n" + partial, 1, "ctx", []string{`"id":1,`, `"id":2,`}, true},
		{"only a cut line is left", notJSON + "\n" + partial, 1, "timer", []string{`"id":null`}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			timer := newFakeTimer()
			in := newHeldInput(t, tt.in)
			out := &hookedOutput{at: tt.at, hook: timer.fire}
			if tt.stop == "ctx" {
				out.hook = cancel
			}
			done := make(chan error, 1)
			go func() {
				done <- Refuse(ctx, in, out, refusal, RefuseOptions{newTimer: func(time.Duration) refuseTimer { return timer }})
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("Refuse did not return; it wrote:\n%s", out.String())
			}
			got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if len(got) != len(tt.want) {
				t.Fatalf("%d answers, want %d:\n%s", len(got), len(tt.want), out.String())
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("answer %d is %s, want %s", i+1, got[i], w)
				}
			}
			if tt.held && len(in.entered) != 0 {
				t.Errorf("input read again after the stop")
			}
		})
	}
}

// TestRefuseStopsWhileWaitingForInput: when time runs out while Refuse
// waits for input, it returns at once; what that read brings later is
// after the stop and not answered.
func TestRefuseStopsWhileWaitingForInput(t *testing.T) {
	req1 := `{"jsonrpc":"2.0","id":1,"method":"initialize"}`
	for _, answered := range []bool{false, true} {
		t.Run(map[bool]string{false: "wait", true: "linger"}[answered], func(t *testing.T) {
			timer := newFakeTimer()
			text := ""
			if answered {
				text = req1 + "\n"
			}
			in := newHeldInput(t, text)
			out := &hookedOutput{}
			done := make(chan error, 1)
			go func() {
				done <- Refuse(context.Background(), in, out, refusal, RefuseOptions{newTimer: func(time.Duration) refuseTimer { return timer }})
			}()
			<-in.entered // Refuse is waiting for the next line
			if answered {
				<-timer.reset // and has set Linger after its answer
			}
			timer.fire()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Refuse did not return while its input was being read")
			}
			if got, want := strings.Count(out.String(), "\n"), map[bool]int{false: 0, true: 1}[answered]; got != want {
				t.Errorf("%d answers, want %d:\n%s", got, want, out.String())
			}
			if answered && (len(timer.resets) != 1 || timer.resets[0] != DefaultRefuseLinger) {
				t.Errorf("timer resets %v, want one to %v after the first answer", timer.resets, DefaultRefuseLinger)
			}
		})
	}
}
