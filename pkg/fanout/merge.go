package fanout

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// kv is one JSON member: a key and its raw value.
type kv struct{ k, raw string }

// writeKey writes "k": after a comma when the object already has members.
func writeKey(b *bytes.Buffer, first *bool, k string) {
	if !*first {
		b.WriteByte(',')
	}
	*first = false
	b.WriteString(jsonw.String(k))
	b.WriteByte(':')
}

// withMembers copies object o and adds set: a key o already has keeps its
// value unless replace, in which case set's value takes its place.
func withMembers(b *bytes.Buffer, o gjson.Result, set []kv, replace bool) {
	b.WriteByte('{')
	first := true
	done := make([]bool, len(set))
	o.ForEach(func(k, v gjson.Result) bool {
		for j, s := range set {
			if s.k == k.Str {
				done[j] = true
				if replace {
					writeKey(b, &first, k.Str)
					b.WriteString(s.raw)
					return true
				}
			}
		}
		writeKey(b, &first, k.Str)
		b.WriteString(v.Raw)
		return true
	})
	for j, s := range set {
		if !done[j] {
			writeKey(b, &first, s.k)
			b.WriteString(s.raw)
		}
	}
	b.WriteByte('}')
}

// tag is the source of member i as JSON members.
func (c *Client) tag(i int) []kv {
	m := &c.members[i]
	out := make([]kv, 0, 4)
	if id := c.connectionOf(i); id != "" {
		out = append(out, kv{"connection_id", jsonw.String(id)})
	}
	if m.ConnectorKey != "" {
		out = append(out, kv{"connector_key", jsonw.String(m.ConnectorKey)})
	}
	out = append(out, kv{"grant_id", jsonw.String(m.GrantID)})
	if m.DisplayName != "" {
		out = append(out, kv{"display_name", jsonw.String(m.DisplayName)})
	}
	return out
}

func tagObject(t []kv) string {
	var b bytes.Buffer
	withMembers(&b, gjson.Result{}, t, false)
	return b.String()
}

// warning is one meta.warnings entry.
type warning struct {
	Code    string          `json:"code"`
	Message string          `json:"message"`
	Source  json.RawMessage `json:"source,omitempty"`
}

// childWarning reports a child that failed in a fan-out. The merge goes on
// without it.
func (c *Client) childWarning(ch child) warning {
	m := &c.members[ch.idx]
	label := m.DisplayName
	if label == "" {
		label = m.GrantID
	}
	msg := "Source " + visible.Quote(label) + " did not answer (" + errCode(ch.err) + "); results are partial."
	if why := credential.RefusalCode(ch.err); why != "" {
		msg = "Source " + visible.Quote(label) + " refused the read (" + why + "); have the grant re-approved or reconnect it, or choose another connection. It is asked again on the next call."
	}
	if why := c.unusableReason(ch.idx); why != "" {
		msg = "Source " + visible.Quote(label) + " cannot be used (" + why + "); have the grant re-approved or choose another connection."
	}
	return warning{Code: "source_unavailable", Message: msg, Source: json.RawMessage(tagObject(c.tag(ch.idx)))}
}

// unusableWarnings report members left out of a fan-out because their grant
// cannot be used.
func (c *Client) unusableWarnings(skip map[int]bool) []warning {
	var out []warning
	for i := range c.members {
		why := c.unusableReason(i)
		if why == "" || skip[i] {
			continue
		}
		m := &c.members[i]
		label := m.DisplayName
		if label == "" {
			label = m.GrantID
		}
		out = append(out, warning{Code: "source_unavailable",
			Message: "Source " + visible.Quote(label) + " cannot be used (" + why + "); have the grant re-approved or choose another connection.",
			Source:  json.RawMessage(tagObject(c.tag(i)))})
	}
	return out
}

// refusedWarnings report the members whose hits on this page named a
// connection the member does not hold.
func (c *Client) refusedWarnings(pages []*searchChild) []warning {
	var out []warning
	for _, p := range pages {
		if p.refused > 0 {
			out = append(out, c.refusedWarning(p.idx, codeHitsRefused, refused{entries: p.refused}))
		}
	}
	return out
}

// packageMeta writes meta: {package:{…}, warnings:[…]}.
func (c *Client) packageMeta(b *bytes.Buffer, extra []kv, warns []warning) {
	pkg := []kv{{"member_count", strconv.Itoa(len(c.members))}, {"partial", strconv.FormatBool(len(warns) > 0)}}
	pkg = append(pkg, extra...)
	var p bytes.Buffer
	withMembers(&p, gjson.Result{}, pkg, false)
	meta := []kv{{"package", p.String()}}
	if len(warns) > 0 {
		w, _ := json.Marshal(warns) // strings and raw JSON always encode
		meta = append(meta, kv{"warnings", string(w)})
	}
	withMembers(b, gjson.Result{}, meta, false)
}

