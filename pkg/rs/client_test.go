package rs_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/testlog"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

var requestIDPattern = regexp.MustCompile(`^req_[0-9a-f]{16}$`)

// newClient returns a client for srv with the client token, adjusted by edit.
func newClient(t testing.TB, srv *pdpptest.Server, edit func(*rs.Options)) *rs.Client {
	t.Helper()
	tok := srv.Token(pdpptest.TokenClient)
	opts := rs.Options{BaseURL: srv.URL(), Token: func() string { return tok }}
	if edit != nil {
		edit(&opts)
	}
	c, err := rs.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func lastRequest(t *testing.T, srv *pdpptest.Server) pdpptest.Request {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("the double received no request")
	}
	return reqs[len(reqs)-1]
}

func TestGetRealAnswers(t *testing.T) {
	srv := pdpptest.New(t, pdpptest.Options{})
	tests := []struct {
		name  string
		token pdpptest.TokenKind // "" sends no Authorization header
		path  string
		query rs.Query
		// For a 2xx answer: the JSON path that must exist in the body.
		wantKey string
		// For an error answer.
		want *rs.Error
	}{
		{
			name: "compact schema", token: pdpptest.TokenClient,
			path: rs.Path("v1", "schema"), query: rs.Query{{"view", "compact"}}, wantKey: "bearer.token_kind",
		},
		{
			name: "records page", token: pdpptest.TokenClient,
			path: rs.Path("v1", "streams", "messages", "records"), query: rs.Query{{"limit", "2"}, {"connection_id", "cin_gmail_personal"}},
			wantKey: "data.1.id",
		},
		{
			name: "no bearer", path: rs.Path("v1", "schema"),
			want: &rs.Error{Status: 401, Type: "authentication_error", Code: "authentication_error", Message: "Missing Bearer token"},
		},
		{
			name: "unknown bearer", token: pdpptest.TokenUnknown, path: rs.Path("v1", "schema"),
			want: &rs.Error{Status: 401, Type: "authentication_error", Code: "context.active_false", Message: "Token introspection failed closed"},
		},
		{
			name: "unknown route", token: pdpptest.TokenClient, path: rs.Path("v1", "no-such-route"),
			want: &rs.Error{Status: 404, Type: "not_found_error", Code: "not_found", Message: "Route GET /v1/no-such-route not found"},
		},
		{
			name: "ambiguous record", token: pdpptest.TokenClient, path: rs.Path("v1", "streams", "labels", "records", "INBOX"),
			want: &rs.Error{
				Status: 409, Type: "api_error", Code: "ambiguous_connection", RetryWith: "connection_id",
				Message: "Record 'INBOX' is present under more than one connection. Retry with `connection_id`.",
				AvailableConnections: []rs.Connection{
					{ConnectionID: "cin_gmail_personal", DisplayName: "Personal Gmail"},
					{ConnectionID: "cin_gmail_work", DisplayName: "Work Gmail"},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := ""
			if tt.token != "" {
				tok = srv.Token(tt.token)
			}
			c := newClient(t, srv, func(o *rs.Options) { o.Token = func() string { return tok } })
			resp, err := c.Get(context.Background(), tt.path, tt.query)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Get: %v", err)
				}
				if resp.Status != http.StatusOK || resp.ContentType() != "application/json" {
					t.Errorf("status %d, content type %q", resp.Status, resp.ContentType())
				}
				if !gjson.GetBytes(resp.Body, tt.wantKey).Exists() {
					t.Errorf("body has no %s: %.300s", tt.wantKey, resp.Body)
				}
				if !requestIDPattern.MatchString(resp.RequestID) || resp.RequestID != resp.Header.Get("Request-Id") {
					t.Errorf("RequestID = %q, header %q", resp.RequestID, resp.Header.Get("Request-Id"))
				}
				return
			}
			var got *rs.Error
			if !errors.As(err, &got) {
				t.Fatalf("Get error = %v (%T), want *rs.Error", err, err)
			}
			if resp != nil {
				t.Errorf("a response came back with the error: %+v", resp)
			}
			if !requestIDPattern.MatchString(got.RequestID) {
				t.Errorf("RequestID = %q, want req_<16 hex>", got.RequestID)
			}
			if rid := gjson.GetBytes(got.Object, "request_id").String(); rid != got.RequestID {
				t.Errorf("header Request-Id %q differs from the body's %q", got.RequestID, rid)
			}
			if diff := cmp.Diff(tt.want, got, cmpIgnoreRaw); diff != "" {
				t.Errorf("error mismatch (-want +got):\n%s", diff)
			}
			if got.BaseURL != srv.URL() {
				t.Errorf("BaseURL = %q, want %q", got.BaseURL, srv.URL())
			}
		})
	}
}

