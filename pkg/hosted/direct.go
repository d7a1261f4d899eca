package hosted

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/server"
)

// The direct path answers plain tools/call, tools/list and resources/read
// requests without the SDK's transport.
//
// For every stateless POST the SDK opens a session and decodes the body
// about nine times, each decode allocating a fresh 32 KB buffer; that was
// most of the gateway's CPU per request. A request whose headers and body
// the SDK would dispatch unchanged is instead decoded once here, run
// through the server's receiving middleware and handler (server.Direct,
// which wraps the same middleware list the SDK runs), and answered with the
// bytes the SDK would send. TestDirectMatchesSDK holds the two paths to
// identical responses, for the SDK version named in directProvenSDK.
// Anything else (initialize, discovery, other methods, list cursors,
// batches, notifications, unknown tools, odd ids or URIs, unknown _meta,
// any doubt) goes to the SDK.

// directProvenSDK is the go-sdk version TestDirectMatchesSDK proved the
// direct path byte-identical against. The test fails when go.mod moves to
// another version: the SDK's checks and encoding may have changed, so the
// comparison must be re-run (and the cases re-read) before this is bumped.
const directProvenSDK = "v1.8.0"

// directVersions are the MCP-Protocol-Version values for which the SDK
// dispatches a tools/call without header or _meta checks ("" is what it
// assumes for a request without the header: 2025-03-26).
var directVersions = map[string]bool{"": true, "2024-11-05": true, "2025-03-26": true, "2025-06-18": true, "2025-11-25": true}

// statelessVersion is the revision whose requests carry their protocol
// version, client capabilities and identity in params._meta, and name their
// method and tool in headers (Mcp-Method, Mcp-Name) that must match the body.
const statelessVersion = "2026-07-28"

// directCall is a request the direct path may answer.
type directCall struct {
	id     jsonrpc.ID
	rawID  string
	method string
	name   string // the tool of a tools/call, the URI of a resources/read
	args   json.RawMessage
	meta   json.RawMessage // params._meta, when present
}

// directEligible reports whether the headers of r let the SDK dispatch a
// tools/call without further checks. open is whether the SDK's loopback
// Host check is off for r.
func directEligible(r *http.Request, open bool) bool {
	v := r.Header.Get("MCP-Protocol-Version")
	if r.Method != http.MethodPost || (!directVersions[v] && v != statelessVersion) ||
		len(r.Header.Values("Last-Event-ID")) > 0 {
		return false
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return false
		}
	}
	if a := r.Header.Values("Accept"); len(a) != 1 || a[0] != "application/json, text/event-stream" {
		// The value every client sends is accepted without parsing.
		if !acceptsBoth(a) {
			return false
		}
	}
	if !open {
		// The SDK refuses a non-loopback Host on a loopback listener
		// (DNS rebinding); leave every such request to it.
		if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); !ok || la == nil ||
			(isLoopback(la.String()) && !isLoopback(r.Host)) {
			return false
		}
	}
	return true
}

// acceptsBoth is the Streamable HTTP rule: Accept must cover both
// application/json and text/event-stream.
func acceptsBoth(values []string) bool {
	var json, stream bool
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				json = true
			case "text/event-stream", "text/*":
				stream = true
			case "*/*":
				json, stream = true, true
			}
		}
	}
	return json && stream
}

// isLoopback is the SDK's own loopback test, to the letter. It takes a port
// and is narrower than loopback.Host (no *.localhost names, "localhost" in
// lower case only): the direct path must never serve a Host the SDK would
// refuse, so it keeps the SDK's rule rather than the project's.
func isLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// directMethods are the methods the direct path may answer, with the
// params keys each may carry besides _meta (and the one it must).
var directMethods = map[string]struct {
	keys     []string
	required string
}{
	"tools/call":     {[]string{"name", "arguments"}, "name"},
	"tools/list":     {nil, ""},
	"resources/read": {[]string{"uri"}, "uri"},
}

