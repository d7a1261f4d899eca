package fanout

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// discoveryHint ends every truncated option list.
const discoveryHint = "Call schema for the full granted connection index before retrying with connection_id."

// selectMember picks the member that connection_id names, narrowed by the
// stream of the path (when the member lists its streams) and by a
// source_id/connector_id query value. Members whose connections are unknown
// are asked first; one that still cannot say may hold conn too, so conn is
// given to another member only when none is left unknown.
func (c *Client) selectMember(ctx context.Context, conn, stream string, q rs.Query) (int, error) {
	source, _ := q.Get("source_id")
	if source == "" {
		source, _ = q.Get("connector_id")
	}
	unknown := c.rediscover(ctx)
	if c.isDisputed(conn) {
		return -1, c.disputedError(conn)
	}
	var matches []int
	for i := range c.members {
		m := c.member(i)
		if !m.hasConnection(conn) || (stream != "" && !m.holds(stream)) || (source != "" && m.ConnectorKey != source) {
			continue
		}
		matches = append(matches, i)
	}
	var usable []int
	for _, i := range matches {
		if c.unusableReason(i) == "" {
			usable = append(usable, i)
		}
	}
	switch {
	case len(unknown) > 0 && len(usable) == 0 && len(unknown) == 1 && len(matches) == 0:
		// Only a member that cannot say what it holds may have conn: its
		// RS decides.
		return unknown[0], nil
	case len(unknown) > 0:
		m := c.member(unknown[0])
		label := firstOf(m.DisplayName, m.GrantID)
		return -1, c.ambiguous(append(usable, unknown...), "ambiguous_connection", "connection_id",
			"connection_id "+visible.Quote(conn)+" may belong to source "+visible.Quote(label)+
				", whose connections could not be read ("+m.Undiscovered+"), so it is not given to another source. Retry shortly, or call schema to see the sources.")
	case len(usable) == 1:
		return usable[0], nil
	case len(usable) > 1:
		return -1, c.ambiguous(usable, "ambiguous_connection", "source_id",
			"connection_id "+visible.Quote(conn)+" is read by several grants of this package. Pass source_id to select one.")
	case len(matches) > 0:
		return -1, c.unusableError(matches[0], c.unusableReason(matches[0]))
	}
	where := "package"
	if stream != "" {
		where = "package source and stream"
	}
	return -1, c.synthetic(http.StatusNotFound, "not_found", "connection_id",
		"connection_id "+visible.Quote(conn)+" is not part of the selected "+where+". Use schema to discover available connections.", "", nil, 0)
}

