package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/evidence"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/resultid"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// DefaultFetchTextChars bounds fetch's document text (code points) when
// Env.FetchTextChars is 0.
const DefaultFetchTextChars = 16384

// maxExpandedIDs bounds the ids listed per expanded relation in fetch
// metadata; the rest are counted.
const maxExpandedIDs = 20

const fetchInput = `{
 "type": "object",
 "properties": {
  "id": {"type": "string", "minLength": 1, "description": "Id as search or a ladder showed it (connection_id/stream:record_id), a legacy stream:record_id, or a pdpp://record/ or pdpp://blob/ URI."},
  "fields": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}, "description": "Top-level fields to return."},
  "expand": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}, "description": "Relations to embed, from schema(stream)."},
  "expand_limit": {"type": "object", "minProperties": 1, "propertyNames": {"minLength": 1, "pattern": "^[^\\[\\]]+$"}, "additionalProperties": {"type": "integer", "minimum": 1}, "description": "Per-relation cap; relation must be in expand."},
  "connection_id": ` + connectionIDProp + `
 },
 "required": ["id"],
 "additionalProperties": false
}`

const fetchOutput = `{
 "type": "object",
 "properties": {
  "id": {"type": "string"},
  "title": {"type": "string"},
  "text": {"type": "string"},
  "url": {"type": "string"},
  "metadata": {"type": "object"},
  "error": {"type": "object"}
 },
 "additionalProperties": false
}`

var fetchTool = &spec[fetchArgs]{
	def: &mcp.Tool{
		Name:  "fetch",
		Title: "Fetch PDPP search result",
		Description: "Fetch one record as a document {id, title, text, url, metadata}. Read-only. " +
			"Pass id as search shows it; add connection_id when ambiguous_connection lists several. " +
			"text is the record's text, content, body or summary field, else the compact JSON of its (projected) fields; " +
			"it is bounded and metadata.next reads on. metadata names stream, connection_id and connector_key. " +
			"A pdpp://blob/ id reads a blob: text (metadata.next reads on), an image, or metadata.",
		Annotations:  readOnly("Fetch PDPP search result"),
		InputSchema:  mustSchema("fetch", fetchInput),
		OutputSchema: mustSchema("fetch", fetchOutput),
	},
	args:  newArgSpec("fetch", fetchInput, map[string]string{"expand_limit": CodeInvalidExpand}),
	check: (*fetchArgs).check,
	run:   runFetch,
}

type fetchArgs struct {
	ID           string         `json:"id"`
	Fields       []string       `json:"fields"`
	Expand       []string       `json:"expand"`
	ExpandLimit  expandLimitArg `json:"expand_limit"`
	ConnectionID string         `json:"connection_id"`
}

// record parses the id and applies connection_id to it.
func (a *fetchArgs) record() (resultid.ID, error) {
	id, err := parseID("id", a.ID)
	if err != nil {
		return id, err
	}
	if id, err = id.WithConnection(a.ConnectionID); err != nil {
		return id, idError("connection_id", err)
	}
	return id, nil
}

// blob parses a pdpp://blob/ id and applies connection_id to it; offset is
// where the text it continues starts.
func (a *fetchArgs) blob() (resultid.Blob, int, error) {
	h, offset, err := resultid.ParseBlobURI(a.ID)
	if err != nil {
		return h, 0, idError("id", err)
	}
	if len(a.Fields) > 0 || len(a.Expand) > 0 || len(a.ExpandLimit) > 0 {
		return h, 0, &toolError{Code: CodeInvalidArguments, Param: "id",
			Message: "fields, expand and expand_limit select parts of a record; a pdpp://blob/ id reads a blob",
			Next:    "call fetch with the blob handle alone"}
	}
	switch c := a.ConnectionID; {
	case c == "" || c == h.ConnectionID():
	case h.ConnectionID() != "":
		return h, 0, idError("connection_id", &resultid.Error{Code: resultid.CodeConflictingConnection, Input: a.ID,
			Part: resultid.PartConnection, Message: "the blob handle names connection_id '" + h.ConnectionID() +
				"' but the connection_id argument is '" + c + "'; pass the handle alone"})
	default:
		if h, err = resultid.NewBlob(c, h.BlobID()); err != nil {
			return h, 0, idError("connection_id", err)
		}
	}
	return h, offset, nil
}

