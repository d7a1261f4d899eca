package pdpptest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// send makes a plain request with the client token and returns the response
// with its body unread.
func send(t *testing.T, ctx context.Context, srv *Server, path string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+srv.Token(TokenClient))
	return http.DefaultClient.Do(req)
}

func TestFaultFixedAnswers(t *testing.T) {
	srv := New(t, Options{})
	// A small real answer keeps the trickled case quick.
	const route, target = "/v1/streams/messages/aggregate", "/v1/streams/messages/aggregate?metric=count"
	for _, tc := range []struct {
		name   string
		fault  Fault
		status int
		check  func(t *testing.T, a answer)
	}{
		{"status only: standard envelope", Fault{Status: 503}, 503, func(t *testing.T, a answer) {
			wantError(t, a, 503, "api_error", "")
		}},
		{"rate limited with a header", Fault{Status: 429, Header: http.Header{"Retry-After": {"7"}}}, 429, func(t *testing.T, a answer) {
			wantError(t, a, 429, "rate_limit_exceeded", "")
			if a.header.Get("Retry-After") != "7" {
				t.Errorf("Retry-After = %q", a.header.Get("Retry-After"))
			}
		}},
		{"fixed body", Fault{Status: 502, Body: []byte("<html>bad gateway</html>"), Header: http.Header{"Content-Type": {"text/html"}}}, 502, func(t *testing.T, a answer) {
			if string(a.body) != "<html>bad gateway</html>" || a.header.Get("Content-Type") != "text/html" {
				t.Errorf("body %q content-type %q", a.body, a.header.Get("Content-Type"))
			}
		}},
		{"body of N bytes", Fault{BodyBytes: 3 << 20}, 200, func(t *testing.T, a answer) {
			if len(a.body) != 3<<20 || !json.Valid(a.body) {
				t.Errorf("%d bytes, valid JSON %v", len(a.body), json.Valid(a.body))
			}
		}},
		{"invalid JSON", Fault{InvalidJSON: true}, 200, func(t *testing.T, a answer) {
			if json.Valid(a.body) || !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
				t.Errorf("body %q content-type %q", a.body, a.header.Get("Content-Type"))
			}
		}},
		{"slow body keeps the real answer intact", Fault{SlowBody: true}, 200, func(t *testing.T, a answer) {
			if !json.Valid(a.body) || !strings.Contains(string(a.body), `"object":"aggregation"`) || a.header.Get("Content-Length") != "" {
				t.Errorf("slow answer: content-length %q body %.80s", a.header.Get("Content-Length"), a.body)
			}
		}},
		{"short delay passes through", Fault{Delay: time.Millisecond}, 200, func(t *testing.T, a answer) {
			if !strings.Contains(string(a.body), `"object":"aggregation"`) {
				t.Errorf("delayed answer: %.80s", a.body)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			remove := srv.Fault(Fault{Path: route, Status: tc.fault.Status, Header: tc.fault.Header, Body: tc.fault.Body,
				Delay: tc.fault.Delay, BodyBytes: tc.fault.BodyBytes, SlowBody: tc.fault.SlowBody, InvalidJSON: tc.fault.InvalidJSON})
			defer remove()
			a := get(t, srv, srv.Token(TokenClient), target)
			if a.status != tc.status {
				t.Fatalf("status %d, want %d", a.status, tc.status)
			}
			tc.check(t, a)
		})
	}
	// Removed faults leave the route alone.
	wantOK(t, get(t, srv, srv.Token(TokenClient), target))
}