// member is member i as last discovered.
func (c *Client) member(i int) *Member {
	if c.members[i].Undiscovered == "" {
		return &c.members[i]
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := c.learned[i]; m != nil {
		return m
	}
	return &c.members[i]
}

// rediscover asks the usable members whose connections are still unknown
// for their schema, concurrently within the child timeout, and returns those
// that still cannot say.
func (c *Client) rediscover(ctx context.Context) []int {
	var todo []int
	for i := range c.members {
		if c.member(i).Undiscovered != "" && c.unusableReason(i) == "" {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	found := make([]Member, len(todo))
	var wg sync.WaitGroup
	for k, i := range todo {
		found[k] = c.members[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			discoverOne(ctx, &found[k], c.timeout)
		}()
	}
	wg.Wait()
	var still []int
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, i := range todo {
		m := &found[k]
		switch {
		case m.Unusable != "":
			if c.unusable[i] == "" {
				c.unusable[i] = m.Unusable
			}
		case m.Undiscovered != "":
			still = append(still, i)
		default:
			c.learned[i] = m
		}
	}
	c.disputed.Store(c.findDisputed())
	return still
}

// disputedError answers a read of a connection members on different
// resource servers both claim: whichever answered, its answer could not be
// attributed, so none is asked. The options are the connections that can
// be read.
func (c *Client) disputedError(conn string) *rs.Error {
	var claimers []string
	n := 0
	for i := range c.members {
		if !c.member(i).hasConnection(conn) {
			continue
		}
		if n++; n <= 3 {
			m := &c.members[i]
			claimers = append(claimers, strconv.Quote(firstOf(m.DisplayName, m.GrantID)))
		}
	}
	if n > 3 {
		claimers = append(claimers, strconv.Itoa(n-3)+" more")
	}
	opts := c.options(c.usable())
	retry := ""
	if len(opts) > 0 {
		retry = "connection_id"
	}
	return c.synthetic(http.StatusConflict, "ambiguous_connection", "connection_id",
		"connection_id "+strconv.Quote(conn)+" is claimed by sources on different resource servers ("+strings.Join(claimers, ", ")+
			"): no answer for it can be attributed to one of them, so it is not read. "+
			"Choose another connection; this one can be read only where a single resource server claims it.", retry, opts, len(opts))
}

// option is one entry of available_connections, from member metadata only:
// building an error never calls a child.
func (c *Client) option(i int) rs.Connection {
	m := &c.members[i]
	return rs.Connection{ConnectionID: c.connectionOf(i), ConnectorKey: m.ConnectorKey, GrantID: m.GrantID, DisplayName: m.DisplayName}
}

// options lists members idxs, a member with several connections once per
// connection; a disputed connection is never offered.
func (c *Client) options(idxs []int) []rs.Connection {
	var out []rs.Connection
	for _, i := range idxs {
		m := &c.members[i]
		if len(m.ConnectionIDs) <= 1 {
			if len(m.ConnectionIDs) == 0 || !c.isDisputed(m.ConnectionIDs[0]) {
				out = append(out, c.option(i))
			}
			continue
		}
		for _, id := range m.ConnectionIDs {
			if c.isDisputed(id) {
				continue
			}
			o := c.option(i)
			o.ConnectionID = id
			out = append(out, o)
		}
	}
	return out
}

// ambiguous is the 409 that asks for retryWith, listing at most
// MaxListedConnections of the candidates.
func (c *Client) ambiguous(idxs []int, code, retryWith, message string) *rs.Error {
	opts := c.options(idxs)
	return c.synthetic(http.StatusConflict, code, retryWith, message, retryWith, opts, len(opts))
}

// unusableError answers a read of a member whose grant cannot be used. It
// names the usable connections, so the model can choose another one.
func (c *Client) unusableError(i int, why string) *rs.Error {
	m := &c.members[i]
	label := m.DisplayName
	if label == "" {
		label = c.connectionOf(i)
	}
	if label == "" {
		label = m.GrantID
	}
	msg := "The grant for source " + visible.Quote(label) + " cannot be used (" + why + "). " +
		"Have the grant re-approved with the provider, or choose another connection."
	opts := c.options(c.usable())
	code := why
	if code == "credential_rejected" {
		code = "grant_unusable"
	}
	retry := ""
	if len(opts) > 0 {
		retry = "connection_id"
	}
	return c.synthetic(http.StatusForbidden, code, "connection_id", msg, retry, opts, len(opts))
}

// allUnusableError is the answer when no member can be read at all.
func (c *Client) allUnusableError() *rs.Error {
	return c.synthetic(http.StatusForbidden, "grant_revoked", "",
		"No grant of this package can be used (revoked, expired or rejected). Have the grants re-approved with the provider.", "", nil, 0)
}

// synthetic builds an error the fan-out answers itself, in the RS error
// envelope's terms: Object holds the full JSON error object, including the
// count, truncation flags and discovery hint.
func (c *Client) synthetic(status int, code, param, message, retryWith string, opts []rs.Connection, count int) *rs.Error {
	e := &rs.Error{Status: status, Type: code, Code: code, Message: message, Param: param, RetryWith: retryWith}
	truncated := len(opts) > MaxListedConnections
	if truncated {
		e.OmittedConnections = len(opts) - MaxListedConnections
		opts = opts[:MaxListedConnections]
		e.Message = strings.TrimSuffix(e.Message, " ") + " " + strconv.Itoa(count) + " connections match; " +
			strconv.Itoa(MaxListedConnections) + " are listed. " + discoveryHint
	}
	e.AvailableConnections = opts
	obj := map[string]any{"code": code, "type": code, "message": e.Message}
	if param != "" {
		obj["param"] = param
	}
	if retryWith != "" {
		obj["retry_with"] = retryWith
	}
	if count > 0 || opts != nil {
		obj["available_connections"] = opts
		obj["available_connection_count"] = count
	}
	if truncated {
		obj["available_connections_truncated"] = true
		obj["available_connections_omitted"] = e.OmittedConnections
		obj["discovery_hint"] = discoveryHint
	}
	e.Object, _ = json.Marshal(obj) // maps of strings, ints and structs always marshal
	return e
}
