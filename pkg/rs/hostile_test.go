package rs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// hostileToken holds a '/' so that JSON may spell it with \/.
const hostileToken = "tok/HOSTILE_5f3c9a1e7b2d4c6e8a0f"

// hostile starts a loopback RS whose every answer comes from h, and a client
// for it holding hostileToken.
func hostile(t *testing.T, h http.HandlerFunc, edit func(*rs.Options)) *rs.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return hostileClient(t, srv.URL, edit)
}

func hostileClient(t *testing.T, base string, edit func(*rs.Options)) *rs.Client {
	t.Helper()
	opts := rs.Options{BaseURL: base, Token: func() string { return hostileToken }}
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

// answer writes status, headers and body.
func answer(status int, body []byte, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}
}

// noToken fails when the token appears in s, or in s once decoded: the
// strings of JSON, JSON escapes left in a text, percent-encoding.
func noToken(t *testing.T, what, s string) {
	t.Helper()
	for _, d := range []string{s, decodeAll(s), unescapeAll(s)} {
		for _, f := range []string{d, pctDecode(d)} {
			if strings.Contains(f, hostileToken) {
				t.Errorf("%s carries the token: %.300q", what, s)
				return
			}
		}
	}
}

// unescapeAll decodes the JSON escapes of a text that is not JSON.
func unescapeAll(s string) string {
	var v string
	if json.Unmarshal([]byte(`"`+strings.ReplaceAll(s, `"`, `\"`)+`"`), &v) != nil {
		return s
	}
	return v
}

// pctDecode decodes every %XX of s, either case, and keeps any other %.
func pctDecode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// decodeAll decodes s as JSON and re-renders it without escapes, so an
// escaped echo shows up literally; non-JSON comes back unchanged.
func decodeAll(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return b.String()
}

var recordsPath = rs.Path("v1", "streams", "messages", "records")

func TestHostileRedirectIsNeverFollowed(t *testing.T) {
	var stolen atomic.Int32
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			stolen.Add(1)
		}
		answer(200, []byte(`{"object":"list","data":[{"id":"evil"}],"has_more":false}`))(w, r)
	}))
	t.Cleanup(evil.Close)

	for _, status := range []int{301, 302, 303, 307, 308} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			c := hostile(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, evil.URL+r.URL.Path+"?access_token="+hostileToken, status)
			}, nil)
			resp, err := c.Get(context.Background(), recordsPath, nil)
			checkRedirect(t, resp, err, status, evil.URL)
		})
	}
	t.Run("https to http", func(t *testing.T) {
		tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, evil.URL+r.URL.Path, http.StatusTemporaryRedirect)
		}))
		t.Cleanup(tlsSrv.Close)
		c := hostileClient(t, tlsSrv.URL, func(o *rs.Options) { o.HTTPClient = tlsSrv.Client() })
		resp, err := c.Get(context.Background(), recordsPath, nil)
		checkRedirect(t, resp, err, 307, evil.URL)
	})
	if n := stolen.Load(); n != 0 {
		t.Errorf("the other origin received the bearer %d times", n)
	}
}

func checkRedirect(t *testing.T, resp *rs.Response, err error, status int, target string) {
	t.Helper()
	var tr *rs.TransportError
	if !errors.As(err, &tr) || tr.Code != rs.CodeRedirect {
		t.Fatalf("Get = %+v, %v; want %s", resp, err, rs.CodeRedirect)
	}
	if tr.Status != status || !strings.Contains(tr.Location, target) {
		t.Errorf("status %d location %s, want %d naming %s", tr.Status, tr.Location, status, target)
	}
	if tr.BaseURL == "" || strings.Contains(tr.BaseURL, target) {
		t.Errorf("BaseURL = %q, want the provider that answered", tr.BaseURL)
	}
	if !strings.Contains(err.Error(), target) {
		t.Errorf("error does not name where it pointed: %v", err)
	}
	noToken(t, "redirect error", err.Error())
}

