package evidence

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/resultid"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// Ladder bounds and the vocabulary shared with the TypeScript adapter.
const (
	LadderRecords      = 5    // entries per record_set or search_results ladder
	LadderTextFields   = 5    // field_windows per entry
	LadderJSONFields   = 8    // json_fields per entry
	LadderBinaryFields = 5    // binary_fields per entry
	WindowChars        = 4096 // limit_chars in read_record_field args
	JSONPreviewChars   = 512  // preview_text of a json field

	KindRecordSet     = "record_set"
	KindRecord        = "record"
	KindSearchResults = "search_results"

	ToolReadRecordField = "read_record_field"
	ToolFetch           = "fetch"

	StatusComplete   = "complete"
	StatusTruncated  = "truncated"
	StatusBinaryOnly = "binary-only"

	// LiveLookup: handles are continuation state, not authorization; every
	// follow-up is re-authorised by the RS under the same grant.
	LiveLookup = "live_lookup"
)

// Ladder is the content ladder of a page of records or search hits: per
// record, how to read what the text left out. It marshals with a stable key
// order for structuredContent.content_ladder.
type Ladder struct {
	Kind     string  `json:"kind"`
	ReadTool string  `json:"read_tool"`
	Records  []Entry `json:"records"`
	// MoreRecords counts records of the page without an entry (beyond LadderRecords).
	MoreRecords int `json:"more_records,omitempty"`
	// WithoutID counts records that carry no usable id and so have no entry.
	WithoutID int      `json:"records_without_id,omitempty"`
	Notes     []string `json:"notes,omitempty"`
}

// Entry is one record's rung: its id and every way to read more of it.
type Entry struct {
	// Kind and ReadTool are set only on a standalone entry (fetch).
	Kind            string        `json:"kind,omitempty"`
	ReadTool        string        `json:"read_tool,omitempty"`
	ID              string        `json:"id"`
	ConnectionID    NullString    `json:"connection_id"`
	Stream          string        `json:"stream"`
	RecordID        string        `json:"record_id"`
	HandleSemantics string        `json:"handle_semantics"`
	FieldWindows    []TextField   `json:"field_windows"`
	JSONFields      []JSONField   `json:"json_fields"`
	BinaryFields    []BinaryField `json:"binary_fields"`
	// MoreFields counts readable fields not listed (over a per-kind bound, or
	// named so that no tool argument can carry them); Notes say how to get them.
	MoreFields int `json:"more_fields,omitempty"`
	// ShownWhole counts text and JSON fields not listed because the text
	// preview shows them whole.
	ShownWhole int      `json:"shown_whole,omitempty"`
	Notes      []string `json:"notes,omitempty"`
}

// HasReads reports whether e names anything to read further: a field
// window, a JSON or binary field, or fields it could not list.
func (e *Entry) HasReads() bool {
	return len(e.FieldWindows)+len(e.JSONFields)+len(e.BinaryFields) > 0 || e.MoreFields > 0
}

// TextField is a string field readable in windows with read_record_field.
type TextField struct {
	FieldPath       string `json:"field_path"`
	TextLike        bool   `json:"text_like"`
	HandleSemantics string `json:"handle_semantics"`
	PreviewStatus   string `json:"preview_status"`
	// SizeChars is the field length in code points (unknown for search hits).
	SizeChars   *int   `json:"size_chars,omitempty"`
	PreviewText string `json:"preview_text,omitempty"`
	Read        Read   `json:"read"`
}

// JSONField is an object or array field, continued with fetch(fields).
type JSONField struct {
	FieldPath       string `json:"field_path"`
	JSONField       bool   `json:"json_field"`
	TextLike        bool   `json:"text_like"`
	HandleSemantics string `json:"handle_semantics"`
	PreviewStatus   string `json:"preview_status"`
	SizeChars       int    `json:"size_chars"`
	PreviewText     string `json:"preview_text"`
	Read            Read   `json:"read"`
}

// BinaryField is metadata of a binary field; its bytes never reach text. A
// blob_ref's bytes are at FetchURL (GET /v1/blobs/{blob_id}); an inline base64
// string has no separate address.
type BinaryField struct {
	FieldPath       string `json:"field_path"`
	BinaryField     bool   `json:"binary_field"`
	TextLike        bool   `json:"text_like"`
	HandleSemantics string `json:"handle_semantics"`
	PreviewStatus   string `json:"preview_status"`
	BlobID          string `json:"blob_id,omitempty"`
	MIMEType        string `json:"mime_type,omitempty"`
	SizeBytes       *int64 `json:"size_bytes,omitempty"`
	SHA256          string `json:"sha256,omitempty"`
	FetchURL        string `json:"fetch_url,omitempty"`
	// Fetch is the blob's handle, which fetch reads (the bytes stay
	// behind the grant's token).
	Fetch     string `json:"fetch,omitempty"`
	Encoding  string `json:"encoding,omitempty"`
	SizeChars *int   `json:"size_chars,omitempty"`
}

