package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/evidence"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

const queryRecordsInput = `{
 "type": "object",
 "properties": {
  "stream": ` + streamProp + `,
  "limit": ` + limitProp + `,
  "cursor": {"type": "string", "minLength": 1, "description": "next_cursor of the previous page, unchanged."},
  "order": {"type": "string", "enum": ["asc", "desc"], "description": "Legacy direction; prefer sort."},
  "sort": {"type": "string", "minLength": 1, "description": "cursor_field, or -cursor_field for descending."},
  "count": {"type": "string", "enum": ["none", "estimated", "exact"], "description": "Also return the total matching records."},
  "filter": ` + filterProp + `,
  "fields": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}, "description": "Top-level fields to return."},
  "view": {"type": "string", "minLength": 1, "description": "A named view (schema detail full); not with fields."},
  "expand": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}, "description": "Relations to embed, from expand= in schema(stream)."},
  "expand_limit": {"type": "object", "minProperties": 1, "propertyNames": {"minLength": 1, "pattern": "^[^\\[\\]]+$"}, "additionalProperties": {"type": "integer", "minimum": 1}, "description": "Per-relation cap, e.g. {\"attachments\": 3}; relation must be in expand."},
  "changes_since": {"type": "string", "minLength": 1, "description": "Incremental sync: beginning, or a saved next_changes_since; never a timestamp."},
  "connection_id": ` + connectionIDProp + `
 },
 "required": ["stream"],
 "additionalProperties": false
}`

var queryRecordsTool = &spec[queryArgs]{
	def: &mcp.Tool{
		Name:  "query_records",
		Title: "Query PDPP records",
		Description: "List records of one stream. Read-only. " +
			"25 records unless limit says (max 100); the text previews the first 5 with paging handles, " +
			"structuredContent.data holds the page as sent. Narrow with fields, page with cursor, " +
			"and count or group with aggregate rather than reading everything.",
		Annotations:  readOnly("Query PDPP records"),
		InputSchema:  mustSchema("query_records", queryRecordsInput),
		OutputSchema: mustSchema("query_records", readOutput),
	},
	args: newArgSpec("query_records", queryRecordsInput, map[string]string{
		"filter":       CodeInvalidFilter,
		"expand_limit": CodeInvalidExpand,
	}),
	run: runQueryRecords,
}

type queryArgs struct {
	Stream       string         `json:"stream"`
	Limit        *float64       `json:"limit"`
	Cursor       string         `json:"cursor"`
	Order        string         `json:"order"`
	Sort         string         `json:"sort"`
	Count        string         `json:"count"`
	Filter       filterArg      `json:"filter"`
	Fields       []string       `json:"fields"`
	View         string         `json:"view"`
	Expand       []string       `json:"expand"`
	ExpandLimit  expandLimitArg `json:"expand_limit"`
	ChangesSince string         `json:"changes_since"`
	ConnectionID string         `json:"connection_id"`
}

// query maps the arguments to RS parameters: plain arguments in schema
// order, then filter entries, then expand_limit entries.
func (a *queryArgs) query() rs.Query {
	var q rs.Query
	if a.Limit != nil {
		q.Add("limit", strconv.Itoa(int(*a.Limit)))
	}
	add := func(k, v string) {
		if v != "" {
			q.Add(k, v)
		}
	}
	add("cursor", a.Cursor)
	add("order", a.Order)
	add("sort", a.Sort)
	add("count", a.Count)
	for _, f := range a.Fields {
		q.Add("fields", f)
	}
	add("view", a.View)
	for _, e := range a.Expand {
		q.Add("expand", e)
	}
	add("changes_since", a.ChangesSince)
	add("connection_id", a.ConnectionID)
	q = append(q, a.Filter...)
	q = append(q, a.ExpandLimit...)
	return q
}

func runQueryRecords(ctx context.Context, env *Env, a *queryArgs) (*mcp.CallToolResult, error) {
	if err := checkExpandArgs(ctx, env, a.Stream, a.ConnectionID, a.Expand, a.ExpandLimit); err != nil {
		return nil, err
	}
	path := rs.Path("v1", "streams", a.Stream, "records")
	// The declared roles are read (once per credential) beside the records.
	pending := env.startRoles(ctx)
	body, resp, err := getObject(ctx, env, path, a.query())
	if err != nil {
		return nil, err
	}
	scope := evidence.Scope{Stream: a.Stream, ConnectionID: a.ConnectionID}
	preview := evidence.Preview(body, evidence.PreviewOptions{
		Label:     "records from stream " + jsonString(a.Stream),
		Scope:     scope,
		KeyFields: pending.roles(ctx).lookup(a.Stream, a.ConnectionID).keyFields(),
	})
	// The ladder lists what the preview did not show whole.
	lad := evidence.RecordSetFor(body, scope, preview)
	ladder := lad.AppendJSON(nil)
	res := success(preview.Text, &readResult{
		Data:          json.RawMessage(body),
		ContentLadder: jsonw.Encoded(ladder),
		ProviderURL:   providerURL(env, resp),
		RequestID:     resp.RequestID,
	})
	var l links
	l.ladder(&lad)
	res.Content = append(res.Content, l.out...)
	return res, nil
}

// checkExpandArgs applies the expand rules shared by query_records and fetch:
// every expand_limit relation must be in expand, and the relations must be
// ones the stream advertises (checkExpand). Without expand it does nothing.
func checkExpandArgs(ctx context.Context, env *Env, stream, connectionID string, expand []string, limits expandLimitArg) error {
	for _, p := range limits {
		if rel := relation(p); !slices.Contains(expand, rel) {
			return &toolError{Code: CodeInvalidExpand, Param: "expand_limit",
				Message: fmt.Sprintf("expand_limit names relation %s, which is not in expand", quoteArg(rel)),
				Next:    fmt.Sprintf("add %s to expand, or drop it from expand_limit", quoteArg(rel))}
		}
	}
	if len(expand) == 0 {
		return nil
	}
	return checkExpand(ctx, env, stream, connectionID, expand, limits)
}