// cmpIgnoreRaw compares errors on their parsed fields; the raw object and the
// request id are checked separately.
var cmpIgnoreRaw = cmp.Transformer("parsed", func(e *rs.Error) rs.Error {
	c := *e
	c.Object, c.RequestID, c.BaseURL = nil, "", ""
	return c
})

func TestGetSendsHeaders(t *testing.T) {
	srv := pdpptest.New(t, pdpptest.Options{})
	tok := srv.Token(pdpptest.TokenClient)
	tests := []struct {
		name   string
		ua     string
		wantUA *regexp.Regexp
	}{
		{name: "default user agent", wantUA: regexp.MustCompile(`^pdpp-mcp/\S+$`)},
		{name: "custom user agent", ua: "probe/1.2", wantUA: regexp.MustCompile(`^probe/1\.2$`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, srv, func(o *rs.Options) { o.UserAgent = tt.ua })
			if _, err := c.Get(context.Background(), rs.Path("v1", "schema"), nil); err != nil {
				t.Fatal(err)
			}
			r := lastRequest(t, srv)
			if r.Method != http.MethodGet || r.Header.Get("Accept") != "application/json" ||
				r.Header.Get("Authorization") != "Bearer "+tok || !tt.wantUA.MatchString(r.Header.Get("User-Agent")) {
				t.Errorf("request %s with Accept %q, Authorization ok %v, User-Agent %q", r.Method,
					r.Header.Get("Accept"), r.Header.Get("Authorization") == "Bearer "+tok, r.Header.Get("User-Agent"))
			}
		})
	}
}

func TestGetKeepsPathPrefix(t *testing.T) {
	srv := pdpptest.New(t, pdpptest.Options{})
	for _, base := range []string{"/pdpp", "/pdpp/", "/a/b"} {
		t.Run(base, func(t *testing.T) {
			c := newClient(t, srv, func(o *rs.Options) { o.BaseURL = srv.URL() + base })
			_, err := c.Get(context.Background(), rs.Path("v1", "schema"), rs.Query{{"view", "compact"}})
			// The double serves at the root, so a kept prefix is a 404 for
			// exactly the prefixed path; a dropped prefix would be a 200.
			var e *rs.Error
			if !errors.As(err, &e) || e.Status != http.StatusNotFound {
				t.Fatalf("Get error = %v, want the double's 404 for the prefixed path", err)
			}
			want := strings.TrimSuffix(base, "/") + "/v1/schema"
			if r := lastRequest(t, srv); r.Path != want || r.RawQuery != "view=compact" {
				t.Errorf("double received %s?%s, want %s?view=compact", r.Path, r.RawQuery, want)
			}
		})
	}
}

func TestGetEscapesPathSegments(t *testing.T) {
	srv := pdpptest.New(t, pdpptest.Options{})
	c := newClient(t, srv, nil)
	id := "a/b c?d#e%f"
	// The fault matches the escaped path only: it fires when every reserved
	// character arrived escaped inside its segment.
	srv.Fault(pdpptest.Fault{Path: "/v1/streams/messages/records/a%2Fb%20c%3Fd%23e%25f", Status: http.StatusTeapot, Times: 1})
	_, err := c.Get(context.Background(), rs.Path("v1", "streams", "messages", "records", id), nil)
	var e *rs.Error
	if !errors.As(err, &e) || e.Status != http.StatusTeapot {
		t.Fatalf("Get error = %v, want the injected 418 (the escaped path did not arrive intact)", err)
	}
	if r := lastRequest(t, srv); r.Path != "/v1/streams/messages/records/"+id || r.RawQuery != "" {
		t.Errorf("double decoded path %q query %q", r.Path, r.RawQuery)
	}
}

