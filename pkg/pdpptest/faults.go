package pdpptest

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"
)

// Fault is a misbehaviour to inject on matching requests. Fields combine: a
// Delay alone delays the real answer; a Status or Body replaces it; SlowBody
// trickles whatever body would be sent; the other kinds replace the answer.
type Fault struct {
	Path        string        // exact path, or a pattern with * for one segment: "/v1/streams/*/records"
	Status      int           // fixed answer status (default 200 when a Body is given)
	Header      http.Header   // added to the answer
	Body        []byte        // fixed answer body; with only a Status, a standard error envelope is sent
	Delay       time.Duration // before answering (honour request cancellation)
	BodyBytes   int64         // a syntactically valid JSON body of this many bytes
	SlowBody    bool          // trickle the body slowly
	EndlessBody bool          // never finish the body
	InvalidJSON bool          // 200 with application/json content type and a broken body
	// CloseConnection hijacks the connection and closes it without answering.
	CloseConnection bool
	Times           int // 0: every matching request; n: the next n
}

// Trickle pacing for SlowBody: small enough to be observably slow, fast enough
// that a test reading the whole body stays quick.
const (
	slowChunk    = 16
	slowInterval = 5 * time.Millisecond
	endlessChunk = 4096
)

type activeFault struct {
	f    Fault
	left int // remaining uses when f.Times > 0
}

// Fault injects f on matching requests until remove is called (or f.Times
// uses are spent). The newest matching fault wins.
func (s *Server) Fault(f Fault) (remove func()) {
	af := &activeFault{f: f, left: f.Times}
	s.mu.Lock()
	s.faults = append(s.faults, af)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, x := range s.faults {
			if x == af {
				s.faults = append(s.faults[:i], s.faults[i+1:]...)
				return
			}
		}
	}
}

// matchFault returns the fault for r, consuming one use of a counted fault.
func (s *Server) matchFault(r *http.Request) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.faults) - 1; i >= 0; i-- {
		af := s.faults[i]
		if !pathMatches(af.f.Path, r.URL.EscapedPath()) {
			continue
		}
		f := af.f
		if af.f.Times > 0 {
			af.left--
			if af.left <= 0 {
				s.faults = append(s.faults[:i], s.faults[i+1:]...)
			}
		}
		return &f
	}
	return nil
}

// pathMatches compares segment by segment; "*" matches exactly one segment.
func pathMatches(pattern, path string) bool {
	if pattern == path {
		return true
	}
	ps, xs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(xs) {
		return false
	}
	for i := range ps {
		if ps[i] != "*" && ps[i] != xs[i] {
			return false
		}
	}
	return true
}

// applyFault answers r according to f. It returns true when the request should
// continue to its route (a pure Delay or Header fault).
func (s *Server) applyFault(w http.ResponseWriter, r *http.Request, f *Fault, reqID string) (cont bool) {
	if f.Delay > 0 {
		t := time.NewTimer(f.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return false
		}
	}
	for k, vs := range f.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	switch {
	case f.CloseConnection:
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
			}
		}
		return false
	case f.EndlessBody:
		writeEndless(w, r, statusOr(f.Status, http.StatusOK))
		return false
	}

	var status int
	var body []byte
	ctype := contentTypeJSON
	switch {
	case f.InvalidJSON:
		status, body = statusOr(f.Status, http.StatusOK), []byte(`{"object":"list","data":[{"object":"record","id":`)
	case f.BodyBytes > 0:
		status, body = statusOr(f.Status, http.StatusOK), paddedJSON(f.BodyBytes)
	case f.Body != nil:
		status, body = statusOr(f.Status, http.StatusOK), f.Body
		if ct := f.Header.Get("Content-Type"); ct != "" {
			ctype = ct
		}
	case f.Status != 0:
		status = f.Status
		b, _ := marshal(errorBody(injectedError(f.Status), reqID))
		body = b
	case f.SlowBody:
		// Trickle the real answer.
		rec := httptest.NewRecorder()
		s.mux.ServeHTTP(rec, r)
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		trickle(w, r, rec.Body.Bytes())
		return false
	default:
		return true // a pure Delay or Header fault
	}
	w.Header().Set("Content-Type", ctype)
	if f.SlowBody {
		w.WriteHeader(status)
		trickle(w, r, body)
		return false
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
	return false
}

func statusOr(s, def int) int {
	if s == 0 {
		return def
	}
	return s
}

// injectedError is the envelope sent for a Status-only fault, with the code the
// reference uses for that status where it has one.
func injectedError(status int) *apiError {
	code := "api_error"
	switch status {
	case http.StatusTooManyRequests:
		code = "rate_limit_exceeded"
	case http.StatusUnauthorized:
		code = "authentication_error"
	case http.StatusForbidden:
		code = "permission_error"
	case http.StatusNotFound:
		code = "not_found"
	case http.StatusBadRequest:
		code = "invalid_request"
	}
	return errf(status, code, "Injected fault: HTTP %d", status)
}

// paddedJSON returns a valid JSON object of exactly n bytes (at least the
// smallest object the padding scheme allows).
func paddedJSON(n int64) []byte {
	const head, tail = `{"object":"list","data":[],"has_more":false,"padding":"`, `"}`
	pad := n - int64(len(head)+len(tail))
	if pad < 0 {
		pad = 0
	}
	var b bytes.Buffer
	b.Grow(int(n))
	b.WriteString(head)
	b.Write(bytes.Repeat([]byte("x"), int(pad)))
	b.WriteString(tail)
	return b.Bytes()
}

// trickle writes body a few bytes at a time, flushing each, until done or the
// client goes away.
func trickle(w http.ResponseWriter, r *http.Request, body []byte) {
	fl, _ := w.(http.Flusher)
	t := time.NewTicker(slowInterval)
	defer t.Stop()
	for len(body) > 0 {
		n := min(slowChunk, len(body))
		if _, err := w.Write(body[:n]); err != nil {
			return
		}
		body = body[n:]
		if fl != nil {
			fl.Flush()
		}
		if len(body) == 0 {
			return
		}
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
	}
}

// writeEndless starts a JSON list and never finishes it.
func writeEndless(w http.ResponseWriter, r *http.Request, status int) {
	w.Header().Set("Content-Type", contentTypeJSON)
	w.WriteHeader(status)
	fl, _ := w.(http.Flusher)
	chunk := bytes.Repeat([]byte(`{"object":"record","id":"x"},`), endlessChunk/28)
	if _, err := w.Write([]byte(`{"object":"list","data":[`)); err != nil {
		return
	}
	for {
		if r.Context().Err() != nil {
			return
		}
		if _, err := w.Write(chunk); err != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
	}
}
