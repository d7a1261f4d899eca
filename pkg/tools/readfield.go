package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/evidence"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/resultid"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// CodeInvalidSelector: the read_record_field arguments do not name one record
// and one window (identity forms mixed or incomplete, cursor with
// offset_chars, q with either, context without q, a malformed cursor).
const CodeInvalidSelector = "invalid_field_window_selector"

// CodeQueryNotFound: q does not occur in a non-text field's JSON rendering
// (the RS answers the same code for text fields).
const CodeQueryNotFound = "query_not_found"

const readFieldInput = `{
 "type": "object",
 "properties": {
  "id": {"type": "string", "minLength": 1, "description": "Record id as a tool returned it: connection_id/stream:record_id, stream:record_id, or pdpp://record/…"},
  "connection_id": ` + connectionIDProp + `,
  "stream": {"type": "string", "minLength": 1, "description": "With connection_id and record_id, instead of id."},
  "record_id": {"type": "string", "minLength": 1, "description": "With connection_id and stream, instead of id."},
  "field_path": {"type": "string", "minLength": 1, "description": "Top-level field name."},
  "cursor": {"type": "string", "minLength": 1, "description": "next_cursor of the previous window."},
  "offset_chars": {"type": "integer", "minimum": 0},
  "limit_chars": {"type": "integer", "minimum": 1, "maximum": 16384, "description": "Window length, default 4096."},
  "q": {"type": "string", "minLength": 1, "description": "Centre the window on the first case-insensitive match."},
  "before_chars": {"type": "integer", "minimum": 0, "maximum": 8192},
  "after_chars": {"type": "integer", "minimum": 0, "maximum": 8192}
 },
 "required": ["field_path"],
 "additionalProperties": false
}`

const readFieldOutput = `{
 "type": "object",
 "properties": {
  "record": {"type": "object"},
  "field": {"type": "object"},
  "window": {"type": "object"},
  "next": {"type": "object"},
  "previous": {"type": "object"},
  "provider_url": {"type": "string"},
  "request_id": {"type": "string"},
  "error": {"type": "object"}
 }
}`

var readFieldTool = &spec[readFieldArgs]{
	def: &mcp.Tool{
		Name:  "read_record_field",
		Title: "Read PDPP record field window",
		Description: "Read a bounded window of one record field by id or pdpp://record/ URI. " +
			"Read-only. Page with offset_chars or cursor, or find text with q.",
		Annotations:  readOnly("Read PDPP record field window"),
		InputSchema:  mustSchema("read_record_field", readFieldInput),
		OutputSchema: mustSchema("read_record_field", readFieldOutput),
	},
	args:  newArgSpec("read_record_field", readFieldInput, nil),
	check: func(a *readFieldArgs) error { _, err := a.request(); return err },
	run:   runReadField,
}

type readFieldArgs struct {
	ID           string `json:"id"`
	ConnectionID string `json:"connection_id"`
	Stream       string `json:"stream"`
	RecordID     string `json:"record_id"`
	FieldPath    string `json:"field_path"`
	Cursor       string `json:"cursor"`
	OffsetChars  *int   `json:"offset_chars"`
	LimitChars   *int   `json:"limit_chars"`
	Q            string `json:"q"`
	BeforeChars  *int   `json:"before_chars"`
	AfterChars   *int   `json:"after_chars"`
}

// fieldRead is one validated read_record_field request: a record, a field
// and a window selector.
type fieldRead struct {
	id     resultid.ID
	field  string
	offset *int
	limit  *int
	q      string
	before *int
	after  *int
}

func selectorError(msg string) *toolError {
	return &toolError{Code: CodeInvalidSelector, Message: msg,
		Next: `pass {"id": <id>, "field_path": <field>} with at most one of offset_chars, cursor or q (before_chars/after_chars only with q)`}
}