// Read is a ready-to-send tool call. Its string arguments are shown under
// the visible rule (package visible); the tools decode marks in arguments,
// so it reaches the RS as the original.
type Read struct {
	Tool string   `json:"tool"`
	Args ReadArgs `json:"args"`
}

// ReadArgs are the arguments of a read_record_field or fetch call, in a fixed
// key order.
type ReadArgs struct {
	ID          string   `json:"id"`
	FieldPath   string   `json:"field_path,omitempty"`
	Fields      []string `json:"fields,omitempty"`
	OffsetChars *int     `json:"offset_chars,omitempty"`
	LimitChars  int      `json:"limit_chars,omitempty"`
	Q           string   `json:"q,omitempty"`
	BeforeChars *int     `json:"before_chars,omitempty"`
	AfterChars  *int     `json:"after_chars,omitempty"`
}

// FieldRead returns the read_record_field call for a window of a field.
func FieldRead(id, fieldPath string, offsetChars, limitChars int) Read {
	return Read{Tool: ToolReadRecordField, Args: ReadArgs{ID: id, FieldPath: visible.String(fieldPath), OffsetChars: &offsetChars, LimitChars: limitChars}}
}

// MatchContextChars is the context a match read asks for on each side of the
// matched text.
const MatchContextChars = 200

// MatchRead returns the read_record_field call for the window around the
// first occurrence of q in a field (the RS matches case-sensitively), with
// MatchContextChars of context on each side.
func MatchRead(id, fieldPath, q string) Read {
	before, after := MatchContextChars, MatchContextChars
	return Read{Tool: ToolReadRecordField, Args: ReadArgs{ID: id, FieldPath: visible.String(fieldPath), Q: visible.String(q), BeforeChars: &before, AfterChars: &after}}
}

// FetchFields returns the fetch call projecting a record to fields.
func FetchFields(id string, fields ...string) Read {
	shown := make([]string, len(fields))
	for i, f := range fields {
		shown[i] = visible.String(f)
	}
	return Read{Tool: ToolFetch, Args: ReadArgs{ID: id, Fields: shown}}
}

// NullString marshals "" as JSON null.
type NullString string

// MarshalJSON implements json.Marshaler.
func (s NullString) MarshalJSON() ([]byte, error) {
	if s == "" {
		return []byte("null"), nil
	}
	return jsonw.AppendString(nil, string(s)), nil
}

// FieldPathOK reports whether name can be passed as a read_record_field
// field_path and as a fetch fields entry: non-empty valid UTF-8 without control
// characters, "/", "\" or "," (the RS splits fields on commas), not "." or "..",
// and no surrounding spaces (the RS trims fields). Ladders list only such
// fields; read_record_field should accept exactly these.
func FieldPathOK(name string) bool {
	if name == "" || name == "." || name == ".." || !utf8.ValidString(name) || strings.TrimSpace(name) != name {
		return false
	}
	for _, r := range name {
		if unicode.IsControl(r) || r == '/' || r == '\\' || r == ',' {
			return false
		}
	}
	return true
}

// identityFields are members of a record payload that repeat its identity.
var identityFields = map[string]bool{"id": true, "record_id": true, "connection_id": true, "connector_instance_id": true}

const (
	noteNoConnection = "no connection_id is known for this record, so its id is the legacy stream:record_id form: " +
		"on a grant with one connection it works as is; otherwise pass connection_id with fetch, " +
		"and connection_id + stream + record_id instead of id with read_record_field"
	noteMoreFields = "more fields than listed here: fetch the id to see every field"
)

// RecordEntry builds the rung of one RS record wrapper. Only members of the
// record's "data" object are fields; a record without one (a tombstone) gets
// an entry with no fields. It reports false when the record has no usable id.
func RecordEntry(rec gjson.Result, scope Scope) (Entry, bool) {
	return recordEntry(rec, scope, nil)
}

// recordEntry is RecordEntry leaving out the text and JSON fields in shown
// (those a preview shows whole; binary fields stay, as metadata).
func recordEntry(rec gjson.Result, scope Scope, shown map[string]bool) (Entry, bool) {
	id, ok := Identity(rec, scope)
	if !ok {
		return Entry{}, false
	}
	// Depth 1 is where "data" sits in a record's tree, as in a preview's.
	data := parse(rec.Get("data"), 1)
	return entryFor(id, &data, shown), true
}