func TestGetQueryAsReceived(t *testing.T) {
	srv := pdpptest.New(t, pdpptest.Options{})
	c := newClient(t, srv, nil)
	q := rs.Query{
		{"streams", "messages"},
		{"filter[received_at][gte]", "2026-01-01T00:00:00Z"},
		{"q", "tax & invoice #2"},
		{"streams", "threads"},
		{"expand_limit[attachments]", "3"},
	}
	_, _ = c.Get(context.Background(), rs.Path("v1", "search"), q) // the answer does not matter here
	r := lastRequest(t, srv)
	if r.RawQuery != q.Encode() {
		t.Errorf("raw query %q, want %q", r.RawQuery, q.Encode())
	}
	got, err := url.ParseQuery(r.RawQuery)
	if err != nil {
		t.Fatal(err)
	}
	want := url.Values{
		"streams":                   {"messages", "threads"},
		"filter[received_at][gte]":  {"2026-01-01T00:00:00Z"},
		"q":                         {"tax & invoice #2"},
		"expand_limit[attachments]": {"3"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("query as decoded by the double (-want +got):\n%s", diff)
	}
}

func TestGetRequestID(t *testing.T) {
	srv := pdpptest.New(t, pdpptest.Options{})
	c := newClient(t, srv, nil)
	// The RS names it Request-Id; an x-request-id from some proxy is not it.
	srv.Fault(pdpptest.Fault{
		Path: "/v1/schema", Status: http.StatusConflict, Times: 1,
		Header: http.Header{"X-Request-Id": {"proxy_id"}},
		Body:   []byte(`{"error":{"code":"ambiguous_schema_detail","message":"m","request_id":"req_from_body","retry_with":{"field":"connection_id","guidance":"g"}}}`),
	})
	_, err := c.Get(context.Background(), rs.Path("v1", "schema"), nil)
	var e *rs.Error
	if !errors.As(err, &e) {
		t.Fatalf("Get error = %v, want *rs.Error", err)
	}
	if !requestIDPattern.MatchString(e.RequestID) {
		t.Errorf("RequestID = %q, want the Request-Id header (req_<16 hex>)", e.RequestID)
	}
	if e.RetryWith != "connection_id" {
		t.Errorf("RetryWith = %q, want connection_id from the retry_with object", e.RetryWith)
	}
}

func TestGetReusesConnections(t *testing.T) {
	srv := pdpptest.New(t, pdpptest.Options{})
	c := newClient(t, srv, nil)
	var fresh, total atomic.Int64
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			total.Add(1)
			if !info.Reused {
				fresh.Add(1)
			}
		},
	})
	const n = 25
	for i := range n {
		// Alternate answers: error bodies must be drained too, or the
		// connection after them would be new.
		path := rs.Path("v1", "schema")
		if i%3 == 1 {
			path = rs.Path("v1", "no-such-route")
		}
		_, err := c.Get(ctx, path, nil)
		var e *rs.Error
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if total.Load() != n || fresh.Load() != 1 {
		t.Errorf("%d connections obtained, %d new over %d calls; want one new connection reused for all", total.Load(), fresh.Load(), n)
	}
}

func TestGetReadsTokenPerCall(t *testing.T) {
	srv := pdpptest.New(t, pdpptest.Options{})
	var tok atomic.Pointer[string]
	unknown, client := srv.Token(pdpptest.TokenUnknown), srv.Token(pdpptest.TokenClient)
	tok.Store(&unknown)
	c := newClient(t, srv, func(o *rs.Options) { o.Token = func() string { return *tok.Load() } })

	_, err := c.Get(context.Background(), rs.Path("v1", "schema"), nil)
	var e *rs.Error
	if !errors.As(err, &e) || e.Status != http.StatusUnauthorized {
		t.Fatalf("first call with an unknown token: %v, want 401", err)
	}
	tok.Store(&client) // as a credential reload after the 401 would
	if _, err := c.Get(context.Background(), rs.Path("v1", "schema"), nil); err != nil {
		t.Fatalf("second call with the reloaded token: %v", err)
	}
	if got := lastRequest(t, srv).Header.Get("Authorization"); got != "Bearer "+client {
		t.Error("the second request did not carry the reloaded token")
	}
}

// countingTransport counts the response body bytes the client reads.
type countingTransport struct {
	base http.RoundTripper
	read atomic.Int64
}