// request validates the arguments in the documented order: identity, field,
// then the window selector. Nothing here reaches the RS.
func (a *readFieldArgs) request() (*fieldRead, error) {
	r := &fieldRead{field: a.FieldPath, limit: a.LimitChars, q: a.Q, before: a.BeforeChars, after: a.AfterChars}
	switch {
	case a.ID != "" && (a.Stream != "" || a.RecordID != ""):
		return nil, selectorError("`id` is exclusive with explicit `stream` and `record_id`; pass one record identity form " +
			"(connection_id may accompany an id to scope a legacy stream:record_id)")
	case a.ID != "":
		id, err := parseID("id", a.ID)
		if err != nil {
			return nil, err
		}
		// As with fetch: connection_id scopes a legacy id, and must agree
		// with a connection the id embeds.
		if id, err = id.WithConnection(a.ConnectionID); err != nil {
			return nil, idError("connection_id", err)
		}
		r.id = id
	case a.ConnectionID == "" || a.Stream == "" || a.RecordID == "":
		return nil, selectorError("read_record_field requires either `id` + `field_path` or `connection_id` + `stream` + `record_id` + `field_path`")
	default:
		id, err := resultid.New(a.ConnectionID, a.Stream, a.RecordID)
		if err != nil {
			return nil, idError(partParam(err, "record_id"), err)
		}
		r.id = id
	}
	if !evidence.FieldPathOK(a.FieldPath) {
		return nil, &toolError{Code: CodeInvalidArguments, Param: "field_path",
			Message: fmt.Sprintf("field_path %s is not a top-level field name: it is empty, \".\" or \"..\", has surrounding spaces, or contains /, \\, a comma or a control character", quoteArg(a.FieldPath)),
			Next:    "pass a field_path exactly as a content ladder or schema(stream) names it"}
	}
	switch {
	case a.Cursor != "" && a.OffsetChars != nil:
		return nil, selectorError("`cursor` is exclusive with `offset_chars`")
	case a.Q != "" && (a.Cursor != "" || a.OffsetChars != nil):
		return nil, selectorError("`q` is exclusive with `cursor` and `offset_chars`")
	case a.Q == "" && (a.BeforeChars != nil || a.AfterChars != nil):
		return nil, selectorError("`before_chars` and `after_chars` require `q`")
	}
	r.offset = a.OffsetChars
	if a.Cursor != "" {
		n, err := strconv.Atoi(a.Cursor)
		if err != nil || n < 0 || strings.Trim(a.Cursor, "0123456789") != "" {
			return nil, selectorError("field-window cursor must be a non-negative integer offset returned by read_record_field")
		}
		r.offset = &n
	}
	return r, nil
}

// window reads the field window the arguments name; the tool and the
// field-window resource both read through it.
func (a *readFieldArgs) window(ctx context.Context, env *Env) (*window, error) {
	r, err := a.request()
	if err != nil {
		return nil, err
	}
	return readWindow(ctx, env, r)
}

func runReadField(ctx context.Context, env *Env, a *readFieldArgs) (*mcp.CallToolResult, error) {
	w, err := a.window(ctx, env)
	if err != nil {
		return nil, err
	}
	var l links
	l.record(w.id.String())
	return &mcp.CallToolResult{Content: append([]mcp.Content{&mcp.TextContent{Text: w.text()}}, l.out...), StructuredContent: w.structured(env)}, nil
}

// window is a field window ready to render: from the RS field-window route,
// or computed here over a non-text field's JSON rendering.
type window struct {
	id        resultid.ID
	field     string
	fieldType string // "string", or "json" for a non-text field
	win       gjson.Result
	// withheld is true when the window text is base64 binary, which is
	// never shown.
	withheld bool
	// shown is the window's text as the model sees it (under the visible
	// rule); shownEnd, when set, is where it stops in the field because
	// marks took the room of the window's end (see shownText).
	shown     string
	shownEnd  *int
	warnings  string
	requestID string
	// baseURL is the provider that answered ("" when unknown).
	baseURL string
}