func (a *fetchArgs) check() error {
	if resultid.IsBlobURI(a.ID) {
		_, _, err := a.blob()
		return err
	}
	if _, err := a.record(); err != nil {
		return err
	}
	for _, f := range a.Fields {
		if !evidence.FieldPathOK(f) {
			return &toolError{Code: CodeInvalidArguments, Param: "fields",
				Message: fmt.Sprintf("fields entry %s is not a top-level field name (the RS splits fields on commas and trims spaces)", quoteArg(f)),
				Next:    "pass field names exactly as schema(stream) lists them"}
		}
	}
	return nil
}

func runFetch(ctx context.Context, env *Env, a *fetchArgs) (*mcp.CallToolResult, error) {
	if resultid.IsBlobURI(a.ID) {
		return runBlobFetch(ctx, env, a)
	}
	id, err := a.record()
	if err != nil {
		return nil, err
	}
	if err := checkExpandArgs(ctx, env, id.Stream(), id.ConnectionID(), a.Expand, a.ExpandLimit); err != nil {
		return nil, err
	}
	var q rs.Query
	for _, f := range a.Fields {
		q.Add("fields", f)
	}
	for _, e := range a.Expand {
		q.Add("expand", e)
	}
	if c := id.ConnectionID(); c != "" {
		q.Add("connection_id", c)
	}
	q = append(q, a.ExpandLimit...)
	path := rs.Path("v1", "streams", id.Stream(), "records", id.RecordID())
	// The declared roles are read (once per credential) beside the record.
	pending := env.startRoles(ctx)
	body, resp, err := getObject(ctx, env, path, q)
	if err != nil {
		return nil, err
	}
	doc, err := fetchDocument(env, providerURL(env, resp), a.ID, id, body, pending.roles(ctx))
	if err != nil {
		return nil, err
	}
	var l links
	if rid, err := resultid.New(doc.Metadata.ConnectionID, doc.Metadata.Stream, doc.Metadata.RecordID); err == nil {
		l.record(rid.String())
	}
	blobLinks(&l, doc.Metadata.ConnectionID, gjson.GetBytes(body, "data"), 0)
	return documentResult(doc, l.out), nil
}

// blobLinks links the blob_refs of a record payload read under connection
// (members, and the elements of arrays of attachments, a few levels down).
func blobLinks(l *links, connection string, v gjson.Result, depth int) {
	if depth > 3 {
		return
	}
	if b, ok := evidence.BlobRef(v); ok {
		if h, err := resultid.NewBlob(connection, b.BlobID); err == nil {
			h = h.WithSHA256(b.SHA256)
			var size *int64
			if b.HasSize {
				size = &b.SizeBytes
			}
			l.blob(h.URI(), visible.String(b.MIMEType), size)
		}
		return
	}
	v.ForEach(func(_, m gjson.Result) bool {
		if m.IsObject() || m.IsArray() {
			blobLinks(l, connection, m, depth+1)
		}
		return true
	})
}

// fetchDoc is fetch's structuredContent, the search/fetch document contract:
// exactly id, title, text, url and metadata. content[] mirrors it as JSON.
type fetchDoc struct {
	ID       string    `json:"id"`
	Title    string    `json:"title"`
	Text     string    `json:"text"`
	URL      string    `json:"url"`
	Metadata fetchMeta `json:"metadata"`
}

// fetchMeta is the document's metadata: source identity, what the text is
// and how to read what it left out, and the record's content ladder.
type fetchMeta struct {
	Stream       string `json:"stream"`
	RecordID     string `json:"record_id"`
	ConnectionID string `json:"connection_id,omitempty"`
	ConnectorKey string `json:"connector_key,omitempty"`
	DisplayName  string `json:"display_name,omitempty"`
	EmittedAt    string `json:"emitted_at,omitempty"`
	// TextField names the field text holds; empty when text is the compact
	// JSON of the record's fields.
	TextField     string `json:"text_field,omitempty"`
	TextChars     int    `json:"text_chars"`
	TextTruncated bool   `json:"text_truncated"`
	ShownChars    *int   `json:"shown_chars,omitempty"`
	// Next continues the text exactly where it stops.
	Next *evidence.Read `json:"next,omitempty"`
	// MoreFields reads the fields the text does not show: the others when
	// text is one field, those after the cut when it is JSON.
	MoreFields *evidence.Read `json:"more_fields,omitempty"`
	// Note explains a cut that no read can continue.
	Note          string          `json:"note,omitempty"`
	Expanded      json.RawMessage `json:"expanded,omitempty"`
	Warnings      []string        `json:"warnings,omitempty"`
	ContentLadder *evidence.Entry `json:"content_ladder,omitempty"`
	// HiddenMarks says how many hidden-character marks the document holds
	// (visible.Note); absent when none.
	HiddenMarks string `json:"hidden_marks,omitempty"`
}