func TestFaultConnectionLevel(t *testing.T) {
	srv := New(t, Options{})

	t.Run("closed connection", func(t *testing.T) {
		defer srv.Fault(Fault{Path: "/v1/streams", CloseConnection: true})()
		resp, err := send(t, context.Background(), srv, "/v1/streams")
		if err == nil {
			resp.Body.Close()
			t.Fatalf("got status %d, want a transport error", resp.StatusCode)
		}
	})

	t.Run("delay honours cancellation", func(t *testing.T) {
		defer srv.Fault(Fault{Path: "/v1/streams", Delay: time.Hour})()
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		resp, err := send(t, ctx, srv, "/v1/streams")
		if err == nil {
			resp.Body.Close()
			t.Fatal("a one-hour delay answered")
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("endless body", func(t *testing.T) {
		defer srv.Fault(Fault{Path: "/v1/streams", EndlessBody: true})()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		resp, err := send(t, ctx, srv, "/v1/streams")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		const want = 4 << 20
		n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, want))
		if err != nil || n != want {
			t.Errorf("read %d bytes (err %v) of a body that never ends", n, err)
		}
	})

	t.Run("slow body outlasts a client deadline", func(t *testing.T) {
		defer srv.Fault(Fault{Path: "/v1/streams", SlowBody: true, BodyBytes: 1 << 20})()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		resp, err := send(t, ctx, srv, "/v1/streams")
		if err != nil {
			t.Fatal(err) // headers arrive at once
		}
		defer resp.Body.Close()
		// The deadline starts with the body, so a loaded machine that is
		// slow to deliver the headers cannot make the case flaky.
		time.AfterFunc(100*time.Millisecond, cancel)
		if _, err := io.ReadAll(resp.Body); err == nil {
			t.Error("a 1 MiB body trickled at a few KiB/s finished within the deadline")
		}
	})
}

func TestFaultMatching(t *testing.T) {
	srv := New(t, Options{})
	client := srv.Token(TokenClient)

	remove := srv.Fault(Fault{Path: "/v1/streams/*/records", Status: 500, Times: 2})
	defer remove()
	wantError(t, get(t, srv, client, "/v1/streams/messages/records?limit=1"), 500, "api_error", "")
	wantOK(t, get(t, srv, client, "/v1/streams/messages/aggregate?metric=count")) // another route
	wantOK(t, get(t, srv, client, "/v1/streams/messages"))                        // one segment short
	wantError(t, get(t, srv, client, "/v1/streams/threads/records?limit=1"), 500, "api_error", "")
	wantOK(t, get(t, srv, client, "/v1/streams/threads/records?limit=1")) // Times spent

	// The newest matching fault wins; removing it uncovers the older one.
	older := srv.Fault(Fault{Path: "/v1/streams", Status: 503})
	defer older()
	newer := srv.Fault(Fault{Path: "/v1/streams", Status: 504})
	wantError(t, get(t, srv, client, "/v1/streams"), 504, "api_error", "")
	newer()
	wantError(t, get(t, srv, client, "/v1/streams"), 503, "api_error", "")

	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"/v1/streams", "/v1/streams", true},
		{"/v1/streams/*", "/v1/streams/messages", true},
		{"/v1/streams/*", "/v1/streams/messages/records", false},
		{"/v1/streams/*/records/*", "/v1/streams/labels/records/Work%2FProjects", true},
		{"/v1/search", "/v1/search/semantic", false},
	} {
		if got := pathMatches(tc.pattern, tc.path); got != tc.want {
			t.Errorf("pathMatches(%q, %q) = %v", tc.pattern, tc.path, got)
		}
	}
}

func TestPaddedJSON(t *testing.T) {
	for _, n := range []int64{1, 60, 61, 1000, 1 << 16} {
		b := paddedJSON(n)
		if !json.Valid(b) {
			t.Errorf("paddedJSON(%d) is not JSON", n)
		}
		if min := int64(len(paddedJSON(1))); n >= min && int64(len(b)) != n {
			t.Errorf("paddedJSON(%d) has %d bytes", n, len(b))
		}
	}
}

func TestRequestLogAndLifecycle(t *testing.T) {
	srv, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") || strings.HasSuffix(srv.URL(), "/") {
		t.Errorf("URL = %q", srv.URL())
	}
	get(t, srv, srv.Token(TokenClient), "/v1/streams?connection_id=cin_gmail_work")
	get(t, srv, "", "/v1/schema")
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Path != "/v1/streams" || reqs[0].RawQuery != "connection_id=cin_gmail_work" ||
		reqs[0].Method != http.MethodGet || reqs[1].Path != "/v1/schema" || reqs[1].Header.Get("Authorization") != "" {
		t.Errorf("requests = %+v", reqs)
	}
	srv.ResetRequests()
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests after reset", n)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := http.Get(srv.URL() + "/v1/schema"); err == nil {
		t.Error("a closed server still answers")
	}
}