// readWindow reads one window. A legacy id is sent without connection_id:
// on a grant with one connection (or when only one connection holds the
// record) the RS serves it, otherwise it answers ambiguous_connection with the
// candidates, which the error passes on.
func readWindow(ctx context.Context, env *Env, r *fieldRead) (*window, error) {
	path := rs.Path("v1", "streams", r.id.Stream(), "records", r.id.RecordID(), "field-window")
	var q rs.Query
	if c := r.id.ConnectionID(); c != "" {
		q.Add("connection_id", c)
	}
	q.Add("field", r.field)
	addInt := func(k string, v *int) {
		if v != nil {
			q.Add(k, strconv.Itoa(*v))
		}
	}
	addInt("offset_chars", r.offset)
	addInt("limit_chars", r.limit)
	if r.q != "" {
		q.Add("q", r.q)
	}
	addInt("before_chars", r.before)
	addInt("after_chars", r.after)
	resp, err := env.RS.Get(ctx, path, q)
	var re *rs.Error
	if errors.As(err, &re) && re.Status == 422 && re.Code == "field_not_text" {
		return jsonWindow(ctx, env, r, re)
	}
	if err != nil {
		return nil, err
	}
	body, err := objectBody(path, resp)
	if err != nil {
		return nil, err
	}
	doc := evidence.ParseBody(body)
	win := doc.Get("window")
	if !win.IsObject() {
		return nil, &rs.TransportError{Code: rs.CodeInvalidResponse, Status: resp.Status, RequestID: resp.RequestID,
			Err: fmt.Errorf("GET %s: the field-window answer has no window object", path)}
	}
	w := &window{id: r.id, field: r.field, fieldType: "string", win: win, warnings: warningsText(doc), requestID: resp.RequestID, baseURL: resp.BaseURL}
	if c := doc.Get("connection_id"); c.Type == gjson.String && c.Str != "" && !r.id.HasConnection() {
		// The RS resolved the connection: continuations name it.
		if id, err := r.id.WithConnection(c.Str); err == nil {
			w.id = id
		}
	}
	if p := doc.Get("field.path"); p.Type == gjson.String && p.Str != "" {
		w.field = p.Str
	}
	w.withheld = evidence.LooksBinary(win.Get("text").Str)
	if !w.withheld {
		w.show()
	}
	return w, nil
}

// show renders the RS window's text under the visible rule, within the
// window's limit_chars.
func (w *window) show() {
	text := w.win.Get("text").Str
	limit := int(w.win.Get("limit_chars").Int())
	if limit <= 0 {
		limit = max(evidence.Len(text), evidence.DefaultWindowChars)
	}
	shown, n, whole := shownText(text, limit)
	w.shown = shown
	if !whole {
		end := int(w.win.Get("start_chars").Int()) + n
		w.shownEnd = &end
	}
}

// jsonWindow serves a window of a field the RS will not window because it
// is not text (a number, boolean, null, object, array or blob_ref): it reads
// the record projected to that field and windows the field's compact JSON
// rendering (binary values as metadata) with the RS window math. refusal is
// the RS answer that led here; it stands when the field cannot be read.
func jsonWindow(ctx context.Context, env *Env, r *fieldRead, refusal *rs.Error) (*window, error) {
	path := rs.Path("v1", "streams", r.id.Stream(), "records", r.id.RecordID())
	q := rs.Query{{Key: "fields", Value: r.field}}
	if c := r.id.ConnectionID(); c != "" {
		q.Add("connection_id", c)
	}
	body, resp, err := getObject(ctx, env, path, q)
	if err != nil {
		return nil, err
	}
	rec := evidence.ParseBody(body)
	v := rec.Get("data").Get(gjson.Escape(r.field))
	if !v.Exists() {
		return nil, refusal
	}
	sel := evidence.WindowSelector{Q: r.q}
	if r.offset != nil {
		sel.Offset = *r.offset
	}
	if r.limit != nil {
		sel.Limit = *r.limit
	}
	if r.before != nil {
		sel.Before, sel.HasContext = *r.before, true
	}
	if r.after != nil {
		sel.After, sel.HasContext = *r.after, true
	}
	// Blob handles in the rendering name the connection that answered.
	conn := cmp.Or(rec.Get("connection_id").Str, r.id.ConnectionID())
	fw, found := evidence.WindowOf(evidence.VisibleJSONIn(v, conn), sel)
	if !found {
		return nil, &toolError{Code: CodeQueryNotFound, Param: "q",
			Message: fmt.Sprintf("q %s does not occur in the JSON rendering of field %s", quoteArg(r.q), visible.Quote(r.field)),
			Next:    "read the field with offset_chars instead, or search for a shorter substring"}
	}
	b, err := json.Marshal(fw)
	if err != nil {
		return nil, fmt.Errorf("read_record_field: window: %w", err)
	}
	// The JSON rendering is already under the visible rule.
	w := &window{id: r.id, field: r.field, fieldType: "json", win: gjson.ParseBytes(b), shown: fw.Text, requestID: resp.RequestID, baseURL: resp.BaseURL}
	if c := rec.Get("connection_id"); c.Type == gjson.String && c.Str != "" && !r.id.HasConnection() {
		if id, err := r.id.WithConnection(c.Str); err == nil {
			w.id = id
		}
	}
	return w, nil
}