func TestHostileTokenEchoes(t *testing.T) {
	esc := `tok\/HOSTILE_5f3c\u0039a1e7b2d4c6e8a0f`   // \/ and a \u escape
	allU := jsonUEscape(hostileToken)                 // every character escaped
	rid := "req_" + hostileToken                      // a Request-Id built from the token
	pctAll := pctEscape(hostileToken)                 // every byte percent-encoded
	pctU := strings.ReplaceAll(pctAll, "%", `\u0025`) // and every % a \u escape
	longRID := strings.Repeat("r", 200)               // not a short id
	tests := []struct {
		name   string
		status int
		body   string
		header []string
	}{
		{"message u-escaped", 401, `{"error":{"code":"bad","message":"you sent Bearer ` + allU + `"}}`, nil},
		{"message slash-escaped", 400, `{"error":{"code":"bad","message":"token ` + esc + `"}}`, nil},
		{"code and param", 400, `{"error":{"code":"` + esc + `","param":"` + allU + `","message":"x"}}`, nil},
		{"request id header on 400", 400, `{"error":{"code":"bad","message":"x"}}`, []string{"Request-Id", rid}},
		{"request id in body", 400, `{"error":{"code":"bad","message":"x","request_id":"` + esc + `"}}`, nil},
		{"request id header on 200", 200, `{"object":"list","data":[],"has_more":false}`, []string{"Request-Id", rid}},
		{"long request id on 200", 200, `{"object":"list","data":[],"has_more":false}`, []string{"Request-Id", longRID}},
		{"inside a record", 200, `{"object":"list","data":[{"id":"r1","data":{"note":"` + allU + `","n":"` + esc + `"}}],"has_more":false}`, nil},
		{"inside a key", 200, `{"object":"list","data":[{"id":"r1","data":{"` + esc + `":1}}],"has_more":false}`, nil},
		{"text body", 502, `<p>Bearer ` + hostileToken + `</p>`, []string{"Content-Type", "text/html"}},
		{"text body, u-escaped", 502, `<p>Bearer ` + allU + `</p>`, []string{"Content-Type", "text/html"}},
		{"text body, percent-encoded", 401, `Bearer ` + pctAll, []string{"Content-Type", "text/plain"}},
		{"unterminated JSON, u-escaped", 400, `{"error":{"message":"` + allU, nil},
		{"message percent-encoded", 400, `{"error":{"code":"bad","message":"see https://x.example/?t=` + pctAll + `"}}`, nil},
		{"inside a record, percent-encoded", 200, `{"object":"list","data":[{"id":"r1","data":{"link":"https://x.example/?t=` + pctAll + `"}}],"has_more":false}`, nil},
		{"inside a record, percent-encoded after \\u escapes", 200, `{"object":"list","data":[{"id":"r1","data":{"link":"` + pctU + `"}}],"has_more":false}`, nil},
		{"headers of an answer", 200, `{"object":"list","data":[],"has_more":false}`, []string{"X-Echo", "Bearer " + pctAll, "Etag", `"` + hostileToken + `"`,
			"Content-Type", `application/json; note="` + esc + `"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := hostile(t, answer(tt.status, []byte(tt.body), tt.header...), nil)
			resp, err := c.Get(context.Background(), recordsPath, nil)
			if tt.status == 200 {
				if err != nil {
					t.Fatal(err)
				}
				if resp.BaseURL == "" || resp.BaseURL != c.BaseURL() {
					t.Errorf("Response.BaseURL = %q, want %q", resp.BaseURL, c.BaseURL())
				}
				noToken(t, "body", string(resp.Body))
				noToken(t, "request id", resp.RequestID)
				for name, vs := range resp.Header {
					noToken(t, "header "+name, name+": "+strings.Join(vs, ","))
				}
				if len(resp.RequestID) > 128 {
					t.Errorf("a %d-byte request id was kept", len(resp.RequestID))
				}
				if !json.Valid(resp.Body) {
					t.Errorf("redaction broke the JSON: %s", resp.Body)
				}
				return
			}
			var e *rs.Error
			if !errors.As(err, &e) {
				t.Fatalf("Get = %v, want *rs.Error", err)
			}
			for what, s := range map[string]string{
				"Error()": err.Error(), "message": e.Message, "code": e.Code, "param": e.Param,
				"request id": e.RequestID, "object": string(e.Object),
			} {
				noToken(t, what, s)
			}
		})
	}
}

// pctEscape percent-encodes every byte of s in lower-case hex.
func pctEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteString("%" + strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
	}
	return b.String()
}

func jsonUEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteString(`\u`)
		h := strconv.FormatInt(int64(r), 16)
		b.WriteString(strings.Repeat("0", 4-len(h)) + h)
	}
	return b.String()
}

func TestHostileDeepNesting(t *testing.T) {
	open16M := bytes.Repeat([]byte("["), 16<<20-1)
	deepRecord := []byte(`{"object":"list","has_more":false,"data":[{"id":"r","data":{"x":` +
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}}]}`)
	tests := []struct {
		name   string
		status int
		body   []byte
		ctype  string
	}{
		{"16 MB of [ as JSON", 200, open16M, "application/json"},
		{"16 MB of [ as text", 200, open16M, "text/plain"},
		{"16 MB of [ in an error", 500, open16M, "application/json"},
		{"10,000 deep record", 200, deepRecord, "application/json"},
		{"deep error object", 400, []byte(`{"error":{"code":"x","message":` + strings.Repeat("[", 10000) + `}}`), "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := hostile(t, answer(tt.status, tt.body, "Content-Type", tt.ctype), nil)
			_, err := c.Get(context.Background(), recordsPath, nil)
			var tr *rs.TransportError
			var e *rs.Error
			switch {
			case tt.status == 200 && (!errors.As(err, &tr) || tr.Code != rs.CodeInvalidResponse):
				t.Fatalf("Get = %v, want %s", err, rs.CodeInvalidResponse)
			case tt.status != 200 && !errors.As(err, &e):
				t.Fatalf("Get = %v, want *rs.Error", err)
			case tt.status != 200 && len(e.Message) > rs.MaxMessageBytes+64:
				t.Errorf("message of %d bytes", len(e.Message))
			}
		})
	}
}

func TestHostileEnvelopes(t *testing.T) {
	record := rs.Path("v1", "streams", "messages", "records", "r1")
	tests := []struct {
		name string
		path string
		body string
	}{
		{"empty object on records", recordsPath, `{}`},
		{"data is a string", recordsPath, `{"object":"list","data":"oops"}`},
		{"no data on records", recordsPath, `{"object":"list","has_more":false}`},
		{"array on schema", rs.Path("v1", "schema"), `[]`},
		{"empty object on schema", rs.Path("v1", "schema"), `{}`},
		{"data is a string on search", rs.Path("v1", "search"), `{"data":"oops"}`},
		{"record data not an object", record, `{"object":"record","id":"r1","data":"oops"}`},
		{"null on a record", record, `null`},
		{"records that are not objects", recordsPath, `{"object":"list","data":[1,"two",null]}`},
		{"one record that is not an object", recordsPath, `{"object":"list","data":[{"id":"a"},[]]}`},
		{"search hit that is not an object", rs.Path("v1", "search"), `{"object":"list","data":[{"record_key":"a"},"b"]}`},
		{"stream row that is not an object", rs.Path("v1", "streams"), `{"object":"list","data":[true]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := hostile(t, answer(200, []byte(tt.body)), nil)
			resp, err := c.Get(context.Background(), tt.path, nil)
			var tr *rs.TransportError
			if !errors.As(err, &tr) || tr.Code != rs.CodeInvalidResponse {
				t.Fatalf("Get = %+v, %v; want %s", resp, err, rs.CodeInvalidResponse)
			}
		})
	}
}

// Identifiers and continuation handles are bounded by what a client can pass
// back: at the bound an answer is served, one byte over it is
// rs_invalid_response (never cut: a cut cursor or id is unusable).
func TestHostileBoundsOnHandedOutValues(t *testing.T) {
	record := rs.Path("v1", "streams", "messages", "records", "r1")
	search := rs.Path("v1", "search")
	str := func(n int) string { return `"` + strings.Repeat("k", n) + `"` }
	for _, tt := range []struct {
		name, path string
		body       func(n int) string
		limit      int
	}{
		{"record_key of a hit", search, func(n int) string { return `{"object":"list","data":[{"stream":"s","record_key":` + str(n) + `}]}` }, rs.MaxRecordKeyBytes},
		{"id of a listed record", recordsPath, func(n int) string { return `{"object":"list","data":[{"id":` + str(n) + `,"data":{}}]}` }, rs.MaxRecordKeyBytes},
		{"id of a record", record, func(n int) string { return `{"object":"record","id":` + str(n) + `,"data":{}}` }, rs.MaxRecordKeyBytes},
		{"connection_id of a hit", search, func(n int) string {
			return `{"object":"list","data":[{"record_key":"a","connection_id":` + str(n) + `}]}`
		}, rs.MaxNameBytes},
		{"stream of a record", recordsPath, func(n int) string { return `{"object":"list","data":[{"id":"a","stream":` + str(n) + `}]}` }, rs.MaxNameBytes},
		{"next_cursor of a page", recordsPath, func(n int) string { return `{"object":"list","data":[],"next_cursor":` + str(n) + `}` }, rs.MaxHandleBytes},
		{"next_cursor of a search", search, func(n int) string { return `{"object":"list","data":[],"has_more":true,"next_cursor":` + str(n) + `}` }, rs.MaxHandleBytes},
		{"meta.next_changes_since", recordsPath, func(n int) string { return `{"object":"list","data":[],"meta":{"next_changes_since":` + str(n) + `}}` }, rs.MaxHandleBytes},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := hostile(t, answer(200, []byte(tt.body(tt.limit))), nil)
			if _, err := c.Get(context.Background(), tt.path, nil); err != nil {
				t.Fatalf("at the bound (%d bytes): %v", tt.limit, err)
			}
			c = hostile(t, answer(200, []byte(tt.body(tt.limit+1))), nil)
			_, err := c.Get(context.Background(), tt.path, nil)
			var tr *rs.TransportError
			if !errors.As(err, &tr) || tr.Code != rs.CodeInvalidResponse {
				t.Fatalf("one byte over: %v; want %s", err, rs.CodeInvalidResponse)
			}
			if msg := err.Error(); len(msg) > 1024 || !strings.Contains(msg, "can be passed back") {
				t.Errorf("message (%d bytes) does not say why, briefly: %.300s", len(msg), msg)
			}
		})
	}
}

func TestHostileInvalidUTF8(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
	}{
		{"in a record", 200, "{\"object\":\"list\",\"data\":[{\"id\":\"r\xff\",\"data\":{\"s\":\"a\xc3\x28b\xed\xa0\x80\"}}],\"has_more\":false}"},
		{"in an error message", 400, "{\"error\":{\"code\":\"c\xfe\",\"message\":\"m\xff\xff\"}}"},
		{"in a text error", 502, "bad \xff gateway"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := hostile(t, answer(tt.status, []byte(tt.body)), nil)
			resp, err := c.Get(context.Background(), recordsPath, nil)
			if tt.status == 200 {
				if err != nil {
					t.Fatal(err)
				}
				if !utf8.Valid(resp.Body) || !json.Valid(resp.Body) {
					t.Errorf("body not valid UTF-8 JSON: %q", resp.Body)
				}
				return
			}
			var e *rs.Error
			if !errors.As(err, &e) {
				t.Fatalf("Get = %v, want *rs.Error", err)
			}
			for _, s := range []string{e.Message, e.Code, err.Error(), string(e.Object)} {
				if !utf8.ValidString(s) {
					t.Errorf("not valid UTF-8: %q", s)
				}
			}
		})
	}
}

func TestHostileHugeErrorStrings(t *testing.T) {
	huge := strings.Repeat("m", 15<<20)
	var conns strings.Builder
	for i := range 1000 {
		if i > 0 {
			conns.WriteByte(',')
		}
		conns.WriteString(`{"connection_id":"cin_` + strconv.Itoa(i) + `","display_name":"` + strings.Repeat("d", 500) + `"}`)
	}
	body := `{"error":{"code":"` + strings.Repeat("c", 5000) + `","param":"` + strings.Repeat("p", 5000) +
		`","message":"` + huge + `","available_connections":[` + conns.String() + `]}}`
	c := hostile(t, answer(409, []byte(body)), nil)
	_, err := c.Get(context.Background(), recordsPath, nil)
	var e *rs.Error
	if !errors.As(err, &e) {
		t.Fatalf("Get = %v, want *rs.Error", err)
	}
	if len(e.Message) > rs.MaxMessageBytes+64 || !strings.Contains(e.Message, "cut at") {
		t.Errorf("message of %d bytes, want at most %d and a stated cut", len(e.Message), rs.MaxMessageBytes)
	}
	for what, s := range map[string]string{"code": e.Code, "param": e.Param} {
		if len(s) > rs.MaxIdentifierBytes+64 || !strings.Contains(s, "cut at") {
			t.Errorf("%s of %d bytes, want at most %d and a stated cut", what, len(s), rs.MaxIdentifierBytes)
		}
	}
	if len(e.AvailableConnections) != rs.MaxConnections || e.OmittedConnections != 1000-rs.MaxConnections {
		t.Errorf("%d connections kept, %d omitted; want %d and %d",
			len(e.AvailableConnections), e.OmittedConnections, rs.MaxConnections, 1000-rs.MaxConnections)
	}
	if len(e.AvailableConnections[0].DisplayName) > rs.MaxIdentifierBytes+64 {
		t.Errorf("display name of %d bytes", len(e.AvailableConnections[0].DisplayName))
	}
	if len(err.Error()) > 4096 {
		t.Errorf("Error() is %d bytes", len(err.Error()))
	}
}

func TestHostileRetryAfter(t *testing.T) {
	date := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		status   int
		value    string
		min, max int
	}{
		{429, "7", 7, 7},
		{503, date, 80, 91},
		{429, "soon", 0, 0},
		{503, "99999999", 86400, 86400},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.status)+" "+tt.value, func(t *testing.T) {
			c := hostile(t, answer(tt.status, []byte(`{"error":{"code":"slow_down","message":"wait"}}`), "Retry-After", tt.value), nil)
			_, err := c.Get(context.Background(), recordsPath, nil)
			var e *rs.Error
			if !errors.As(err, &e) {
				t.Fatalf("Get = %v, want *rs.Error", err)
			}
			if e.RetryAfterS < tt.min || e.RetryAfterS > tt.max {
				t.Errorf("RetryAfterS = %d, want %d..%d", e.RetryAfterS, tt.min, tt.max)
			}
		})
	}
}

// TestHostileBudget shows that bodies held under a lease count against the
// budget until the lease ends: a second read waits, then fails rs_busy.
func TestHostileBudget(t *testing.T) {
	body := []byte(`{"object":"list","has_more":false,"data":[{"t":"` + strings.Repeat("x", 1<<20) + `"}]}`)
	budget := rs.NewBudget(int64(len(body))+1024, 50*time.Millisecond)
	c := hostile(t, answer(200, body), func(o *rs.Options) { o.Budget = budget })

	ctx, release := rs.WithLease(context.Background())
	if _, err := c.Get(ctx, recordsPath, nil); err != nil {
		t.Fatal(err)
	}
	_, err := c.Get(context.Background(), recordsPath, nil)
	var tr *rs.TransportError
	if !errors.As(err, &tr) || tr.Code != rs.CodeBusy || tr.RetryAfterS <= 0 {
		t.Fatalf("second Get = %v, want %s with a retry_after", err, rs.CodeBusy)
	}
	release()
	if _, err := c.Get(context.Background(), recordsPath, nil); err != nil {
		t.Fatalf("Get after the lease ended = %v", err)
	}
}

// TestHostileConcurrentMaximumAnswers runs many maximum-size answers at once
// through a budget that holds two: every call is answered, none fails.
func TestHostileConcurrentMaximumAnswers(t *testing.T) {
	const size = 2 << 20
	body := []byte(`{"object":"list","has_more":false,"data":[{"t":"` + strings.Repeat("x", size-64) + `"}]}`)
	budget := rs.NewBudget(2*size, 30*time.Second)
	c := hostile(t, answer(200, body), func(o *rs.Options) { o.Budget = budget; o.MaxBodyBytes = size })
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			ctx, release := rs.WithLease(context.Background())
			defer release()
			resp, err := c.Get(ctx, recordsPath, nil)
			if err == nil && len(resp.Body) != len(body) {
				err = errors.New("short body")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestHostileBudgetBackground: a read done ahead of need never waits for
// the budget (it would stand ahead of the callers' reads in the queue, and
// a caller waiting on it then holds its own bytes the while), and never
// leaves its bytes in the lease of the call that started it.
func TestHostileBudgetBackground(t *testing.T) {
	body := []byte(`{"object":"list","has_more":false,"data":[{"t":"` + strings.Repeat("x", 1<<20) + `"}]}`)
	budget := rs.NewBudget(int64(len(body))+1024, time.Minute)
	c := hostile(t, answer(200, body), func(o *rs.Options) { o.Budget = budget })

	// The budget is full: a caller's read holds it.
	ctx, release := rs.WithLease(context.Background())
	if _, err := c.Get(ctx, recordsPath, nil); err != nil {
		t.Fatal(err)
	}
	bg, cancel := context.WithTimeout(rs.Background(ctx), 5*time.Second)
	defer cancel()
	_, err := c.Get(bg, recordsPath, nil)
	var tr *rs.TransportError
	if !errors.As(err, &tr) || tr.Code != rs.CodeBusy {
		t.Fatalf("background Get with the budget full = %v, want %s at once", err, rs.CodeBusy)
	}
	release()

	// With room, it reads, and gives the bytes back when Get returns even
	// though its context carries a lease.
	ctx, release = rs.WithLease(context.Background())
	defer release()
	if _, err := c.Get(rs.Background(ctx), recordsPath, nil); err != nil {
		t.Fatal(err)
	}
	if held := budget.Held(); held != 0 {
		t.Fatalf("a background read left %d bytes held in its caller's lease", held)
	}
}