// entryFor builds the rung of the record with the given id whose "data"
// member parsed to data (nil when it has none).
func entryFor(id resultid.ID, data *node, shown map[string]bool) Entry {
	e := newEntry(id.String(), id.ConnectionID(), id.Stream(), id.RecordID())
	// A blob-shaped data object is still the record's fields.
	if data == nil || data.kind != kindObject && data.kind != kindBlob {
		return e
	}
	var texts []TextField
	var jsons []JSONField
	var unreadable int
	for i := range data.kids {
		v := &data.kids[i]
		name := v.key
		if identityFields[name] {
			continue
		}
		container := v.kind == kindObject || v.kind == kindArray
		if shown[name] && (v.kind == kindString && v.str != "" || container && len(v.kids) > 0) {
			e.ShownWhole++
			continue
		}
		switch {
		case v.kind == kindBase64:
			n := v.chars
			e.BinaryFields = append(e.BinaryFields, BinaryField{FieldPath: visible.String(name), BinaryField: true, HandleSemantics: LiveLookup,
				PreviewStatus: StatusBinaryOnly, Encoding: "base64", SizeChars: &n})
		case v.kind == kindBlob:
			e.BinaryFields = append(e.BinaryFields, blobField(name, *v.blob, id.ConnectionID()))
		case container:
			if len(v.kids) == 0 {
				continue
			}
			if !FieldPathOK(name) {
				unreadable++
				continue
			}
			rendered := v.visibleJSON(id.ConnectionID())
			preview, cut := visible.CutShown(rendered, JSONPreviewChars)
			jsons = append(jsons, JSONField{FieldPath: visible.String(name), JSONField: true, HandleSemantics: LiveLookup,
				PreviewStatus: status(cut), SizeChars: Len(rendered), PreviewText: preview, Read: FetchFields(e.ID, name)})
		case v.kind == kindString && v.str != "":
			if !FieldPathOK(name) {
				unreadable++
				continue
			}
			n := v.chars
			texts = append(texts, TextField{FieldPath: visible.String(name), TextLike: true, HandleSemantics: LiveLookup,
				PreviewStatus: status(n > WindowChars), SizeChars: &n, Read: FieldRead(e.ID, name, 0, WindowChars)})
		}
	}
	more := unreadable
	e.FieldWindows, more = keepLargest(texts, LadderTextFields, func(t TextField) int { return *t.SizeChars }, more)
	e.JSONFields, more = keepLargest(jsons, LadderJSONFields, func(j JSONField) int { return j.SizeChars }, more)
	if e.FieldWindows == nil {
		e.FieldWindows = []TextField{}
	}
	if e.JSONFields == nil {
		e.JSONFields = []JSONField{}
	}
	if over := len(e.BinaryFields) - LadderBinaryFields; over > 0 {
		e.BinaryFields = e.BinaryFields[:LadderBinaryFields]
		more += over
	}
	if more > 0 {
		e.MoreFields = more
		e.Notes = append(e.Notes, noteMoreFields)
	}
	return e
}

// keepLargest keeps the n largest items (the ones a preview is likeliest to
// have cut), in their authored order, and adds the rest to more.
func keepLargest[T any](items []T, n int, size func(T) int, more int) ([]T, int) {
	if len(items) <= n {
		return items, more
	}
	order := make([]int, len(items))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(size(items[b]), size(items[a])) })
	keep := order[:n]
	slices.Sort(keep)
	out := make([]T, 0, n)
	for _, i := range keep {
		out = append(out, items[i])
	}
	return out, more + len(items) - n
}

// newEntry starts the rung of a record; its names are shown under the
// visible rule, like every string of a ladder.
func newEntry(id, connection, stream, record string) Entry {
	e := Entry{ID: id, ConnectionID: NullString(visible.String(connection)), Stream: visible.String(stream),
		RecordID: visible.String(record), HandleSemantics: LiveLookup,
		FieldWindows: []TextField{}, JSONFields: []JSONField{}, BinaryFields: []BinaryField{}}
	if connection == "" {
		e.Notes = append(e.Notes, noteNoConnection)
	}
	return e
}

func blobField(name string, b Blob, connection string) BinaryField {
	f := BinaryField{FieldPath: visible.String(name), BinaryField: true, HandleSemantics: LiveLookup, PreviewStatus: StatusBinaryOnly,
		BlobID: visible.String(b.BlobID), MIMEType: visible.String(b.MIMEType), SHA256: visible.String(b.SHA256),
		FetchURL: visible.String(b.FetchURL)}
	if h, ok := blobHandle(connection, b); ok {
		f.Fetch = h
	}
	if b.HasSize {
		size := b.SizeBytes
		f.SizeBytes = &size
	}
	return f
}

