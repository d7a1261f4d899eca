package tools

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/evidence"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/resultid"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// Resource templates. They serve hosts that read resources; nothing a
// resource returns is reachable only that way:
//
//	pdpp://stream/{name}         the stream's metadata (schema(stream) covers it)
//	pdpp://record/{handle}       the record, binary values as metadata (fetch)
//	pdpp://field-window/{handle} one field window (read_record_field)
//
// A read that fails is a JSON-RPC error, never a successful read holding an
// error document (which a host could mistake for content): -32602 when the URI
// is malformed or the RS refused the request (any 4xx, not found included),
// -32603 when the RS failed or could not be reached. The message is the same
// error text the tools give (code, status, request_id, candidates, next step);
// data carries the code, the HTTP status and request id when the RS answered,
// and the URI.
var resourceTemplates = []struct {
	tmpl *mcp.ResourceTemplate
	read func(ctx context.Context, env *Env, uri string) (*mcp.ResourceContents, error)
}{
	{&mcp.ResourceTemplate{Name: "pdpp-stream", URITemplate: "pdpp://stream/{name}", MIMEType: "application/json",
		Title: "PDPP stream metadata", Description: "Metadata of one granted stream. {name} is a stream name " +
			"as schema lists it, or connection_id/name when several connections hold the stream; completion offers " +
			"exactly the values that read."}, readStreamResource},
	{&mcp.ResourceTemplate{Name: "pdpp-record", URITemplate: "pdpp://record/{handle}", MIMEType: "application/json",
		Title: "PDPP record", Description: "One grant-scoped record; binary values appear as metadata. " +
			"{handle} is a record id exactly as a tool printed it (connection_id/stream:record_id), " +
			"percent-encoded, or a pdpp://record/ URI a tool printed, used whole."}, readRecordResource},
	{&mcp.ResourceTemplate{Name: "pdpp-field-window", URITemplate: "pdpp://field-window/{handle}", MIMEType: "text/plain",
		Title: "PDPP record field window", Description: "One bounded window of a record field, as read_record_field " +
			"renders it. {handle} is unpadded base64url of the JSON object " +
			`{"v":1,"kind":"field-window","connection_id","stream","record_id","field_path"} plus any of ` +
			"read_record_field's cursor, offset_chars, limit_chars, q, before_chars, after_chars."}, readFieldWindowResource},
	{&mcp.ResourceTemplate{Name: "pdpp-blob", URITemplate: "pdpp://blob/{connection_id}/{blob_id}",
		Title: "PDPP blob", Description: "The bytes of a blob a granted record references (GET /v1/blobs/{blob_id}), " +
			"with the resource server's media type: text types as text, others base64. Use the handle exactly as a " +
			"record's blob_ref printed it (fetch: pdpp://blob/…), without a ?query. A blob over the size bound is an error stating its size."}, readBlobResource},
}

// streamTemplate is the template whose {name} completion offers.
const streamTemplate = "pdpp://stream/{name}"

// maxCompletions is the protocol's cap on completion values per answer.
const maxCompletions = 100

// Completion answers completion/complete: for the {name} of
// pdpp://stream/{name}, the granted stream names that start with what the
// user typed (one GET /v1/streams, which lists only what the grant shows);
// for every other reference, nothing.
func Completion(env *Env) func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	e := *env
	if e.Logger == nil {
		e.Logger = slog.New(slog.DiscardHandler)
	}
	return func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		none := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
		p := req.Params
		if p == nil || p.Ref == nil || p.Ref.Type != "ref/resource" || p.Ref.URI != streamTemplate || p.Argument.Name != "name" {
			return none, nil
		}
		refs, err := grantedStreams(ctx, &e)
		if err != nil {
			e.Logger.DebugContext(ctx, "stream completion failed", errorAttrs(&e, err)...)
			return nil, resourceError(&e, streamTemplate, err)
		}
		var values []string
		for _, r := range refs {
			if strings.HasPrefix(r.value, p.Argument.Value) || strings.HasPrefix(r.name, p.Argument.Value) {
				values = append(values, r.value)
			}
		}
		res := none
		res.Completion.Total = len(values)
		if len(values) > maxCompletions {
			values, res.Completion.HasMore = values[:maxCompletions], true
		}
		if values != nil {
			res.Completion.Values = values
		}
		return res, nil
	}
}

// streamRef is one completion value of pdpp://stream/{name}.
type streamRef struct{ name, value string }

// grantedStreams lists what pdpp://stream/{name} can read on this grant,
// from GET /v1/streams (one row per stream and connection): the bare name of
// a stream one connection holds, and connection_id/name for each connection
// of a stream several hold, since a read that names no connection is then
// ambiguous. Sorted by value.
func grantedStreams(ctx context.Context, env *Env) ([]streamRef, error) {
	body, _, err := getObject(ctx, env, rs.Path("v1", "streams"), nil)
	if err != nil {
		return nil, err
	}
	conns := map[string][]string{}
	for _, row := range gjson.GetBytes(body, "data").Array() {
		n := row.Get("name").String()
		if n == "" {
			continue
		}
		c := row.Get("connection_id").String()
		if resultid.CheckConnectionID(c) != nil {
			c = ""
		}
		if !slices.Contains(conns[n], c) {
			conns[n] = append(conns[n], c)
		}
	}
	var refs []streamRef
	for n, cs := range conns {
		if len(cs) == 1 {
			refs = append(refs, streamRef{n, n})
			continue
		}
		for _, c := range cs {
			if c != "" {
				refs = append(refs, streamRef{n, resultid.StreamRef(c, n)})
			}
		}
	}
	slices.SortFunc(refs, func(a, b streamRef) int { return strings.Compare(a.value, b.value) })
	return refs, nil
}

