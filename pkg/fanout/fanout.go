// Package fanout reads several grants as one resource server. A grant package
// (an mcp_package token at hosted /mcp) or a stdio server started with several
// provider URLs has N members, each a child grant with its own RS client and
// bearer. Client implements the one-method reader the tools use, so the tools
// never learn that more than one grant answers.
//
// Routing by route:
//
//   - schema and the streams list fan out to every usable member and merge,
//     each connector, stream and connection tagged with its source;
//   - search fans out to the members granted a requested stream, ranks the
//     merged hits by reciprocal rank fusion and pages them with one composite
//     cursor;
//   - every other read needs one source: the member that connection_id
//     selects, or the only usable member, or a bounded 409
//     ambiguous_connection listing the options.
//
// A member speaks only for itself, on every read (attest.go): a list entry
// (a record, a hit, a stream, a connection) naming a connection its member
// does not hold is left out and counted (source_hits_refused,
// source_entries_refused), an answer that is one object naming one is
// refused, a read by connection_id never goes to a member that merely claims
// a connection whose holder could not be asked, a connection members on
// different resource servers both claim is held by none of them, and a
// blob read naming no connection is not offered to every member. Search cursors are signed and
// bound to the package, the principal, the members and the query; the
// positions too long for a cursor are kept in a share per principal.
//
// Errors the fan-out makes itself are *rs.Error values, so the tools classify
// them like any RS answer.
//
// Discover fills in each member's connections and streams (or marks it
// unusable), and New builds the Client the tools read through:
//
//	members = fanout.Discover(ctx, members, 10*time.Second)
//	c, err := fanout.New(fanout.Options{Members: members, CursorKey: key})
//	if err != nil {
//		return err
//	}
//	tools.Register(s, &tools.Env{RS: c})
package fanout

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// RS is one member's reader: an *rs.Client, or anything with its Get.
type RS interface {
	Get(ctx context.Context, path string, q rs.Query) (*rs.Response, error)
}

// Member is one child grant of a package.
type Member struct {
	// GrantID identifies the child grant; it is unique within a package.
	GrantID string
	// ConnectionIDs are the connections the grant reads. connection_id
	// selects a member by them.
	ConnectionIDs []string
	// ConnectorKey is the source's connector key (gmail, https://…/gmail).
	ConnectorKey string
	// DisplayName is the person's label for the source; may be empty.
	DisplayName string
	// Streams are the granted stream names; nil means every stream.
	Streams []string
	// RS reads with this member's own bearer.
	RS RS
	// Unusable, when not empty, says why the member cannot be read
	// (grant_revoked, grant_expired, …). Such members are never called and
	// never offered as options.
	Unusable string
	// Undiscovered, when not empty, says why Discover could not read the
	// member's schema (a code such as rs_timeout): its connections and
	// streams are unknown. Before a read is routed by connection_id the
	// client asks it again, and while it cannot say, a connection it may
	// hold is not given to another member.
	Undiscovered string
	// Origin is the origin (scheme://host[:port]) of the resource server
	// RS reads. Two grants of one package may read the same connection
	// only on the RS that holds it, so members on different origins that
	// claim one connection cannot both be right: such a connection is
	// disputed, and no member speaks for it. "" means New takes the origin
	// from RS's BaseURL method (an *rs.Client and a credential.Guard have
	// one); a member whose origin is still unknown shares a connection with
	// no other member.
	Origin string
}

// holds reports whether the member's grant includes stream.
func (m *Member) holds(stream string) bool {
	return m.Streams == nil || slices.Contains(m.Streams, stream) || slices.Contains(m.Streams, "*")
}

func (m *Member) hasConnection(id string) bool { return slices.Contains(m.ConnectionIDs, id) }

// connectionID is the member's connection when it has exactly one.
func (m *Member) connectionID() string {
	if len(m.ConnectionIDs) == 1 {
		return m.ConnectionIDs[0]
	}
	return ""
}

// Defaults applied by New.
const (
	DefaultConcurrency  = 8
	DefaultChildTimeout = 15 * time.Second
	// MaxListedConnections bounds available_connections in the errors the
	// fan-out makes; the rest are counted and pointed at schema.
	MaxListedConnections = 12
	// DefaultSearchLimit is the page size when the caller names none, as the
	// RS's own default.
	DefaultSearchLimit = 25
	// MaxSearchLimit is the largest page the RS serves.
	MaxSearchLimit = 100
	// RRFK is the reciprocal rank fusion constant.
	RRFK = 60
)