func (ct *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := ct.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &countingBody{ReadCloser: resp.Body, n: &ct.read}
	return resp, nil
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

func TestGetTransportFailures(t *testing.T) {
	const limit = 64 << 10
	tests := []struct {
		name       string
		fault      pdpptest.Fault
		timeout    time.Duration
		wantCode   string
		wantStatus int
		wantText   []string // in the error message
		// maxRead bounds the body bytes the client may read (0: no check).
		maxRead int64
	}{
		{
			name: "declared body over the cap", fault: pdpptest.Fault{BodyBytes: 4 * limit},
			wantCode: rs.CodeTooLarge, wantStatus: 200, wantText: []string{"64 KiB (65536 bytes)", "raise the cap"},
			maxRead: limit + 1,
		},
		{
			name: "error body over the cap", fault: pdpptest.Fault{Status: 500, BodyBytes: limit + 1},
			wantCode: rs.CodeTooLarge, wantStatus: 500, wantText: []string{"raise the cap"}, maxRead: limit + 1,
		},
		{
			name: "endless body", fault: pdpptest.Fault{EndlessBody: true},
			wantCode: rs.CodeTooLarge, wantStatus: 200, wantText: []string{"raise the cap"}, maxRead: limit + 1,
		},
		{
			name: "invalid JSON", fault: pdpptest.Fault{InvalidJSON: true},
			wantCode: rs.CodeInvalidResponse, wantStatus: 200, wantText: []string{"not valid JSON"},
		},
		{
			name: "connection closed without an answer", fault: pdpptest.Fault{CloseConnection: true},
			wantCode: rs.CodeUnreachable, wantText: []string{"no answer from the resource server"},
		},
		{
			name: "no answer in time", fault: pdpptest.Fault{Delay: time.Minute}, timeout: 50 * time.Millisecond,
			wantCode: rs.CodeTimeout, wantText: []string{"50ms", "per-call timeout"},
		},
		{
			// 64 KiB trickled 16 bytes per 5 ms takes 20 s.
			name: "body too slow", fault: pdpptest.Fault{BodyBytes: limit, SlowBody: true}, timeout: 100 * time.Millisecond,
			wantCode: rs.CodeTimeout, wantStatus: 200, wantText: []string{"per-call timeout"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := pdpptest.New(t, pdpptest.Options{})
			tt.fault.Path = "/v1/schema"
			srv.Fault(tt.fault)
			ct := &countingTransport{base: http.DefaultTransport.(*http.Transport).Clone()}
			c := newClient(t, srv, func(o *rs.Options) {
				o.MaxBodyBytes = limit
				o.Timeout = tt.timeout
				o.HTTPClient = &http.Client{Transport: ct}
			})
			resp, err := c.Get(context.Background(), rs.Path("v1", "schema"), nil)
			var te *rs.TransportError
			if !errors.As(err, &te) {
				t.Fatalf("Get = %v, %v; want *rs.TransportError", resp, err)
			}
			if te.Code != tt.wantCode || te.Status != tt.wantStatus {
				t.Errorf("code %s status %d, want %s %d (%v)", te.Code, te.Status, tt.wantCode, tt.wantStatus, err)
			}
			for _, s := range tt.wantText {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			if tt.wantStatus != 0 && !requestIDPattern.MatchString(te.RequestID) {
				t.Errorf("RequestID = %q for an answer that started", te.RequestID)
			}
			if te.Code == rs.CodeTooLarge && te.Limit != limit {
				t.Errorf("Limit = %d, want %d", te.Limit, limit)
			}
			if te.Code == rs.CodeTimeout && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("timeout does not wrap context.DeadlineExceeded: %v", err)
			}
			if tt.maxRead > 0 && ct.read.Load() > tt.maxRead {
				t.Errorf("read %d body bytes, want at most %d", ct.read.Load(), tt.maxRead)
			}
		})
	}
}

func TestGetBodyAtTheCap(t *testing.T) {
	const limit = 64 << 10
	srv := pdpptest.New(t, pdpptest.Options{})
	srv.Fault(pdpptest.Fault{Path: "/v1/schema", BodyBytes: limit})
	c := newClient(t, srv, func(o *rs.Options) { o.MaxBodyBytes = limit })
	resp, err := c.Get(context.Background(), rs.Path("v1", "schema"), nil)
	if err != nil {
		t.Fatalf("a body of exactly the cap: %v", err)
	}
	if len(resp.Body) != limit {
		t.Errorf("body %d bytes, want %d", len(resp.Body), limit)
	}
}

func TestGetBodyBrokenOff(t *testing.T) {
	srv := pdpptest.New(t, pdpptest.Options{})
	srv.Fault(pdpptest.Fault{Path: "/v1/schema", EndlessBody: true})
	c := newClient(t, srv, func(o *rs.Options) { o.MaxBodyBytes = 1 << 30 })
	// Stop the double once the answer has started: the body breaks off
	// mid-stream, long before the 1 GiB cap.
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotFirstResponseByte: func() { _ = srv.Close() },
	})
	_, err := c.Get(ctx, rs.Path("v1", "schema"), nil)
	var te *rs.TransportError
	if !errors.As(err, &te) || te.Code != rs.CodeInvalidResponse || te.Status != http.StatusOK {
		t.Fatalf("Get = %v, want %s with status 200", err, rs.CodeInvalidResponse)
	}
	if !strings.Contains(err.Error(), "broke off") {
		t.Errorf("error %q does not say the answer broke off", err)
	}
}

func TestGetUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c, err := rs.New(rs.Options{BaseURL: "http://" + addr, Token: func() string { return "t" }})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Get(context.Background(), rs.Path("v1", "schema"), nil)
	var te *rs.TransportError
	if !errors.As(err, &te) || te.Code != rs.CodeUnreachable {
		t.Fatalf("Get = %v, want %s", err, rs.CodeUnreachable)
	}
	if !strings.Contains(err.Error(), addr) {
		t.Errorf("error %q does not name the resource server", err)
	}
}

func TestGetCallerContext(t *testing.T) {
	srv := pdpptest.New(t, pdpptest.Options{})
	srv.Fault(pdpptest.Fault{Path: "/v1/schema", Delay: time.Minute})
	c := newClient(t, srv, nil)

	t.Run("deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := c.Get(ctx, rs.Path("v1", "schema"), nil)
		var te *rs.TransportError
		if !errors.As(err, &te) || te.Code != rs.CodeTimeout || !strings.Contains(err.Error(), "caller's deadline") {
			t.Fatalf("Get = %v, want %s naming the caller's deadline", err, rs.CodeTimeout)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// Cancel once the request is on the wire: no sleep, no race with the
		// (delayed) answer.
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { cancel() }})
		_, err := c.Get(ctx, rs.Path("v1", "schema"), nil)
		var te *rs.TransportError
		if !errors.Is(err, context.Canceled) || errors.As(err, &te) {
			t.Fatalf("Get = %v (%T), want a wrapped context.Canceled", err, err)
		}
	})
}