// continuation returns the read_record_field call for the window that starts
// at the offset in key (next_offset_chars or previous_offset_chars), or nil.
func (w *window) continuation(key string) *evidence.Read {
	off := w.win.Get(key)
	at := int(off.Int())
	switch {
	case key == "next_offset_chars" && w.shownEnd != nil:
		at = *w.shownEnd
	case off.Type != gjson.Number:
		return nil
	}
	limit := int(w.win.Get("limit_chars").Int())
	if limit <= 0 {
		limit = evidence.DefaultWindowChars
	}
	r := evidence.FieldRead(w.id.String(), w.field, at, limit)
	return &r
}

// text renders the window for the model:
//
//	record=<id> field=<path> chars=<start>..<end> total_chars=<n> complete=<bool>|last_window=true [match=…] [next_cursor=…] [previous_cursor=…]
//	next read_record_field args={…}       (when the window is incomplete)
//	previous read_record_field args={…}
//	<window text>
func (w *window) text() string {
	num := func(k string) string {
		if w.shownEnd != nil && (k == "end_chars" || k == "next_offset_chars") {
			return strconv.Itoa(*w.shownEnd)
		}
		if v := w.win.Get(k); v.Type == gjson.Number {
			return v.Raw
		}
		return "null"
	}
	var b strings.Builder
	b.WriteString("record=" + w.id.String() + " field=" + inline(w.field))
	if w.fieldType != "string" {
		b.WriteString(" type=" + w.fieldType)
	}
	b.WriteString(" chars=" + num("start_chars") + ".." + num("end_chars") + " total_chars=" + num("total_chars"))
	complete := w.win.Get("complete").Type == gjson.True && w.shownEnd == nil
	next, prev := w.continuation("next_offset_chars"), w.continuation("previous_offset_chars")
	// complete=false reads as "read on"; the last window says it ends.
	if complete || next != nil {
		b.WriteString(" complete=" + strconv.FormatBool(complete))
	} else {
		b.WriteString(" last_window=true")
	}
	if w.win.Get("match_start_chars").Type == gjson.Number {
		b.WriteString(" match=" + num("match_start_chars") + ".." + num("match_end_chars"))
	}
	if next != nil {
		b.WriteString(" next_cursor=" + num("next_offset_chars"))
	}
	if prev != nil {
		b.WriteString(" previous_cursor=" + num("previous_offset_chars"))
	}
	if w.fieldType == "json" {
		b.WriteString("\nthe field is not text: this window is of its compact JSON rendering (binary values as metadata)")
	}
	switch {
	case complete:
		b.WriteString("\nthis window holds the whole field")
	case next == nil:
		b.WriteString("\nthe field ends here: this is its last window, nothing follows character " + num("end_chars"))
	}
	b.WriteString(w.warnings)
	if !complete {
		if next != nil {
			b.WriteString("\nnext read_record_field args=" + compactJSON(next.Args))
		}
		if prev != nil {
			b.WriteString("\nprevious read_record_field args=" + compactJSON(prev.Args))
		}
	}
	b.WriteString("\n")
	if w.withheld {
		b.WriteString("[window text withheld: the field holds base64-encoded binary, which is never shown as text]")
	} else {
		b.WriteString(w.shown)
	}
	return b.String()
}