// Options configures a Client.
type Options struct {
	Members []Member
	// Concurrency bounds the children called at once; 0 means
	// DefaultConcurrency.
	Concurrency int
	// ChildTimeout bounds each child call in a fan-out; a child that takes
	// longer is reported as source_unavailable and the others' answers are
	// used. 0 means DefaultChildTimeout.
	ChildTimeout time.Duration
	// CursorKey signs composite search cursors. Clients that must accept each
	// other's cursors (hosted mode builds one per request) share it; nil
	// means a key made once per process.
	CursorKey []byte
	// PackageID names the package in merged answers; may be empty.
	PackageID string
	// Principal identifies who the package is read for (the person and
	// client a hosted bearer was issued to). Search cursors are bound to it
	// and to PackageID, so one principal's cursor is refused for another.
	Principal string
	// Logger receives debug records (route templates and codes, never tokens
	// or record data); nil discards.
	Logger *slog.Logger
}

// Client reads N members as one RS. It is safe for concurrent use.
type Client struct {
	members   []Member
	conc      int
	timeout   time.Duration
	key       []byte
	pkgID     string
	principal string
	log       *slog.Logger
	store     *cursorStore
	now       func() time.Time

	mu       sync.Mutex
	unusable map[int]string  // members found unusable after New
	learned  map[int]*Member // undiscovered members read since New; never written after stored
	// disputed are the connections claimed by members on different
	// origins (or of unknown origin), as the members are known now;
	// replaced whole, under mu, when an undiscovered member is learned.
	disputed atomic.Pointer[map[string]bool]
}

var (
	processKeyOnce sync.Once
	processKey     []byte
)

func defaultCursorKey() []byte {
	processKeyOnce.Do(func() {
		processKey = make([]byte, 32)
		_, _ = rand.Read(processKey) // crypto/rand does not fail on supported platforms
	})
	return processKey
}

// New checks opts and returns a Client.
func New(opts Options) (*Client, error) {
	if len(opts.Members) == 0 {
		return nil, errors.New("fanout: a package needs at least one member")
	}
	seen := map[string]bool{}
	for i := range opts.Members {
		m := &opts.Members[i]
		if m.GrantID == "" {
			return nil, fmt.Errorf("fanout: member %d has no grant_id", i)
		}
		if seen[m.GrantID] {
			return nil, fmt.Errorf("fanout: grant_id %q appears twice", m.GrantID)
		}
		seen[m.GrantID] = true
		if m.RS == nil && m.Unusable == "" {
			return nil, fmt.Errorf("fanout: member %q has no RS client", m.GrantID)
		}
	}
	members := slices.Clone(opts.Members)
	for i := range members {
		m := &members[i]
		if m.Origin == "" {
			if b, ok := m.RS.(interface{ BaseURL() string }); ok {
				m.Origin = b.BaseURL()
			}
		}
		m.Origin = origin(m.Origin)
	}
	c := &Client{
		members:   members,
		conc:      opts.Concurrency,
		timeout:   opts.ChildTimeout,
		key:       opts.CursorKey,
		pkgID:     opts.PackageID,
		principal: opts.Principal,
		log:       opts.Logger,
		store:     processStore,
		now:       time.Now,
		unusable:  map[int]string{},
		learned:   map[int]*Member{},
	}
	if c.conc <= 0 {
		c.conc = DefaultConcurrency
	}
	if c.timeout <= 0 {
		c.timeout = DefaultChildTimeout
	}
	if len(c.key) == 0 {
		c.key = defaultCursorKey()
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.disputed.Store(c.findDisputed())
	return c, nil
}

// origin is the origin of a URL, scheme and host in lower case and a
// default port left out, so that two spellings of one origin compare
// equal; "" for anything without a scheme and a host.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host
}

// findDisputed lists the connections that members on different origins,
// or members one of which has no known origin, both claim. c.mu is held,
// or c is not shared yet.
func (c *Client) findDisputed() *map[string]bool {
	type claimer struct {
		idx    int
		origin string
	}
	claimed := map[string]claimer{} // connection -> its first claimer
	out := map[string]bool{}
	for i := range c.members {
		m := &c.members[i]
		if l := c.learned[i]; l != nil {
			m = l
		}
		for _, id := range m.ConnectionIDs {
			first, seen := claimed[id]
			switch {
			case !seen:
				claimed[id] = claimer{i, m.Origin}
			case first.idx != i && (first.origin == "" || first.origin != m.Origin):
				out[id] = true
			}
		}
	}
	return &out
}

// isDisputed reports whether conn is claimed by members that cannot share
// it (see Member.Origin).
func (c *Client) isDisputed(conn string) bool {
	d := c.disputed.Load()
	return d != nil && (*d)[conn]
}

// connectionOf is member i's connection when it has exactly one and no
// member on another resource server claims it too: the connection an
// entry or hit of the member that names none is taken to be from, and the
// one its source tag names.
func (c *Client) connectionOf(i int) string {
	if id := c.members[i].connectionID(); id != "" && !c.isDisputed(id) {
		return id
	}
	return ""
}