func (d *fetchDoc) noteHidden(note string) { d.Metadata.HiddenMarks = note }

// textFields are the fields fetch shows as the document text, in order.
var textFields = []string{"text", "content", "body", "summary"}

// fetchDocument derives the document from an RS record answer. requested is
// the id as the caller passed it (echoed as the document id); id is the
// parsed, connection-scoped form; roles are the grant's declared roles (nil
// when unknown).
func fetchDocument(env *Env, base, requested string, id resultid.ID, body []byte, roles *roleTable) (*fetchDoc, error) {
	rec := evidence.ParseBody(body)
	payload := rec.Get("data")
	hasData := payload.IsObject()
	if !hasData {
		// A wrapper without data (a tombstone): show the wrapper itself.
		payload = rec
	}
	scope := evidence.Scope{Stream: id.Stream(), ConnectionID: id.ConnectionID()}
	// Continuations name the record the RS answered with, connection
	// included even when the request had none.
	cont := id
	if rid, ok := evidence.Identity(rec, scope); ok {
		cont = rid
	}
	contID := cont.String()
	declared := roles.lookup(cont.Stream(), cont.ConnectionID())

	// Every string of the document is shown under the visible rule: the
	// text and title by evidence, the names and labels here.
	m := fetchMeta{
		Stream:       visible.String(cont.Stream()),
		RecordID:     visible.String(cont.RecordID()),
		ConnectionID: visible.String(cont.ConnectionID()),
		ConnectorKey: visible.String(evidence.ShortConnectorKey(firstStr(rec, "connector_key", "connector_id"))),
		DisplayName:  visible.String(firstStr(rec, "display_name")),
		EmittedAt:    visible.String(firstStr(rec, "emitted_at")),
	}
	limit := cmp.Or(env.FetchTextChars, DefaultFetchTextChars)
	doc := &fetchDoc{
		ID:    visible.String(requested),
		Title: evidence.Title(rec, evidence.TitleOptions{PrimaryTitleField: declared.title(), EventTimeField: declared.time(), Stream: cont.Stream(), Fallback: requested}),
		URL:   visible.String(documentURL(base, cont, rec, payload)),
	}

	textField := ""
	var shown map[string]bool // fields the text shows whole
	// parsed is payload parsed for the text, which the ladder reuses when
	// payload is the record's data.
	var parsed *evidence.Payload
	for _, f := range textFields {
		if v := payload.Get(f); v.Type == gjson.String && v.Str != "" && !evidence.IsBase64Blob(v.Str) {
			textField = f
			break
		}
	}
	if textField != "" {
		cut := evidence.BoundText(contID, textField, payload.Get(textField).Str, limit)
		doc.Text = cut.Text
		m.TextField, m.TextChars, m.Next = textField, cut.TotalChars, cut.Next
		if cut.Cut() {
			m.TextTruncated, m.ShownChars = true, &cut.ShownChars
		} else {
			shown = map[string]bool{textField: true}
		}
		var others []string
		payload.ForEach(func(k, _ gjson.Result) bool {
			if k.Str != textField && evidence.FieldPathOK(k.Str) {
				others = append(others, k.Str)
			}
			return true
		})
		if len(others) > 0 {
			more := evidence.FetchFields(contID, others...)
			m.MoreFields = &more
		}
	} else {
		parsed = evidence.ParsePayload(payload)
		cut := parsed.BoundJSON(contID, limit)
		doc.Text, shown = cut.Text, cut.Whole
		m.TextChars, m.Next, m.MoreFields = cut.TotalChars, cut.Next, cut.Rest
		if cut.Cut() {
			m.TextTruncated, m.ShownChars = true, &cut.ShownChars
			switch {
			case cut.Unaddressable > 0:
				m.Note = strconv.Itoa(cut.Unaddressable) + " field(s) after the cut have names no tool argument can carry; query_records shows them in structuredContent.data"
			case cut.Next == nil && cut.Rest == nil:
				m.Note = "only the closing brace was cut; every field is shown whole"
			}
		}
	}

	m.Expanded = expandedIDs(rec.Get("expanded"), scope)
	rec.Get("meta.warnings").ForEach(func(_, w gjson.Result) bool {
		if c := w.Get("code").Str; c != "" {
			m.Warnings = append(m.Warnings, visible.String(c))
		}
		return true
	})
	// The ladder lists what the text does not show whole; a ladder with no
	// rung would only repeat the id.
	if !hasData {
		parsed = nil // the text is of the wrapper, the ladder of its (absent) data
	}
	if e, ok := evidence.FetchEntryWith(body, scope, shown, parsed); ok && e.HasReads() {
		m.ContentLadder = &e
	}
	doc.Metadata = m
	return doc, nil
}