// parseDirect returns the request when body is exactly one JSON-RPC request
// {"jsonrpc":"2.0","id":…,"method":…,"params":{…}} of a method in
// directMethods, with nothing else in it, a plain id (an integer of at most
// 15 digits, or a string without escapes), each key once, and params of the
// method's plain shape: for tools/call a tool name and an arguments object,
// for tools/list nothing (no cursor), for resources/read a URI, and _meta. Everything else is left to
// the SDK.
func parseDirect(body []byte) (directCall, bool) {
	var c directCall
	b := bytes.TrimSpace(body)
	if len(b) == 0 || b[0] != '{' || !gjson.ValidBytes(b) {
		return c, false
	}
	var seen [4]bool // jsonrpc, id, method, params
	ok := true
	var params gjson.Result
	gjson.ParseBytes(b).ForEach(func(k, v gjson.Result) bool {
		slot := -1
		switch plainKey(k) {
		case "jsonrpc":
			slot, ok = 0, v.Type == gjson.String && v.Raw == `"2.0"`
		case "id":
			slot = 1
			c.id, ok = plainID(v)
			c.rawID = v.Raw
		case "method":
			_, known := directMethods[v.Str]
			slot, ok = 2, v.Type == gjson.String && known && v.Raw == `"`+v.Str+`"`
			c.method = v.Str
		case "params":
			slot, ok = 3, v.IsObject()
			params = v
		default:
			ok = false
		}
		if ok && seen[slot] {
			ok = false
		}
		if ok {
			seen[slot] = true
		}
		return ok
	})
	if !ok || seen != [4]bool{true, true, true, true} {
		return c, false
	}
	m := directMethods[c.method]
	var name, args, meta bool
	params.ForEach(func(k, v gjson.Result) bool {
		key := plainKey(k)
		if key != "_meta" && !slices.Contains(m.keys, key) {
			ok = false
			return false
		}
		switch key {
		case "name", "uri":
			ok = !name && v.Type == gjson.String && plainString(v.Raw)
			name, c.name = true, v.Str
		case "arguments":
			ok = !args && v.IsObject()
			args, c.args = true, json.RawMessage(v.Raw)
		case "_meta":
			ok = !meta && v.IsObject()
			meta, c.meta = true, json.RawMessage(v.Raw)
		}
		return ok
	})
	return c, ok && (m.required == "" || name)
}

// statelessMeta checks a 2026-07-28 request the way the SDK does before it
// dispatches one (the version in the header and in _meta, the client
// capabilities and identity, the method and name headers) and returns its
// _meta. It accepts only requests the SDK would dispatch unchanged; any
// doubt, including a _meta key it does not know, leaves the request to the
// SDK. The check and decoding of _meta, which a client repeats byte for
// byte in every request, are remembered in known.
func statelessMeta(r *http.Request, c directCall, known *metaMemo) (mcp.Meta, bool) {
	if r.Header.Get("Mcp-Method") != c.method || c.meta == nil ||
		(c.method != "tools/list" && r.Header.Get("Mcp-Name") != c.name) {
		return nil, false
	}
	if m, ok, found := known.get(c.meta); found {
		return m, ok
	}
	m, ok := checkMeta(c.meta)
	known.put(c.meta, m, ok)
	if !ok {
		return nil, false
	}
	return cloneMeta(m), true
}

// checkMeta checks and decodes the _meta of a 2026-07-28 request.
func checkMeta(raw json.RawMessage) (mcp.Meta, bool) {
	ok := true
	seen := map[string]bool{}
	gjson.ParseBytes(raw).ForEach(func(k, v gjson.Result) bool {
		key := plainKey(k)
		switch key {
		case mcp.MetaKeyProtocolVersion:
			ok = v.Raw == `"`+statelessVersion+`"`
		case mcp.MetaKeyClientCapabilities:
			// The SDK refuses capabilities it cannot decode into its
			// capability types; an empty object always decodes.
			ok = v.IsObject() && (isEmptyObject(v.Raw) || json.Unmarshal([]byte(v.Raw), new(clientCaps)) == nil)
		case mcp.MetaKeyClientInfo:
			ok = v.IsObject() && json.Unmarshal([]byte(v.Raw), new(mcp.Implementation)) == nil
		case mcp.MetaKeyLogLevel:
			ok = v.Type == gjson.String
		default:
			ok = false
		}
		ok = ok && !seen[key]
		seen[key] = true
		return ok
	})
	if !ok || !seen[mcp.MetaKeyProtocolVersion] || !seen[mcp.MetaKeyClientCapabilities] {
		return nil, false
	}
	var m mcp.Meta
	if json.Unmarshal(raw, &m) != nil {
		return nil, false
	}
	return m, true
}

// metaMemo remembers what checkMeta made of the _meta objects it saw, up to
// metaMemoEntries of them and metaMemoBytes each: a client sends the same
// _meta with every request, and checking and decoding it was a third of the
// gateway's own work per direct call.
type metaMemo struct {
	m sync.Map // string(raw) → metaVerdict
	n atomic.Int64
}

const (
	metaMemoEntries = 1024
	metaMemoBytes   = 2048
)

type metaVerdict struct {
	meta mcp.Meta // shared: handed out only through cloneMeta
	ok   bool
}