// Members returns a copy of the members, with Unusable set for those found
// unusable since New.
func (c *Client) Members() []Member {
	out := slices.Clone(c.members)
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, why := range c.unusable {
		if out[i].Unusable == "" {
			out[i].Unusable = why
		}
	}
	return out
}

// unusableReason is "" for a usable member.
func (c *Client) unusableReason(i int) string {
	if r := c.members[i].Unusable; r != "" {
		return r
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.unusable[i]
}

// markUnusable records that member i's grant refused a read: a revoked,
// expired or invalid grant, or a rejected bearer. Other failures (timeouts,
// 5xx) are transient and leave the member usable.
func (c *Client) markUnusable(i int, err error) {
	why := grantFailure(err)
	if why == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.unusable[i] == "" {
		c.unusable[i] = why
	}
}

// grantFailure names the lasting grant problem err reports, or "". A
// refusal that went through a local credential guard is not lasting, whatever
// the guard found: it re-reads its cache on every refusal, so the next call
// may succeed once the person reconnects, as with one provider alone.
func grantFailure(err error) string {
	if errors.As(err, new(*credential.RejectedError)) {
		return ""
	}
	return credential.DeadReason(err)
}

// reloaded reports a refusal after which a credential guard holds a newer
// token than the one refused.
func reloaded(err error) bool {
	var rej *credential.RejectedError
	return errors.As(err, &rej) && (rej.Outcome == credential.OutcomeReloaded || rej.Outcome == credential.OutcomeRaced)
}

// usable lists the indexes of the usable members, in package order.
func (c *Client) usable() []int {
	out := make([]int, 0, len(c.members))
	for i := range c.members {
		if c.unusableReason(i) == "" {
			out = append(out, i)
		}
	}
	return out
}

// Get reads path as one RS would, routing it as the package doc says.
func (c *Client) Get(ctx context.Context, path string, q rs.Query) (*rs.Response, error) {
	route := rs.RouteOf(path)
	conn, _ := q.Get("connection_id")
	switch route {
	case rs.RouteSchema:
		return c.schema(ctx, path, q, conn)
	case rs.RouteStreams:
		if conn != "" {
			return c.routed(ctx, path, q, conn, "")
		}
		return c.streams(ctx, path, q)
	case rs.RouteSearch, rs.RouteSearchSemantic, rs.RouteSearchHybrid:
		if conn != "" {
			return c.routed(ctx, path, q, conn, "")
		}
		return c.search(ctx, path, route, q)
	}
	seg, err := rs.ParsePath(path)
	if err == nil && (len(seg) == 0 || seg[0] != "v1") {
		// Not a read of data (protected-resource metadata and the like):
		// every child's RS answers it alike, so the first usable one does.
		if u := c.usable(); len(u) > 0 {
			return c.call(ctx, u[0], path, q, false)
		}
		return nil, c.allUnusableError()
	}
	stream := ""
	if err == nil && len(seg) >= 3 && seg[1] == "streams" {
		stream = seg[2]
	}
	if conn != "" {
		return c.routed(ctx, path, q, conn, stream)
	}
	if route == rs.RouteBlob && len(c.usable()) > 1 {
		return nil, c.blobWithoutConnection()
	}
	return c.sourceRequired(ctx, path, q, stream)
}

// blobWithoutConnection answers a blob read that names no connection when
// several members could be asked. A blob id grants nothing by itself and any
// member could have named it, so no connection is offered: trying the
// options in turn would send each member's token to its RS for an id another
// member chose. The read names the connection of the record that references
// the blob, as the handles the tools print do.
func (c *Client) blobWithoutConnection() *rs.Error {
	return c.synthetic(http.StatusConflict, "ambiguous_connection", "connection_id",
		"This package reads several sources, and a blob is read through the connection of the record that references it. "+
			"Pass the blob handle with its connection (pdpp://blob/{connection_id}/{blob_id}) as the record's fetch or query_records "+
			"result printed it; when the handle names no connection, read that record again with its connection_id first.", "", nil, 0)
}

// routed sends a read to the one member connection_id selects.
func (c *Client) routed(ctx context.Context, path string, q rs.Query, conn, stream string) (*rs.Response, error) {
	i, err := c.selectMember(ctx, conn, stream, q)
	if err != nil {
		return nil, err
	}
	return c.read(ctx, i, path, withoutKeys(q, "source_id", "connector_id"))
}

// sourceRequired serves a read that one source must answer when no
// connection_id names it.
func (c *Client) sourceRequired(ctx context.Context, path string, q rs.Query, stream string) (*rs.Response, error) {
	if len(c.members) == 1 {
		if why := c.unusableReason(0); why != "" {
			return nil, c.unusableError(0, why)
		}
		return c.read(ctx, 0, path, q)
	}
	var cands []int
	for _, i := range c.usable() {
		if stream == "" || c.members[i].holds(stream) {
			cands = append(cands, i)
		}
	}
	if len(cands) == 1 {
		return c.read(ctx, cands[0], path, q)
	}
	if len(cands) == 0 && stream != "" {
		// Only members that cannot be used hold the stream: say so, rather
		// than offer connections that do not have it.
		for i := range c.members {
			if why := c.unusableReason(i); why != "" && c.members[i].holds(stream) && c.members[i].Streams != nil {
				return nil, c.unusableError(i, why)
			}
		}
	}
	if len(cands) == 0 {
		cands = c.usable()
		switch len(cands) {
		case 0:
			return nil, c.allUnusableError()
		case 1:
			return c.read(ctx, cands[0], path, q)
		}
	}
	return nil, c.ambiguous(cands, "ambiguous_connection", "connection_id",
		"This package reads several sources. Pass connection_id to select one. Use schema to discover the available connections.")
}

// read sends a read that member i answers alone and attests its answer:
// what the member may not speak for is left out, or the answer refused
// (attest.go).
func (c *Client) read(ctx context.Context, i int, path string, q rs.Query) (*rs.Response, error) {
	resp, err := c.call(ctx, i, path, q, false)
	if err != nil {
		return nil, err
	}
	out, err := c.attest(i, path, resp)
	if err != nil || out != resp {
		c.log.DebugContext(ctx, "fanout: answer spoke for a connection its source does not hold",
			"route", rs.RouteOf(path).String(), "grant_id", c.members[i].GrantID, "refused_whole", err != nil)
	}
	return out, err
}

// call sends one request to member i with the caller's deadline (a routed
// read answers or fails as one RS would) or, in a fan-out, with the child
// timeout.
func (c *Client) call(ctx context.Context, i int, path string, q rs.Query, child bool) (*rs.Response, error) {
	if child {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, c.timeout, errChildTimeout)
		defer cancel()
	}
	resp, err := c.members[i].RS.Get(ctx, path, q)
	if reloaded(err) {
		// The member's credential guard found a new token in its cache
		// after the refusal: the read is asked once more with it.
		resp, err = c.members[i].RS.Get(ctx, path, q)
	}
	if err != nil {
		if child && context.Cause(ctx) == errChildTimeout {
			err = &rs.TransportError{Code: rs.CodeTimeout, Err: fmt.Errorf("fanout: source %s: %w", visible.Quote(c.members[i].GrantID), errChildTimeout)}
		}
		c.markUnusable(i, err)
		c.log.DebugContext(ctx, "fanout: child failed", "route", rs.RouteOf(path).String(), "grant_id", c.members[i].GrantID, "code", errCode(err))
		return nil, err
	}
	return resp, nil
}

