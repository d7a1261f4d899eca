package pdpptest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// pdppVersion is the only PDPP-Version the reference accepts and echoes.
const pdppVersion = "2026-04-06"

// Options configures a double.
type Options struct {
	Dataset         *dataset.Dataset // nil: dataset.Gmail()
	DisableSemantic bool             // unmount /v1/search/semantic (and hybrid); metadata says unsupported
	DisableHybrid   bool
	Logger          *slog.Logger // nil: discard

	// Addr is the listen address; empty means "127.0.0.1:0".
	Addr string
	// ChangeRetention keeps at most this many versions of change history per
	// (connection, stream); a changes_since token older than that answers 410
	// cursor_expired. 0 keeps all history.
	ChangeRetention int
	// Now is the clock for freshness, tombstones and Upsert emitted_at; nil
	// means time.Now.
	Now func() time.Time
	// LexicalCandidateWindow lowers the lexical search's per-(connection,
	// stream, field) candidate cap (the reference's is 200) so tests can reach
	// an incomplete ranking (meta.recall.complete=false) with a few records.
	// 0 keeps the reference value.
	LexicalCandidateWindow int
	// TokenSeed, when set, derives the tokens issued at start from it, so
	// they are the same on every start with the same seed and dataset. Such
	// tokens are as secret as the seed: use it for demos on synthetic data.
	// Empty: random tokens.
	TokenSeed string
	// Issuer is the authorization server's issuer URL as clients reach it
	// (an https origin behind a proxy, say); empty means http:// and the
	// Host each request was sent to.
	Issuer string
	// AuthClock is the authorization server's clock (code, token and
	// consent lifetimes); nil means time.Now. Now, the dataset's clock,
	// does not move in the demo.
	AuthClock func() time.Time
}

// Request is one request the double received. Header is as received,
// Authorization included, so tests can check what a client sent; the double
// never logs it.
type Request struct {
	Method, Path, RawQuery string
	Header                 http.Header
}

// Server is a running double: a real HTTP server on loopback serving one dataset.
type Server struct {
	opts   Options
	ds     *dataset.Dataset
	log    *slog.Logger
	now    func() time.Time
	ln     net.Listener
	http   *http.Server
	mux    *http.ServeMux
	url    string
	tokens *tokenTable
	store  *store
	as     *authServer

	mu       sync.Mutex
	requests []Request
	faults   []*activeFault
	closed   bool
}

// Start serves opts.Dataset on 127.0.0.1 (a free port unless opts.Addr says
// otherwise) until Close.
func Start(opts Options) (*Server, error) {
	ds := opts.Dataset
	if ds == nil {
		var err error
		if ds, err = dataset.Gmail(); err != nil {
			return nil, fmt.Errorf("pdpptest: load gmail dataset: %w", err)
		}
	}
	s := &Server{opts: opts, ds: ds, log: opts.Logger, now: opts.Now, tokens: newTokenTable(opts.TokenSeed)}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.now == nil {
		s.now = time.Now
	}
	var err error
	if s.store, err = newStore(ds, opts.ChangeRetention); err != nil {
		return nil, fmt.Errorf("pdpptest: dataset %q: %w", ds.Name, err)
	}
	if err := s.issueStandardTokens(); err != nil {
		return nil, fmt.Errorf("pdpptest: %w", err)
	}
	s.mux = http.NewServeMux()
	s.routes()

	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	if s.ln, err = net.Listen("tcp", addr); err != nil {
		return nil, fmt.Errorf("pdpptest: listen: %w", err)
	}
	s.url = "http://" + s.ln.Addr().String()
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
	go func() {
		if err := s.http.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("pdpptest: serve", "err", err)
		}
	}()
	s.log.Info("pdpptest: serving", "url", s.url, "dataset", ds.Name)
	return s, nil
}

// New starts a double for a test and stops it when the test ends.
func New(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s, err := Start(opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("pdpptest: close: %v", err)
		}
	})
	return s
}

// URL is the base URL, "http://127.0.0.1:PORT", without a trailing slash.
func (s *Server) URL() string { return s.url }

// Dataset returns the dataset being served.
func (s *Server) Dataset() *dataset.Dataset { return s.ds }

// Close stops the server at once. Requests still in flight (a Delay or
// EndlessBody fault, say) are cut off.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	return s.http.Close()
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// ResetRequests forgets the requests received so far.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
}

