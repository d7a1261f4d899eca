package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

const schemaInput = `{
 "type": "object",
 "properties": {
  "stream": {"type": "string", "minLength": 1, "description": "Stream name: adds its field flags, sort, expand and aggregations."},
  "connection_id": ` + connectionIDProp + `,
  "detail": {"type": "string", "enum": ["compact", "full"], "description": "compact (default) or full: the raw RS schema of one stream, allowed only with stream."}
 },
 "additionalProperties": false
}`

var schemaTool = &spec[schemaArgs]{
	def: &mcp.Tool{
		Name:  "schema",
		Title: "Get PDPP schema",
		Description: "Discover the granted streams, fields and connections (connector_key, connection_id). Read-only. " +
			"Compact by default: schema -> schema(stream) -> schema(stream, connection_id) -> query_records.",
		Annotations:  readOnly("Get PDPP schema"),
		InputSchema:  mustSchema("schema", schemaInput),
		OutputSchema: mustSchema("schema", schemaOutput),
	},
	args:  newArgSpec("schema", schemaInput, nil),
	check: (*schemaArgs).check,
	run:   runSchema,
}

type schemaArgs struct {
	Stream       string `json:"stream"`
	ConnectionID string `json:"connection_id"`
	Detail       string `json:"detail"`
}

// compactFallbackCodes are the 400 codes with which an RS that predates
// view=compact refuses it; the tool then compacts the full schema itself.
var compactFallbackCodes = map[string]bool{"bad_request": true, "invalid_request": true, "unsupported_query": true}

func (a *schemaArgs) check() error {
	if a.Detail == "full" && a.Stream == "" {
		return &toolError{Code: CodeInvalidArguments, Param: "detail",
			Message: `detail "full" is allowed only with stream: the full schema of every granted stream is too large for one answer`,
			Next:    `call schema() for the stream index, then schema(stream, connection_id, detail: "full") for one stream`}
	}
	return nil
}

func runSchema(ctx context.Context, env *Env, a *schemaArgs) (*mcp.CallToolResult, error) {
	path := rs.Path("v1", "schema")
	if a.Detail == "full" {
		q := rs.Query{{Key: "detail", Value: "full"}, {Key: "stream", Value: a.Stream}}
		if a.ConnectionID != "" {
			q.Add("connection_id", a.ConnectionID)
		}
		body, resp, err := getObject(ctx, env, path, q)
		if err != nil {
			return nil, err
		}
		doc := unwrapSchema(body)
		if err := notGranted(ctx, env, doc, a); err != nil {
			return nil, err
		}
		return success(schemaText(doc, a.Stream, a.ConnectionID), &readResult{
			Data:        json.RawMessage(withoutDuplicateStreams(doc)),
			Legend:      json.RawMessage(legendJSON),
			ProviderURL: providerURL(env, resp),
			RequestID:   resp.RequestID,
		}), nil
	}

	var q rs.Query
	if a.Stream != "" {
		q = streamSchemaQuery(a.Stream, a.ConnectionID)
	} else {
		q = rs.Query{{Key: "view", Value: "compact"}}
		if a.ConnectionID != "" {
			q.Add("connection_id", a.ConnectionID)
		}
	}
	resp, err := getSchema(ctx, env, q)
	if err != nil {
		return nil, err
	}
	body, err := objectBody(path, resp)
	if err != nil {
		return nil, err
	}
	doc := unwrapSchema(body)
	if a.Stream != "" {
		if err := notGranted(ctx, env, doc, a); err != nil {
			return nil, err
		}
	}
	sc := &readResult{ProviderURL: providerURL(env, resp), RequestID: resp.RequestID}
	// The text and data of a compact answer the cache keeps are made once
	// per answer: a repeated schema call (the usual first step of every
	// session) finds them with the cached answer.
	render := func(data string) schemaRendering {
		return schemaRendering{data: data, text: schemaText(unwrapSchema([]byte(data)), a.Stream, a.ConnectionID)}
	}
	var r schemaRendering
	switch {
	case a.Stream != "" && doc.Get("detail").String() == "compact":
		// The RS compacted and scoped it: pass it on unchanged, and keep it
		// for the expand check of a following query_records.
		r = env.Capabilities.rendered(capabilityKey{env.CredentialKey(), a.Stream, a.ConnectionID}, doc.Raw,
			func() schemaRendering { return render(doc.Raw) })
		sc.Legend = json.RawMessage(legendJSON)
	case a.Stream != "":
		r = render(projectSchema(doc, true))
		sc.Legend = json.RawMessage(legendJSON)
	default:
		// Global discovery stays an index; per-field detail is one call away.
		if a.ConnectionID == "" && doc.Get("detail").String() == "compact" {
			r = env.Capabilities.rendered(capabilityKey{env.CredentialKey(), "", ""}, doc.Raw,
				func() schemaRendering { return render(projectSchema(doc, false)) })
		} else {
			r = render(projectSchema(doc, false))
		}
		if a.ConnectionID == "" {
			// The whole grant's schema: titles need no read of their own.
			env.Capabilities.learnRoles(env.CredentialKey(), doc)
		}
		sc.Omitted = "per-stream field_capabilities and expand_capabilities; call schema with stream for them"
	}
	sc.Data = json.RawMessage(r.data)
	return success(r.text, sc), nil
}