// urlFields are payload fields that may hold the record's own address at its
// source, preferred for citations; only absolute http(s) URLs count.
var urlFields = []string{"url", "record_url", "href", "source_url"}

// documentURL is a citable URL for the record: its source URL when the
// payload has an absolute one, else its RS address on the provider.
func documentURL(base string, id resultid.ID, rec, payload gjson.Result) string {
	for _, f := range urlFields {
		if s := payload.Get(f).Str; isHTTPURL(s) {
			return s
		}
	}
	return recordURL(base, id, rec.Get("record_url").Str)
}

// recordURL makes the RS address of a record absolute on the provider, with
// the connection_id the RS leaves out of record_url. given is the RS's
// record_url ("" to build one).
func recordURL(base string, id resultid.ID, given string) string {
	if base == "" {
		// No origin a client can open: the record's handle, which a host
		// that reads resources can read.
		return id.Handle()
	}
	if isHTTPURL(given) {
		return given
	}
	path := given
	if !strings.HasPrefix(path, "/") {
		path = rs.Path("v1", "streams", id.Stream(), "records", id.RecordID())
	}
	if c := id.ConnectionID(); c != "" && !strings.Contains(path, "connection_id=") {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		path += sep + "connection_id=" + url.QueryEscape(c)
	}
	return strings.TrimSuffix(base, "/") + path
}

func isHTTPURL(s string) bool {
	if !strings.HasPrefix(s, "https://") && !strings.HasPrefix(s, "http://") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Host != ""
}

// expandedIDs lists, per expanded relation, the fetch ids of the related
// records (at most maxExpandedIDs each, then a count), so each can be fetched.
func expandedIDs(exp gjson.Result, scope evidence.Scope) json.RawMessage {
	if !exp.IsObject() {
		return nil
	}
	var w jsonWriter
	w.beginObject()
	exp.ForEach(func(rel, v gjson.Result) bool {
		var rows []gjson.Result
		switch {
		case v.Get("data").IsArray():
			rows = v.Get("data").Array()
		case v.IsObject():
			rows = []gjson.Result{v}
		}
		w.key(visible.String(rel.Str))
		w.beginObject()
		w.key("ids")
		w.beginArray()
		for i, r := range rows {
			if i == maxExpandedIDs {
				break
			}
			if id, ok := evidence.Identity(r, evidence.Scope{ConnectionID: scope.ConnectionID}); ok {
				w.str(id.String())
			}
		}
		w.endArray()
		if len(rows) > maxExpandedIDs {
			w.member("more", strconv.Itoa(len(rows)-maxExpandedIDs))
		}
		if v.Get("has_more").Type == gjson.True {
			w.member("has_more", "true")
		}
		w.endObject()
		return true
	})
	w.endObject()
	return w.bytes()
}

// firstStr returns the first non-empty string member among keys.
func firstStr(v gjson.Result, keys ...string) string {
	for _, k := range keys {
		if s := v.Get(k); s.Type == gjson.String && s.Str != "" {
			return s.Str
		}
	}
	return ""
}