// ServeHTTP records the request, applies an injected fault if one matches, sets
// the headers every answer carries, checks PDPP-Version, then routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone()})
	s.mu.Unlock()
	s.log.Debug("pdpptest: request", "method", r.Method, "path", r.URL.Path)

	reqID := r.Header.Get("Request-Id")
	if reqID == "" || len(reqID) > 200 {
		reqID = newRequestID()
	}
	w.Header().Set("Request-Id", reqID)
	w.Header().Set("PDPP-Version", pdppVersion)

	if f := s.matchFault(r); f != nil {
		if !s.applyFault(w, r, f, reqID) {
			return
		}
	}
	if v := r.Header.Get("PDPP-Version"); v != "" && v != pdppVersion {
		writeError(w, reqID, errf(http.StatusBadRequest, "unsupported_version",
			"Unsupported PDPP-Version %q; this server speaks %s", v, pdppVersion).param("PDPP-Version"))
		return
	}
	s.mux.ServeHTTP(w, r)
}

func newRequestID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "req_" + hex.EncodeToString(b)
}

// call is one request as a route handler sees it.
type call struct {
	s     *Server
	w     http.ResponseWriter
	r     *http.Request
	reqID string
	q     *query
	// who is the authenticated caller; nil on public routes.
	who *principal
}

// ok finalizes body with the canonical envelope and sends it as 200.
func (c *call) ok(body *object) error {
	writeJSON(c.w, http.StatusOK, finalize(body, c))
	return nil
}

// routeFunc handles one route. A returned *apiError becomes the error
// envelope; any other error becomes a 500 api_error.
type routeFunc func(c *call) error

// read wraps a route that needs an authenticated owner or client bearer.
func (s *Server) read(h routeFunc) http.HandlerFunc {
	return s.serve(h, true)
}

// public wraps a route that needs no bearer.
func (s *Server) public(h routeFunc) http.HandlerFunc {
	return s.serve(h, false)
}

func (s *Server) serve(h routeFunc, auth bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := &call{s: s, w: w, r: r, reqID: w.Header().Get("Request-Id"), q: parseQuery(r.URL.RawQuery)}
		if auth {
			who, aerr := s.authenticate(r)
			if aerr != nil {
				writeError(w, c.reqID, aerr)
				return
			}
			c.who = who
		}
		if err := h(c); err != nil {
			var ae *apiError
			if !errors.As(err, &ae) {
				s.log.Error("pdpptest: route failed", "path", r.URL.Path, "err", err)
				ae = errf(http.StatusInternalServerError, "api_error", "Internal error in the test double")
			}
			writeError(w, c.reqID, ae)
		}
	}
}

// routes mounts every route. The four areas a colleague owns register
// themselves from their own files.
func (s *Server) routes() {
	m := s.mux
	m.HandleFunc("GET /v1/schema", s.read(s.handleSchema))
	m.HandleFunc("GET /v1/streams", s.read(s.handleStreams))
	m.HandleFunc("GET /v1/streams/{stream}", s.read(s.handleStreamMetadata))
	m.HandleFunc("GET /v1/streams/{stream}/records", s.read(s.handleRecords))
	m.HandleFunc("GET /v1/streams/{stream}/records/{id}", s.read(s.handleRecord))
	m.HandleFunc("GET /v1/streams/{stream}/aggregate", s.read(s.handleAggregate))
	m.HandleFunc("/v1/owner/", s.read(s.handleOwnerOnly))
	m.HandleFunc("/v1/ingest/", s.read(s.handleOwnerOnly))
	s.mountSearch(m)
	s.mountFieldWindow(m)
	s.mountBlobs(m)
	s.mountMetadata(m)
	s.mountIntrospection(m)
	s.mountAuthorizationServer(m)
	m.HandleFunc("/", s.public(handleNoRoute))
}

// handleNoRoute answers paths no route serves.
func handleNoRoute(c *call) error {
	return notFound("Route %s %s not found", c.r.Method, c.r.URL.Path)
}

// handleOwnerOnly stands for the reference's owner control plane (connections,
// ingest): client tokens are refused as the reference refuses them; the double
// implements none of it for owners.
func (s *Server) handleOwnerOnly(c *call) error {
	if !c.who.owner() {
		return errf(http.StatusForbidden, "permission_error", "Owner token required")
	}
	return errf(http.StatusNotImplemented, "not_implemented",
		"The test double does not implement the owner control plane (%s %s); use Server.Upsert and Server.Delete to change data", c.r.Method, c.r.URL.Path)
}