// registerResources adds the resource templates to s and returns them with
// their handlers.
func registerResources(s *mcp.Server, env *Env) []Template {
	var added []Template
	for _, rt := range resourceTemplates {
		read, tmpl := rt.read, rt.tmpl
		h := func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			uri := req.Params.URI
			c, err := read(ctx, env, uri)
			if err != nil {
				// The template, not the URI: a record or field-window URI
				// names a record and can carry the text searched for.
				env.Logger.DebugContext(ctx, "resource read failed", append([]any{"template", tmpl.URITemplate}, errorAttrs(env, err)...)...)
				return nil, resourceError(env, uri, err)
			}
			c.URI = uri
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
		}
		s.AddResourceTemplate(rt.tmpl, h)
		added = append(added, Template{Template: rt.tmpl, Read: h})
	}
	return added
}

func readStreamResource(ctx context.Context, env *Env, uri string) (*mcp.ResourceContents, error) {
	conn, name, err := resultid.ParseStreamRefURI(uri)
	if err != nil {
		return nil, idError("uri", err)
	}
	// A name a tool showed with a mark reads the stream the RS named.
	if conn, err = visible.Decode(conn); err == nil {
		name, err = visible.Decode(name)
	}
	if err != nil {
		return nil, &toolError{Code: resultid.CodeInvalidResourceURI, Param: "uri", Message: "the stream URI " + err.Error(),
			Next: "use a stream name as schema shows it whole"}
	}
	path := rs.Path("v1", "streams", name)
	var q rs.Query
	if conn != "" {
		q.Add("connection_id", conn)
	}
	body, _, err := getObject(ctx, env, path, q)
	if err != nil {
		return nil, err
	}
	// The RS's stream metadata, with every string the visible rule changes
	// rendered (names and labels are written by connectors and people).
	return &mcp.ResourceContents{MIMEType: "application/json", Text: string(visible.JSONText(body))}, nil
}

func readRecordResource(ctx context.Context, env *Env, uri string) (*mcp.ResourceContents, error) {
	id, err := parseID("uri", uri)
	if err != nil {
		return nil, err
	}
	path := rs.Path("v1", "streams", id.Stream(), "records", id.RecordID())
	var q rs.Query
	if c := id.ConnectionID(); c != "" {
		q.Add("connection_id", c)
	}
	body, _, err := getObject(ctx, env, path, q)
	if err != nil {
		return nil, err
	}
	// The whole record, but never a binary body: blob_refs and base64
	// strings become their metadata, as in every tool.
	return &mcp.ResourceContents{MIMEType: "application/json", Text: evidence.VisibleJSON(gjson.ParseBytes(body))}, nil
}

func readFieldWindowResource(ctx context.Context, env *Env, uri string) (*mcp.ResourceContents, error) {
	h, err := resultid.ParseFieldWindowURI(uri)
	if err != nil {
		return nil, idError("uri", err)
	}
	a := readFieldArgs{ID: h.Record.String(), FieldPath: h.FieldPath, Cursor: h.Cursor, OffsetChars: h.OffsetChars,
		LimitChars: h.LimitChars, Q: h.Q, BeforeChars: h.BeforeChars, AfterChars: h.AfterChars}
	if a.LimitChars != nil && *a.LimitChars > evidence.MaxWindowChars {
		return nil, &toolError{Code: CodeInvalidArguments, Param: "limit_chars",
			Message: "the handle's limit_chars is over 16384", Next: "build the handle with limit_chars of at most 16384"}
	}
	w, err := a.window(ctx, env)
	if err != nil {
		return nil, err
	}
	return &mcp.ResourceContents{MIMEType: "text/plain", Text: finishText(w.text())}, nil
}

// resourceError is the JSON-RPC error of a failed resource read, from the
// same classification as a tool's error result.
func resourceError(env *Env, uri string, err error) error {
	f := classify(env, err)
	data := struct {
		Code       string `json:"code"`
		HTTPStatus int    `json:"http_status,omitempty"`
		RequestID  string `json:"request_id,omitempty"`
		URI        string `json:"uri"`
	}{Code: f.Code, HTTPStatus: f.HTTPStatus, RequestID: f.RequestID, URI: uri}
	code := int64(jsonrpc.CodeInternalError)
	if f.callerFault {
		code = jsonrpc.CodeInvalidParams
	}
	raw, _ := json.Marshal(data) // strings and ints always encode
	return &jsonrpc.Error{Code: code, Message: f.text(), Data: raw}
}