func TestGetRejectsBadPaths(t *testing.T) {
	srv := pdpptest.New(t, pdpptest.Options{})
	c := newClient(t, srv, nil)
	for _, p := range []string{"v1/schema", "/v1/schema?view=compact", "/v1/streams//records"} {
		if _, err := c.Get(context.Background(), p, nil); err == nil {
			t.Errorf("Get(%q) succeeded", p)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests reached the double", n)
	}
}

func TestGetNoContent(t *testing.T) {
	srv := pdpptest.New(t, pdpptest.Options{})
	srv.Fault(pdpptest.Fault{Path: "/v1/schema", Status: http.StatusNoContent, Body: []byte{}})
	c := newClient(t, srv, nil)
	resp, err := c.Get(context.Background(), rs.Path("v1", "schema"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != http.StatusNoContent || len(resp.Body) != 0 {
		t.Errorf("status %d with %d body bytes", resp.Status, len(resp.Body))
	}
}

func TestGetTextError(t *testing.T) {
	srv := pdpptest.New(t, pdpptest.Options{})
	srv.Fault(pdpptest.Fault{
		Path: "/v1/schema", Status: http.StatusBadGateway,
		Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte("<h1>502 Bad Gateway</h1>\n"),
	})
	c := newClient(t, srv, nil)
	_, err := c.Get(context.Background(), rs.Path("v1", "schema"), nil)
	var e *rs.Error
	if !errors.As(err, &e) {
		t.Fatalf("Get = %v, want *rs.Error", err)
	}
	want := rs.Error{Status: 502, Type: "rs_error", Code: "http_502", Message: "<h1>502 Bad Gateway</h1>"}
	if diff := cmp.Diff(&want, e, cmpIgnoreRaw); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestGetLogsOneLinePerCall(t *testing.T) {
	srv := pdpptest.New(t, pdpptest.Options{})
	var logs testlog.Buffer
	c := newClient(t, srv, func(o *rs.Options) {
		o.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	resp, err := c.Get(context.Background(), rs.Path("v1", "schema"), rs.Query{{"view", "compact"}})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Get(context.Background(), rs.Path("v1", "no-such-route"), nil)

	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d log lines, want 2:\n%s", len(lines), logs.String())
	}
	first := gjson.Parse(lines[0])
	checks := map[string]string{
		"level": "DEBUG", "method": "GET", "route": "/v1/schema", "query_keys": `["view"]`,
		"status": "200", "bytes": fmt.Sprint(len(resp.Body)), "request_id": resp.RequestID,
	}
	for k, want := range checks {
		if got := first.Get(k).String(); got != want {
			t.Errorf("log %s = %q, want %q", k, got, want)
		}
	}
	// Values never reach the log: they hold search text and filter values.
	if strings.Contains(logs.String(), "compact") {
		t.Errorf("a query value was logged: %s", logs.String())
	}
	if first.Get("duration").Int() <= 0 {
		t.Errorf("log has no duration: %s", lines[0])
	}
	second := gjson.Parse(lines[1])
	if second.Get("status").Int() != 404 || second.Get("code").String() != "not_found" ||
		second.Get("request_id").String() == "" || second.Get("bytes").Int() <= 0 {
		t.Errorf("error call logged as %s", lines[1])
	}
}

// TestTokenNeverLeaks drives every outcome with a distinctive token and scans
// each error, log line and result for it.
func TestTokenNeverLeaks(t *testing.T) {
	srv := pdpptest.New(t, pdpptest.Options{})
	tok := srv.Token(pdpptest.TokenClient)
	if len(tok) < 20 {
		t.Fatalf("token %d bytes is not distinctive enough to scan for", len(tok))
	}
	echo := []byte(`{"error":{"code":"echo","message":"you sent Bearer ` + tok + `"}}`)
	faults := []pdpptest.Fault{
		{},
		{Status: 500, Body: echo},
		{Status: 200, Body: []byte(`{"you_sent":"` + tok + `"}`)},
		{Status: 401, Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte("Authorization: Bearer " + tok)},
		{Status: 403},
		{InvalidJSON: true},
		{BodyBytes: 1 << 20},
		{EndlessBody: true},
		{CloseConnection: true},
		{Delay: time.Minute},
	}
	var logs testlog.Buffer
	c := newClient(t, srv, func(o *rs.Options) {
		o.Timeout = 50 * time.Millisecond
		o.MaxBodyBytes = 64 << 10
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	var seen []string
	for i, f := range faults {
		f.Path, f.Times = "/v1/schema", 1
		srv.Fault(f)
		resp, err := c.Get(context.Background(), rs.Path("v1", "schema"), rs.Query{{"view", "compact"}})
		if err != nil {
			seen = append(seen, err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err))
			var e *rs.Error
			if errors.As(err, &e) {
				seen = append(seen, string(e.Object))
			}
		}
		if resp != nil {
			seen = append(seen, string(resp.Body), fmt.Sprint(resp.Header))
		}
		if err == nil && resp == nil {
			t.Fatalf("case %d: no result and no error", i)
		}
	}
	seen = append(seen, strings.Split(logs.String(), "\n")...)
	for _, s := range seen {
		if strings.Contains(s, tok) {
			t.Errorf("token leaked in: %.300s", s)
		}
	}
	// The echoing fault must still have produced a useful, redacted message.
	if !strings.Contains(strings.Join(seen, "\n"), "you sent Bearer [redacted]") {
		t.Error("the echoed token was not replaced by [redacted]")
	}

	// A token that cannot be sent is refused without repeating it.
	bad := "pdpp_line\nbreak_secret"
	c2 := newClient(t, srv, func(o *rs.Options) { o.Token = func() string { return bad } })
	_, err := c2.Get(context.Background(), rs.Path("v1", "schema"), nil)
	if err == nil || strings.Contains(err.Error(), "break_secret") {
		t.Errorf("unsendable token: %v", err)
	}
}
