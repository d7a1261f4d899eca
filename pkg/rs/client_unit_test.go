package rs

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

func TestNewBaseURL(t *testing.T) {
	tok := func() string { return "t" }
	tests := []struct {
		in      string
		want    string
		wantErr string
	}{
		{in: "https://rs.example.com", want: "https://rs.example.com"},
		{in: "https://rs.example.com/", want: "https://rs.example.com"},
		{in: "HTTPS://rs.example.com:8443/pdpp/", want: "https://rs.example.com:8443/pdpp"},
		{in: "http://127.0.0.1:7663/a/b//", want: "http://127.0.0.1:7663/a/b"},
		{in: "https://h/pre%20fix", want: "https://h/pre%20fix"},
		{in: "rs.example.com", wantErr: "absolute http or https"},
		{in: "ftp://rs.example.com", wantErr: "absolute http or https"},
		{in: "https://", wantErr: "no host"},
		{in: "https://user:s3cret@h/", wantErr: "user information"},
		{in: "https://h/?a=b", wantErr: "query or fragment"},
		{in: "https://h/#x", wantErr: "query or fragment"},
		{in: "https://h/%zz", wantErr: "not a valid URL"},
		{in: "", wantErr: "absolute http or https"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			c, err := New(Options{BaseURL: tt.in, Token: tok})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Fatalf("error repeats the URL password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.BaseURL(); got != tt.want {
				t.Errorf("BaseURL() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNewOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{name: "token required", opts: Options{BaseURL: "http://h"}, wantErr: "Token is required"},
		{name: "negative timeout", opts: Options{BaseURL: "http://h", Token: func() string { return "" }, Timeout: -1}, wantErr: "timeout"},
		{name: "negative cap", opts: Options{BaseURL: "http://h", Token: func() string { return "" }, MaxBodyBytes: -1}, wantErr: "max body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
	c, err := New(Options{BaseURL: "http://h", Token: func() string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if c.timeout != DefaultTimeout || c.max != DefaultMaxBodyBytes || !strings.HasPrefix(c.ua, "pdpp-mcp/") || c.hc == nil || c.log == nil {
		t.Errorf("defaults not applied: timeout %s, max %d, ua %q", c.timeout, c.max, c.ua)
	}
}

func TestCheckPath(t *testing.T) {
	tests := []struct {
		path    string
		wantErr string
	}{
		{path: "/v1/schema"},
		{path: Path("v1", "streams", "a b", "records", "x/y")},
		{path: "v1/schema", wantErr: "must start with /"},
		{path: "/v1/schema?view=compact", wantErr: "query or fragment"},
		{path: "/v1/schema#x", wantErr: "query or fragment"},
		{path: Path("v1", "streams", "", "records"), wantErr: "empty segment"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			err := checkPath(tt.path)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("checkPath(%q) = %v, want error containing %q", tt.path, err, tt.wantErr)
			}
		})
	}
}

// endless yields 'x' forever.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.n += int64(len(p))
	return len(p), nil
}

func TestReadCapped(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		size    int64 // declared Content-Length
		limit   int64
		wantErr error
	}{
		{name: "empty", body: "", size: 0, limit: 10},
		{name: "exactly the cap", body: "0123456789", size: 10, limit: 10},
		{name: "exactly the cap, length unknown", body: "0123456789", size: -1, limit: 10},
		{name: "one over, length unknown", body: "0123456789a", size: -1, limit: 10, wantErr: errTooLarge},
		{name: "declared over the cap", body: "", size: 11, limit: 10, wantErr: errTooLarge},
		{name: "large under the cap", body: strings.Repeat("y", 100_000), size: -1, limit: 1 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readBudgeted(strings.NewReader(tt.body), tt.size, tt.limit, nil)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err == nil && string(got) != tt.body {
				t.Fatalf("read %d bytes, want %d", len(got), len(tt.body))
			}
		})
	}
}

// TestReadCappedBounded shows that an endless body stops at cap+1 bytes read
// and that the buffer never grows past the cap.
func TestReadCappedBounded(t *testing.T) {
	const limit = 1 << 20
	src := &endless{}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := readBudgeted(src, -1, limit, nil)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, errTooLarge) {
		t.Fatalf("err = %v, want errTooLarge", err)
	}
	if src.n != limit+1 {
		t.Errorf("read %d bytes from the body, want exactly %d", src.n, limit+1)
	}
	// Doubling from 512 up to the cap allocates under 2×limit in total; the
	// slack covers the test's own bookkeeping.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2*limit+64<<10 {
		t.Errorf("allocated %d bytes to reject a body over a %d-byte cap", alloc, limit)
	}
}

type failingReader struct{ err error }

func (f failingReader) Read([]byte) (int, error) { return 0, f.err }

func TestReadCappedPassesReadErrors(t *testing.T) {
	want := io.ErrUnexpectedEOF
	_, err := readBudgeted(io.MultiReader(bytes.NewReader([]byte("ab")), failingReader{want}), -1, 10, nil)
	if !errors.Is(err, want) {
		t.Fatalf("err = %v, want %v", err, want)
	}
}

func TestRedact(t *testing.T) {
	tok := "tok_SECRET_1234"
	got := string(redact([]byte(`{"echo":"Bearer tok_SECRET_1234","again":"tok_SECRET_1234"}`), tok))
	want := `{"echo":"Bearer [redacted]","again":"[redacted]"}`
	if got != want {
		t.Errorf("redact = %s, want %s", got, want)
	}
	in := []byte(`{"a":1}`)
	if out := redact(in, tok); &out[0] != &in[0] {
		t.Error("redact copied a body that holds no token")
	}
}

func TestFormatBytes(t *testing.T) {
	tests := map[int64]string{
		16 << 20: "16 MiB (16777216 bytes)",
		1 << 30:  "1 GiB (1073741824 bytes)",
		4096:     "4 KiB (4096 bytes)",
		1000:     "1000 bytes",
	}
	for n, want := range tests {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