// getSchema reads /v1/schema with q, which asks for view=compact. An RS
// that predates the compact view refuses it with a 400
// (compactFallbackCodes): it is asked again without the view, for the
// same scope, and the caller compacts the full schema itself.
func getSchema(ctx context.Context, env *Env, q rs.Query) (*rs.Response, error) {
	path := rs.Path("v1", "schema")
	resp, err := env.RS.Get(ctx, path, q)
	var re *rs.Error
	if errors.As(err, &re) && re.Status == 400 && (compactFallbackCodes[re.Code] || compactFallbackCodes[re.Type]) {
		env.Logger.DebugContext(ctx, "schema: view=compact refused, compacting locally", "code", re.Code)
		resp, err = env.RS.Get(ctx, path, withoutKey(q, "view"))
	}
	return resp, err
}

func withoutKey(q rs.Query, key string) rs.Query {
	out := make(rs.Query, 0, len(q))
	for _, p := range q {
		if p.Key != key {
			out = append(out, p)
		}
	}
	return out
}

// maxNamedStreams bounds the granted streams a not-granted error lists.
const maxNamedStreams = 30

// notGranted returns the error for schema(stream) when the RS answered with
// no row for the stream: the stream, or the connection asked for, is outside
// the grant. It asks the stream index once to name the granted choices, like
// other tools' errors name candidates; when that read fails the error points
// at schema() instead. nil when doc lists the stream.
func notGranted(ctx context.Context, env *Env, doc gjson.Result, a *schemaArgs) error {
	if rows, bare := schemaRows(doc); len(rows) > 0 || len(bare) > 0 {
		return nil
	}
	var names, conns []string
	if body, _, err := getObject(ctx, env, rs.Path("v1", "schema"), rs.Query{{Key: "view", Value: "compact"}}); err == nil {
		rows, bare := schemaRows(unwrapSchema(body))
		names = append(names, bare...)
		for _, r := range rows {
			n := streamName(r.stream)
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
			if n == a.Stream {
				conns = append(conns, rowConnections(r, inlineRaw))
			}
		}
	} else if errors.Is(err, context.Canceled) {
		return err
	}
	if a.ConnectionID != "" && len(conns) > 0 {
		return &toolError{Code: CodeConnectionNotGranted, Param: "connection_id",
			Message: fmt.Sprintf("this grant does not include connection_id %s for stream %s; its connections: %s",
				visible.Quote(a.ConnectionID), visible.Quote(a.Stream), strings.Join(conns, "|")),
			Next: "call schema(stream) with one of those connection_ids, or without connection_id"}
	}
	msg := fmt.Sprintf("stream %s is not in this grant", visible.Quote(a.Stream))
	next := "call schema() for the granted streams and use one of them"
	if len(names) > 0 {
		shown := names[:min(len(names), maxNamedStreams)]
		msg += "; granted streams: " + strings.Join(shown, ", ")
		if len(names) > len(shown) {
			msg += fmt.Sprintf(" and %d more (schema() lists them)", len(names)-len(shown))
		}
		next = "call schema with one of the granted streams"
	}
	return &toolError{Code: CodeStreamNotGranted, Param: "stream", Message: msg, Next: next}
}