// readFieldResult is the structuredContent of read_record_field.
type readFieldResult struct {
	Record      readFieldRecord `json:"record"`
	Field       readFieldField  `json:"field"`
	Window      json.RawMessage `json:"window"`
	Next        *evidence.Read  `json:"next,omitempty"`
	Previous    *evidence.Read  `json:"previous,omitempty"`
	ProviderURL string          `json:"provider_url"`
	RequestID   string          `json:"request_id,omitempty"`
}

type readFieldRecord struct {
	ID           string              `json:"id"`
	ConnectionID evidence.NullString `json:"connection_id"`
	Stream       string              `json:"stream"`
	RecordID     string              `json:"record_id"`
}

type readFieldField struct {
	Path     string `json:"path"`
	Type     string `json:"type"`
	TextLike bool   `json:"text_like"`
}

func (w *window) structured(env *Env) *readFieldResult {
	win := json.RawMessage(w.win.Raw)
	if w.withheld {
		// The RS window verbatim, but for the binary text.
		var jw jsonWriter
		jw.beginObject()
		w.win.ForEach(func(k, v gjson.Result) bool {
			if k.Str == "text" {
				jw.member("text", `""`)
				jw.member("text_withheld", `"base64 binary"`)
			} else {
				jw.member(k.Str, v.Raw)
			}
			return true
		})
		jw.endObject()
		win = jw.bytes()
	}
	res := &readFieldResult{
		Record: readFieldRecord{ID: w.id.String(), ConnectionID: evidence.NullString(w.id.ConnectionID()),
			Stream: w.id.Stream(), RecordID: w.id.RecordID()},
		Field:       readFieldField{Path: w.field, Type: w.fieldType, TextLike: w.fieldType == "string" && !w.withheld},
		Window:      win,
		ProviderURL: cmp.Or(w.baseURL, env.ProviderURL),
		RequestID:   w.requestID,
	}
	if w.win.Get("complete").Type != gjson.True || w.shownEnd != nil {
		res.Next, res.Previous = w.continuation("next_offset_chars"), w.continuation("previous_offset_chars")
	}
	return res
}

// parseID parses a record id argument; rejections become typed errors that
// never reach the RS.
func parseID(param, s string) (resultid.ID, error) {
	id, err := resultid.Parse(s)
	if err != nil {
		return resultid.ID{}, idError(param, err)
	}
	return id, nil
}

// partParam names the argument a resultid rejection is about when the id was
// built from separate arguments (connection_id, stream, record_id), so a bad
// connection_id is reported as connection_id; otherwise fallback.
func partParam(err error, fallback string) string {
	var e *resultid.Error
	if errors.As(err, &e) {
		switch e.Part {
		case resultid.PartConnection, resultid.PartStream, resultid.PartRecord:
			return string(e.Part)
		}
	}
	return fallback
}

// idError turns a resultid rejection into a tool error naming the argument.
func idError(param string, err error) error {
	var e *resultid.Error
	if !errors.As(err, &e) {
		return err
	}
	te := &toolError{Code: e.Code, Param: param, Message: e.Message,
		Next: "pass the id exactly as search, fetch or a content ladder returned it"}
	if e.Code == resultid.CodeConflictingConnection {
		te.Next = "drop connection_id (the id already names its connection), or pass an id without one"
	}
	return te
}

// shownText renders the text of a window under the visible rule for text
// values (hidden characters and hidden HTML parts marked) within
// limit code points: the rendering, how many code points of text it shows,
// and whether that is all of them. Marks are longer than the characters they
// stand for; a window they would push over its limit ends early instead, and
// the next read starts where it ends.
func shownText(text string, limit int) (string, int, bool) {
	if visible.Text.Clean(text) {
		return text, evidence.Len(text), true
	}
	b, n, whole := visible.Text.AppendPrefix(make([]byte, 0, len(text)+64), text, limit)
	return string(b), n, whole
}

// compactJSON marshals v without HTML escaping, for arguments shown in text.
func compactJSON(v any) string { return jsonw.Compact(v) }