// synthResponse wraps a body the fan-out built.
func synthResponse(body []byte) *rs.Response {
	return &rs.Response{Status: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Body: body}
}

// firstError is the error of the first failed child, for when all failed.
func firstError(chs []child) error {
	for _, ch := range chs {
		if ch.err != nil {
			return ch.err
		}
	}
	return nil
}

// schema serves GET /v1/schema.
func (c *Client) schema(ctx context.Context, path string, q rs.Query, conn string) (*rs.Response, error) {
	detail, _ := q.Get("detail")
	stream, _ := q.Get("stream")
	if conn != "" {
		return c.routed(ctx, path, q, conn, stream)
	}
	if detail == "full" {
		if stream == "" {
			return nil, c.synthetic(http.StatusBadRequest, "invalid_request", "detail",
				`detail "full" needs stream: name one stream.`, "", nil, 0)
		}
		var holders []int
		for _, i := range c.usable() {
			if c.members[i].holds(stream) {
				holders = append(holders, i)
			}
		}
		switch {
		case len(holders) == 1:
			return c.read(ctx, holders[0], path, q)
		case len(holders) > 1:
			return nil, c.ambiguous(holders, "ambiguous_schema_detail", "connection_id",
				"Stream "+visible.Quote(stream)+" is granted by several sources of this package. Pass connection_id to choose the one whose full schema to read.")
		}
	}
	chs, err := c.fanAll(ctx, path, q)
	if err != nil {
		return nil, err
	}
	return c.mergeSchema(chs)
}

// fanAll asks every usable member the same path and query.
func (c *Client) fanAll(ctx context.Context, path string, q rs.Query) ([]child, error) {
	idxs := c.usable()
	if len(idxs) == 0 {
		return nil, c.allUnusableError()
	}
	return c.fan(ctx, idxs, path, func(int) rs.Query { return q }, nil), nil
}

// gather hands each child that answered to take, which reports false when
// the answer is unusable. It returns a warning for every child that failed
// and every member left out as unusable, or the first child's error when no
// child gave a usable answer.
func (c *Client) gather(chs []child, take func(child) bool) ([]warning, error) {
	var warns []warning
	failed := map[int]bool{}
	ok := 0
	for _, ch := range chs {
		if ch.err == nil && !take(ch) {
			ch = child{idx: ch.idx, err: &rs.TransportError{Code: rs.CodeInvalidResponse}}
		}
		if ch.err != nil {
			failed[ch.idx] = true
			warns = append(warns, c.childWarning(ch))
			continue
		}
		ok++
	}
	if ok == 0 {
		return nil, firstError(chs)
	}
	return append(warns, c.unusableWarnings(failed)...), nil
}

// schemaDoc is the schema object of a body, unwrapped from data when the RS
// wrapped it.
func schemaDoc(body []byte) gjson.Result {
	doc := gjson.ParseBytes(body)
	if d := doc.Get("data"); d.IsObject() && (d.Get("connectors").IsArray() || d.Get("streams").IsArray()) {
		return d
	}
	return doc
}

