package tools_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

func rsClient(t testing.TB, base string, token func() string, o rs.Options) *rs.Client {
	t.Helper()
	o.BaseURL, o.Token = base, token
	c, err := rs.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// Transport failures become typed results with the RS request id when an
// answer started, and a next step; the go-sdk client accepts every one.
func TestTransportErrors(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + closed.Addr().String()
	closed.Close()

	for _, tc := range []struct {
		name  string
		fault *pdpptest.Fault
		opts  rs.Options
		dead  bool
		want  []string
	}{
		{name: "too large", fault: &pdpptest.Fault{Path: "/v1/streams/*/records", BodyBytes: 64 << 10}, opts: rs.Options{MaxBodyBytes: 4 << 10},
			want: []string{"error code=rs_response_too_large http_status=200 request_id=req_", "next: narrow the request"}},
		{name: "timeout", fault: &pdpptest.Fault{Path: "/v1/streams/*/records", Delay: time.Minute}, opts: rs.Options{Timeout: 50 * time.Millisecond},
			want: []string{"error code=rs_timeout", "next: call again with a narrower request"}},
		{name: "invalid JSON", fault: &pdpptest.Fault{Path: "/v1/streams/*/records", InvalidJSON: true},
			want: []string{"error code=rs_invalid_response http_status=200 request_id=req_"}},
		{name: "not an object", fault: &pdpptest.Fault{Path: "/v1/streams/*/records", Status: 200, Body: []byte(`[1,2]`),
			Header: http.Header{"Content-Type": {"application/json"}}},
			want: []string{"error code=rs_invalid_response http_status=200", "JSON that is not an object"}},
		{name: "not JSON", fault: &pdpptest.Fault{Path: "/v1/streams/*/records", Status: 200, Body: []byte(`<html>proxy login</html>`),
			Header: http.Header{"Content-Type": {"text/html"}}},
			want: []string{"error code=rs_invalid_response http_status=200", "not JSON"}},
		{name: "unreachable", dead: true,
			want: []string{"error code=rs_unreachable", "is not answering"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{rs: func(s *pdpptest.Server) tools.RS {
				base := s.URL()
				if tc.dead {
					base = deadURL
				}
				return rsClient(t, base, func() string { return s.Token(pdpptest.TokenClient) }, tc.opts)
			}})
			if tc.fault != nil {
				h.rs.Fault(*tc.fault)
			}
			res := h.call(t, "query_records", map[string]any{"stream": "messages", "connection_id": "cin_gmail_work"})
			if !res.IsError {
				t.Fatalf("accepted: %s", text(res))
			}
			for _, w := range tc.want {
				if !strings.Contains(text(res), w) {
					t.Errorf("text lacks %q:\n%s", w, text(res))
				}
			}
		})
	}
}

// ownerGuard stands for the credential layer's guard: it refuses every call
// with a coded error, as it does when the start-up probe found an owner
// token.
type ownerGuard struct{}

type refused struct{}

func (refused) Error() string {
	return "the configured credential is an owner token; refusing to serve data with it"
}
func (refused) ErrorCode() string { return "owner_token_refused" }

func (ownerGuard) Get(context.Context, string, rs.Query) (*rs.Response, error) {
	return nil, refused{}
}

func TestCodedErrors(t *testing.T) {
	h := newHarness(t, harnessOptions{rs: func(*pdpptest.Server) tools.RS { return ownerGuard{} }})
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"schema", nil},
		{"query_records", map[string]any{"stream": "messages"}},
		{"aggregate", map[string]any{"stream": "messages", "metric": "count"}},
	} {
		res := h.call(t, call.tool, call.args)
		if !res.IsError {
			t.Fatalf("%s accepted", call.tool)
		}
		for _, w := range []string{"error code=owner_token_refused\n", "message: the configured credential is an owner token", "`pdpp connect " + h.rs.URL() + "`"} {
			if !strings.Contains(text(res), w) {
				t.Errorf("%s: text lacks %q:\n%s", call.tool, w, text(res))
			}
		}
	}
	if n := len(h.rs.Requests()); n != 0 {
		t.Errorf("%d RS requests past the guard", n)
	}
}

// A refused credential is reported once, with the way out; nothing is
// retried.
func TestRejectedCredential(t *testing.T) {
	for kind, want := range map[pdpptest.TokenKind]string{
		pdpptest.TokenUnknown: "error code=context.active_false http_status=401",
		pdpptest.TokenRevoked: "error code=grant_revoked http_status=403",
		pdpptest.TokenExpired: "error code=grant_expired http_status=403",
	} {
		h := newHarness(t, harnessOptions{kind: kind})
		res := h.call(t, "schema", nil)
		if !res.IsError || !strings.HasPrefix(text(res), want) || !strings.Contains(text(res), "`pdpp connect "+h.rs.URL()+"`") {
			t.Errorf("%s: %s", kind, text(res))
		}
		if n := len(h.rs.Requests()); n != 1 {
			t.Errorf("%s: %d RS requests, want 1", kind, n)
		}
	}
}