func status(cut bool) string {
	if cut {
		return StatusTruncated
	}
	return StatusComplete
}

// RecordSet builds the record_set ladder of an RS list body: entries for the
// first LadderRecords records that have an id.
func RecordSet(body []byte, scope Scope) Ladder {
	return RecordSetFor(body, scope, PreviewResult{})
}

// recordSetFromPreview is RecordSetFor built from what Preview read of the
// page, without reading the body again. It reports false when that is not
// enough: the preview read the page under another scope or did not finish,
// or an entry would come from a record after the previewed ones.
func recordSetFromPreview(scope Scope, p PreviewResult) (Ladder, bool) {
	if !p.rowsRead || len(p.lines) == 0 || p.lines[0].scope != scope {
		return Ladder{}, false
	}
	l := Ladder{Kind: KindRecordSet, ReadTool: ToolReadRecordField, Records: []Entry{}}
	whole := false
	for i, line := range p.lines {
		if len(l.Records) == LadderRecords {
			if line.hasID {
				l.MoreRecords++
			} else {
				l.WithoutID++
			}
			continue
		}
		var shown map[string]bool
		if i < len(p.Whole) {
			shown = p.Whole[i]
		}
		e, ok := line.entry(shown)
		if !ok {
			l.WithoutID++
			continue
		}
		whole = whole || e.ShownWhole > 0
		l.Records = append(l.Records, e)
	}
	if len(l.Records) < LadderRecords && p.tailIDs > 0 {
		return Ladder{}, false
	}
	l.MoreRecords += p.tailIDs
	l.WithoutID += p.tailNoIDs
	l.addNotes("structuredContent.data")
	if whole {
		l.Notes = append(l.Notes, noteShownWhole)
	}
	return l, true
}

// noteShownWhole explains Entry.ShownWhole.
const noteShownWhole = "fields the text shows whole are not listed (shown_whole counts them)"

// RecordSetFor is RecordSet for a page whose text is p (the Preview of the
// same body): fields p shows whole in a record's line are left out of its
// entry, since the text already holds them; everything the preview cut or
// left out is listed.
func RecordSetFor(body []byte, scope Scope, p PreviewResult) Ladder {
	if l, ok := recordSetFromPreview(scope, p); ok {
		return l
	}
	l := Ladder{Kind: KindRecordSet, ReadTool: ToolReadRecordField, Records: []Entry{}}
	i := -1
	whole := false
	readEnvelope(ParseBody(body)).rows.ForEach(func(_, rec gjson.Result) bool {
		i++
		if len(l.Records) == LadderRecords {
			// Past the entries, only whether a record has an id matters.
			if _, ok := Identity(rec, scope); ok {
				l.MoreRecords++
			} else {
				l.WithoutID++
			}
			return true
		}
		var shown map[string]bool
		if i < len(p.Whole) {
			shown = p.Whole[i]
		}
		var e Entry
		var ok bool
		if i < len(p.lines) && p.lines[i].scope == scope {
			e, ok = p.lines[i].entry(shown)
		} else {
			e, ok = recordEntry(rec, scope, shown)
		}
		if !ok {
			l.WithoutID++
			return true
		}
		whole = whole || e.ShownWhole > 0
		l.Records = append(l.Records, e)
		return true
	})
	l.addNotes("structuredContent.data")
	if whole {
		l.Notes = append(l.Notes, noteShownWhole)
	}
	return l
}

// addNotes explains MoreRecords and WithoutID; where names the structured
// location holding every record.
func (l *Ladder) addNotes(where string) {
	if l.MoreRecords > 0 {
		l.Notes = append(l.Notes, "entries cover the first "+strconv.Itoa(LadderRecords)+
			" records; the other ids are in "+where+" and take the same reads")
	}
	if l.WithoutID > 0 {
		l.Notes = append(l.Notes, "records without a usable id have no entry; read them in "+where)
	}
}

// FetchEntry builds the standalone rung of one RS record (the fetch ladder).
func FetchEntry(record []byte, scope Scope) (Entry, bool) {
	return FetchEntryFor(record, scope, nil)
}

// FetchEntryFor is FetchEntry for a document whose text shows the fields in
// shown whole: they are left out and counted in shown_whole.
func FetchEntryFor(record []byte, scope Scope, shown map[string]bool) (Entry, bool) {
	return FetchEntryWith(record, scope, shown, nil)
}