func (k *metaMemo) get(raw json.RawMessage) (m mcp.Meta, ok, found bool) {
	v, found := k.m.Load(string(raw))
	if !found {
		return nil, false, false
	}
	mv := v.(metaVerdict)
	if !mv.ok {
		return nil, false, true
	}
	return cloneMeta(mv.meta), true, true
}

func (k *metaMemo) put(raw json.RawMessage, m mcp.Meta, ok bool) {
	if len(raw) > metaMemoBytes || k.n.Load() >= metaMemoEntries {
		return
	}
	if _, loaded := k.m.LoadOrStore(string(raw), metaVerdict{m, ok}); !loaded {
		k.n.Add(1)
	}
}

// cloneMeta copies a decoded _meta deeply, so that what one request's
// handlers do to theirs never reaches another's.
func cloneMeta(m mcp.Meta) mcp.Meta {
	out := make(mcp.Meta, len(m))
	for k, v := range m {
		out[k] = cloneJSON(v)
	}
	return out
}

// cloneJSON copies a value encoding/json decoded into an any.
func cloneJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		c := make(map[string]any, len(x))
		for k, e := range x {
			c[k] = cloneJSON(e)
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = cloneJSON(e)
		}
		return c
	}
	return v
}

// clientCaps is the shape the SDK decodes 2026-07-28 client capabilities
// into (roots as a pointer over the older struct field). Its own accessors
// (CallToolRequest.ClientCapabilities) would do, but each decode through
// them allocates a 32 KB buffer, which was most of a direct call's memory.
type clientCaps struct {
	mcp.ClientCapabilities
	Roots *mcp.RootCapabilities `json:"roots,omitempty"`
}

func isEmptyObject(raw string) bool {
	return strings.TrimSpace(raw[1:len(raw)-1]) == ""
}

// plainString reports whether the JSON string raw reads the same decoded:
// no escapes, valid UTF-8 (which decoders would replace) and no control
// characters.
func plainString(raw string) bool {
	if strings.ContainsRune(raw, '\\') || !utf8.ValidString(raw) {
		return false
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] < 0x20 {
			return false
		}
	}
	return true
}

// plainKey is k's name when it is written without escapes, else "".
func plainKey(k gjson.Result) string {
	if len(k.Raw) != len(k.Str)+2 {
		return ""
	}
	return k.Str
}

// plainID reads an id whose SDK form is unambiguous and equal to its
// form in the request.
func plainID(v gjson.Result) (jsonrpc.ID, bool) {
	switch v.Type {
	case gjson.Number:
		r := v.Raw
		digits := strings.TrimPrefix(r, "-")
		if digits == "" || len(digits) > 15 || (len(digits) > 1 && digits[0] == '0') || r == "-0" {
			return jsonrpc.ID{}, false
		}
		for i := 0; i < len(digits); i++ {
			if digits[i] < '0' || digits[i] > '9' {
				return jsonrpc.ID{}, false
			}
		}
		id, err := jsonrpc.MakeID(v.Num)
		return id, err == nil
	case gjson.String:
		// Printable ASCII without escapes: written back byte for byte.
		if len(v.Raw) != len(v.Str)+2 || len(v.Str) > 256 {
			return jsonrpc.ID{}, false
		}
		for i := 0; i < len(v.Str); i++ {
			if c := v.Str[i]; c < 0x20 || c > 0x7e || c == '\\' || c == '"' {
				return jsonrpc.ID{}, false
			}
		}
		id, err := jsonrpc.MakeID(v.Str)
		return id, err == nil
	}
	return jsonrpc.ID{}, false
}