var errChildTimeout = errors.New("fanout: child timeout")

// errCode is the stable code of err, for logs and warnings.
func errCode(err error) string {
	var re *rs.Error
	var te *rs.TransportError
	switch {
	case errors.As(err, &re):
		if re.Code != "" {
			return re.Code
		}
		return fmt.Sprintf("http_%d", re.Status)
	case errors.As(err, &te):
		return te.Code
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "error"
}

func withoutKeys(q rs.Query, keys ...string) rs.Query {
	out := make(rs.Query, 0, len(q))
	for _, p := range q {
		if !slices.Contains(keys, p.Key) {
			out = append(out, p)
		}
	}
	return out
}

// child is one member's answer in a fan-out.
type child struct {
	idx  int
	resp *rs.Response
	err  error
	// page is what the fan-out's reader made of resp, read in the child's
	// goroutine as soon as it answered.
	page *searchChild
}

// fan calls every member in idxs concurrently (at most c.conc at once), each
// with its own query and timeout, and returns the answers in idxs order. The
// added latency is the slowest child's.
//
// read, when not nil, runs in the child's goroutine on a successful answer,
// so parsing overlaps with waiting for slower children.
func (c *Client) fan(ctx context.Context, idxs []int, path string, query func(i int) rs.Query, read func(*child)) []child {
	out := make([]child, len(idxs))
	sem := make(chan struct{}, c.conc)
	var wg sync.WaitGroup
	for k, i := range idxs {
		out[k].idx = i
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				out[k].err = ctx.Err()
				return
			}
			defer func() { <-sem }()
			out[k].resp, out[k].err = c.call(ctx, i, path, query(i), true)
			if out[k].err == nil && read != nil {
				read(&out[k])
			}
		}()
	}
	wg.Wait()
	return out
}