// FetchEntryWith is FetchEntryFor reusing data, the record's "data" member
// already parsed by ParsePayload (nil: parse it here). A tree parsed with
// data as its root lists the same fields as one parsed from the record, and
// a field nested too deep for either is read again from its source, so
// the entry is the same.
func FetchEntryWith(record []byte, scope Scope, shown map[string]bool, data *Payload) (Entry, bool) {
	var e Entry
	var ok bool
	if data == nil {
		e, ok = recordEntry(ParseBody(record), scope, shown)
	} else if id, idOK := Identity(ParseBody(record), scope); idOK {
		e, ok = entryFor(id, &data.tree, shown), true
	}
	if e.ShownWhole > 0 {
		e.Notes = append(e.Notes, noteShownWhole)
	}
	if ok {
		e.Kind, e.ReadTool = KindRecord, ToolReadRecordField
	}
	return e, ok
}

// HitPreviewChars bounds an excerpt's preview_text in a search ladder.
const HitPreviewChars = 320

// HitEntry builds the rung of one search hit. Its field windows name only
// record fields the RS reported: evidence_excerpts[].field_path, snippet.field
// and matched_fields[] (never hit attributes such as title or url). A window
// from an excerpt carries the excerpt as preview_text, marks balanced. When
// the excerpt highlights a match, its read is centred on the first marked text
// (which the RS copies verbatim from the field, so a case-sensitive search of
// the field finds it); otherwise it reads the field from the start.
func HitEntry(hit gjson.Result, scope Scope) (Entry, bool) {
	h, ok := ReadHit(hit)
	if !ok {
		return Entry{}, false
	}
	return h.Entry(scope)
}

// Entry is HitEntry of a hit already read.
func (h *Hit) Entry(scope Scope) (Entry, bool) {
	id, ok := h.Identity(scope)
	if !ok {
		return Entry{}, false
	}
	e := newEntry(id.String(), id.ConnectionID(), id.Stream(), id.RecordID())
	seen := map[string]bool{}
	unreadable := 0
	add := func(field, preview string, complete bool) {
		if field == "" || seen[field] {
			return
		}
		seen[field] = true
		if !FieldPathOK(field) {
			unreadable++
			return
		}
		read := FieldRead(e.ID, field, 0, WindowChars)
		if q := FirstMark(preview); q != "" {
			read = MatchRead(e.ID, field, q)
		}
		e.FieldWindows = append(e.FieldWindows, TextField{FieldPath: visible.String(field), TextLike: true, HandleSemantics: LiveLookup,
			PreviewStatus: status(!complete), PreviewText: Snippet(preview, HitPreviewChars), Read: read})
	}
	// One pass over each excerpt serves every lookup below.
	var xbuf, rbuf [16]keyValue
	gjson.Parse(h.excerpts).ForEach(func(_, x gjson.Result) bool {
		xm := readMembers(xbuf[:], x)
		field := xm.firstString("field_path")
		if field == "" {
			field = readMembers(rbuf[:], xm.get("read")).firstString("field")
		}
		add(field, xm.firstString("preview_text"), xm.get("truncated").Type == gjson.False)
		return true
	})
	if s := gjson.Parse(h.snippet); s.IsObject() {
		sm := readMembers(xbuf[:], s)
		add(sm.firstString("field"), sm.firstString("text"), false)
	}
	gjson.Parse(h.matched).ForEach(func(_, f gjson.Result) bool {
		if f.Type == gjson.String {
			add(f.Str, "", false)
		}
		return true
	})
	if over := len(e.FieldWindows) - LadderTextFields; over > 0 {
		e.FieldWindows = e.FieldWindows[:LadderTextFields]
		unreadable += over
	}
	if unreadable > 0 {
		e.MoreFields = unreadable
		e.Notes = append(e.Notes, noteMoreFields)
	}
	return e, true
}

// SearchLadder builds the search_results ladder of the hits a search returns,
// in order: entries for the first LadderRecords hits that have an id.
func SearchLadder(hits []Hit, scope Scope) Ladder {
	l := Ladder{Kind: KindSearchResults, ReadTool: ToolReadRecordField, Records: []Entry{}}
	for i := range hits {
		if len(l.Records) == LadderRecords {
			// Past the entries only whether a hit has an id matters: Entry
			// fails exactly when Identity does.
			if _, ok := hits[i].Identity(scope); ok {
				l.MoreRecords++
			} else {
				l.WithoutID++
			}
			continue
		}
		if e, ok := hits[i].Entry(scope); ok {
			l.Records = append(l.Records, e)
		} else {
			l.WithoutID++
		}
	}
	l.addNotes("structuredContent.results")
	return l
}