// serveDirect answers r when it is a direct call, and reports whether it
// did. It runs after authorisation, with the body already read.
func (h *Handler) serveDirect(w http.ResponseWriter, r *http.Request, st *reqState, body []byte, open bool) bool {
	if h.o.DisableDirectCalls || !directEligible(r, open) {
		return false
	}
	call, ok := parseDirect(body)
	if !ok {
		return false
	}
	stateless := r.Header.Get("MCP-Protocol-Version") == statelessVersion
	var meta mcp.Meta
	if stateless {
		if meta, ok = statelessMeta(r, call, &h.metas); !ok {
			return false
		}
	} else if call.meta != nil {
		// Older revisions: _meta may carry a protocol version that
		// switches the SDK to the stateless rules; leave it to the SDK.
		return false
	}
	b := h.builtFor(st)
	if b == nil || (call.method == "tools/call" && !b.direct.Has(call.name)) {
		return false
	}
	// The RS bytes a call read stay counted until its answer is written.
	ctx, answered := server.WithAnswerHold(r.Context())
	defer answered()
	// What the SDK's encoder writes for a result, without encoding the
	// result a second time.
	data := make([]byte, 0, len(call.rawID)+32)
	data = append(data, `{"jsonrpc":"2.0","id":`...)
	data = append(data, call.rawID...)
	data = append(data, `,"result":`...)
	var result []byte
	var err error
	switch call.method {
	case "tools/call":
		data, err = callTool(ctx, data, r, b.direct, call, meta, stateless)
	case "tools/list":
		result, err = b.direct.ListTools(ctx, &mcp.ListToolsRequest{
			Params: &mcp.ListToolsParams{Meta: meta},
			Extra:  &mcp.RequestExtra{Header: r.Header},
		})
	case "resources/read":
		result, err = b.direct.ReadResource(ctx, &mcp.ReadResourceRequest{
			Params: &mcp.ReadResourceParams{Meta: meta, URI: call.name},
			Extra:  &mcp.RequestExtra{Header: r.Header},
		})
	}
	if err == nil && len(result) <= directCopyBytes {
		data = append(append(slices.Grow(data, len(result)+1), result...), '}')
		result = nil
	}
	status := http.StatusOK
	if err != nil {
		status, result = errorStatus(err, stateless), nil
		data, err = jsonrpc.EncodeMessage(&jsonrpc.Response{ID: call.id, Error: err})
	}
	if err != nil {
		// Not reachable: the result was encoded above; answer anyway.
		h.log.Error("encode a direct tools/call answer", "error", err, "request_id", st.id)
		http.Error(w, "failed to encode the answer", http.StatusInternalServerError)
		return true
	}
	h.directCalls.Add(1)
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	w.Header().Set("Content-Type", "application/json")
	if status != http.StatusOK {
		w.WriteHeader(status)
	}
	_, _ = w.Write(data)
	if result != nil {
		// A stored list or a read document is written where it lies
		// rather than copied behind the envelope: an answer this size
		// goes out chunked either way.
		_, _ = w.Write(result)
		_, _ = w.Write([]byte{'}'})
	}
	return true
}

// directCopyBytes is the largest result copied into its answer's buffer;
// net/http sends an answer of more than 2 KB chunked, whether written at
// once or in parts.
const directCopyBytes = 2048

// errorStatus is the HTTP status the SDK answers a JSON-RPC error with:
// from 2026-07-28 on, 404 for an unknown method and 400 for invalid
// params, an unsupported protocol version or missing client capabilities;
// 200 otherwise.
func errorStatus(err error, stateless bool) int {
	var jerr *jsonrpc.Error
	if !stateless || !errors.As(err, &jerr) {
		return http.StatusOK
	}
	switch jerr.Code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidParams, mcp.CodeUnsupportedProtocolVersion, mcp.CodeMissingRequiredClientCapabilities:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// callTool runs a direct tools/call and appends its result's wire form to
// dst.
func callTool(ctx context.Context, dst []byte, r *http.Request, d *server.Direct, call directCall, meta mcp.Meta, stateless bool) ([]byte, error) {
	res, result, err := d.Call(ctx, &mcp.CallToolRequest{
		Params: &mcp.CallToolParamsRaw{Meta: meta, Name: call.name, Arguments: call.args},
		Extra:  &mcp.RequestExtra{Header: r.Header},
	})
	if err != nil {
		return dst, err
	}
	if !stateless {
		if result == nil {
			if result, err = server.EncodeToolResult(res); err != nil {
				return dst, err
			}
		}
		return append(slices.Grow(dst, len(result)+1), result...), nil
	}
	// What the SDK adds to every 2026-07-28 result: the server's identity
	// in _meta, and resultType, which its encoder writes after the
	// result's own fields. _meta is the first field of the encoding: a
	// result without one gets the identity encoded once per server.
	if info, ok := d.InfoMeta(); ok && len(res.Meta) == 0 {
		if result, err = server.EncodeToolResult(res); err != nil {
			return dst, err
		}
		if bytes.HasPrefix(result, []byte(`{"`)) {
			dst = slices.Grow(dst, len(info)+len(result)+40)
			dst = append(append(append(dst, `{"_meta":`...), info...), ',')
			dst = append(dst, result[1:len(result)-1]...)
			return append(dst, `,"resultType":"complete"}`...), nil
		}
	}
	c := *res
	c.Meta = maps.Clone(res.Meta)
	if c.Meta == nil {
		c.Meta = mcp.Meta{}
	}
	if _, ok := c.Meta[mcp.MetaKeyServerInfo]; !ok {
		c.Meta[mcp.MetaKeyServerInfo] = d.ServerInfo()
	}
	if result, err = server.EncodeToolResult(&c); err != nil {
		return dst, err
	}
	dst = append(slices.Grow(dst, len(result)+32), result[:len(result)-1]...)
	return append(dst, `,"resultType":"complete"}`...), nil
}