// mergeSchema concatenates the children's connectors, streams and
// granted_connections, each tagged with its source and de-duplicated.
func (c *Client) mergeSchema(chs []child) (*rs.Response, error) {
	var base gjson.Result
	var connectors, streams, granted [][]byte
	seen := map[string]bool{}
	var left []warning
	warns, err := c.gather(chs, func(ch child) bool {
		r, ok := c.siftChild(&ch, shapeSchema)
		if !ok {
			return false
		}
		if r.any() {
			left = append(left, c.refusedWarning(ch.idx, codeEntriesRefused, r))
		}
		doc := schemaDoc(ch.resp.Body)
		if !doc.IsObject() {
			return false
		}
		if !base.Exists() {
			base = doc
		}
		t := c.tag(ch.idx)
		conn := c.connectionOf(ch.idx)
		gid := c.members[ch.idx].GrantID
		doc.Get("connectors").ForEach(func(_, v gjson.Result) bool {
			key := "c::" + v.Get("source.id").Str + "::" + gid
			if seen[key] {
				return true
			}
			seen[key] = true
			var src bytes.Buffer
			withMembers(&src, v.Get("source"), t, true)
			var b bytes.Buffer
			withMembers(&b, v, []kv{{"source", src.String()}}, true)
			connectors = append(connectors, b.Bytes())
			return true
		})
		doc.Get("streams").ForEach(func(_, v gjson.Result) bool {
			key := "s::" + v.Get("name").Str + "::" + gid + "::" + conn
			if seen[key] {
				return true
			}
			seen[key] = true
			var b bytes.Buffer
			withMembers(&b, v, []kv{{"source", tagObject(t)}}, true)
			streams = append(streams, b.Bytes())
			return true
		})
		doc.Get("granted_connections").ForEach(func(_, v gjson.Result) bool {
			key := "g::" + v.Get("connection_id").Str + "::" + gid
			if seen[key] {
				return true
			}
			seen[key] = true
			var b bytes.Buffer
			withMembers(&b, v, []kv{{"source", tagObject(t)}}, true)
			granted = append(granted, b.Bytes())
			return true
		})
		return true
	})
	if err != nil {
		return nil, err
	}
	warns = append(warns, left...)
	join := func(items [][]byte) string { return string(jsonw.Array(items)) }
	set := []kv{{"connectors", join(connectors)}}
	if streams != nil || base.Get("streams").Exists() {
		set = append(set, kv{"streams", join(streams)})
	}
	if granted != nil || base.Get("granted_connections").Exists() {
		set = append(set, kv{"granted_connections", join(granted)})
	}
	if base.Get("connector_count").Exists() {
		set = append(set, kv{"connector_count", strconv.Itoa(len(connectors))})
	}
	if base.Get("stream_count").Exists() {
		set = append(set, kv{"stream_count", strconv.Itoa(len(streams))})
	}
	bearer := []kv{{"scope", `"package"`}, {"token_kind", `"mcp_package"`}}
	if c.pkgID != "" {
		bearer = append(bearer, kv{"grant_package_id", jsonw.String(c.pkgID)})
	}
	set = append(set, kv{"bearer", tagObject(bearer)}, kv{"package", c.packageSources()})
	var meta bytes.Buffer
	c.packageMeta(&meta, nil, warns)
	set = append(set, kv{"meta", meta.String()})
	var out bytes.Buffer
	withMembers(&out, base, set, true)
	return synthResponse(out.Bytes()), nil
}

// packageSources is data.package: every member's tag, unusable ones with
// their reason.
func (c *Client) packageSources() string {
	var srcs [][]byte
	for i := range c.members {
		t := c.tag(i)
		if why := c.unusableReason(i); why != "" {
			t = append(t, kv{"unusable", jsonw.String(why)})
		}
		srcs = append(srcs, []byte(tagObject(t)))
	}
	set := []kv{{"grant_package", "true"}, {"member_count", strconv.Itoa(len(c.members))},
		{"sources", string(jsonw.Array(srcs))}}
	if c.pkgID != "" {
		set = append(set, kv{"grant_package_id", jsonw.String(c.pkgID)})
	}
	return tagObject(set)
}

// streams serves GET /v1/streams without connection_id: every usable
// member's rows, each tagged with its source.
func (c *Client) streams(ctx context.Context, path string, q rs.Query) (*rs.Response, error) {
	chs, err := c.fanAll(ctx, path, q)
	if err != nil {
		return nil, err
	}
	var rows [][]byte
	var left []warning
	warns, err := c.gather(chs, func(ch child) bool {
		r, ok := c.siftChild(&ch, shapeStreams)
		if !ok {
			return false
		}
		if r.any() {
			left = append(left, c.refusedWarning(ch.idx, codeEntriesRefused, r))
		}
		t := c.tag(ch.idx)
		tagged := append([]kv{{"source", tagObject(t)}}, t...)
		gjson.GetBytes(ch.resp.Body, "data").ForEach(func(_, v gjson.Result) bool {
			var b bytes.Buffer
			withMembers(&b, v, tagged[:1], true)
			row := gjson.ParseBytes(b.Bytes())
			b.Reset()
			withMembers(&b, row, tagged[1:], false)
			rows = append(rows, b.Bytes())
			return true
		})
		return true
	})
	if err != nil {
		return nil, err
	}
	warns = append(warns, left...)
	var out bytes.Buffer
	out.WriteString(`{"object":"list","url":`)
	out.WriteString(jsonw.String(path))
	out.WriteString(`,"has_more":false,"data":`)
	out.Write(jsonw.Array(rows))
	out.WriteString(`,"meta":`)
	c.packageMeta(&out, nil, warns)
	out.WriteByte('}')
	return synthResponse(out.Bytes()), nil
}
