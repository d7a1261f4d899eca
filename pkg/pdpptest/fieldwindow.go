package pdpptest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Field window: GET /v1/streams/{stream}/records/{id}/field-window.
// A grant-checked window of characters over one top-level
// string field, for reading long text in pieces. Offsets and lengths count
// Unicode code points, as SQLite's substr and instr do in the reference.

const (
	fieldWindowDefaultLimit = 4096
	fieldWindowMaxLimit     = 16384
	fieldWindowMaxContext   = 8192
)

func (s *Server) mountFieldWindow(m *http.ServeMux) {
	m.HandleFunc("GET /v1/streams/{stream}/records/{id}/field-window", s.read(s.handleFieldWindow))
}

// windowSelector is a validated window request.
type windowSelector struct {
	// offset is the start in offset mode; q switches to query mode.
	offset        int
	limit         int
	q             string
	before, after int
	// clamped says the requested length was cut to fieldWindowMaxLimit.
	clamped   bool
	requested int
}

// handleFieldWindow answers one window. The order of checks follows the
// reference: the token's stream and connection context (a client's fails
// closed with 401 before anything else), field, the stream for the owner, the
// selector, the field grant, then the record and the field itself.
func (s *Server) handleFieldWindow(c *call) error {
	stream := c.r.PathValue("stream")
	var sc *streamScope
	var aerr *apiError
	if c.who.client() {
		if sc, aerr = c.streamScope(stream, scopeOptions{ownerNeedsSource: true}); aerr != nil {
			return aerr
		}
	}
	field, aerr := fieldWindowField(c.q)
	if aerr != nil {
		return aerr
	}
	if sc == nil {
		if sc, aerr = c.streamScope(stream, scopeOptions{ownerNeedsSource: true}); aerr != nil {
			if aerr.status == http.StatusNotFound && aerr.code == "not_found" {
				return errf(http.StatusNotFound, "stream_not_declared", "Stream '%s' is not declared by any connector", stream)
			}
			return aerr
		}
	}
	sel, aerr := parseWindowSelector(c.q)
	if aerr != nil {
		return aerr
	}
	if !sc.granted(field) {
		return errf(http.StatusForbidden, "field_not_granted",
			"field '%s' is not within the granted projection for this stream", field).param("field")
	}
	id := c.r.PathValue("id")
	_, rec, aerr := c.findRecord(sc, id)
	if aerr != nil {
		return aerr
	}
	text, aerr := textField(rec, field)
	if aerr != nil {
		return aerr
	}
	win, aerr := sel.window(text, field)
	if aerr != nil {
		return aerr
	}
	body := obj("field", obj("path", field, "type", "string"), "object", "field_window", "record_id", id,
		"stream", sc.decl.Name, "url", c.r.URL.EscapedPath(), "window", win)
	var warnings []any
	if sc.aliasUsed {
		warnings = append(warnings, aliasWarning())
	}
	if sel.clamped {
		warnings = append(warnings, limitClampedWarning("limit_chars", sel.requested, fieldWindowMaxLimit,
			fmt.Sprintf("The window was limited to %d characters; follow window.next_offset_chars for the rest.", fieldWindowMaxLimit)))
	}
	if len(warnings) > 0 {
		body.set("meta", obj("count", obj("kind", "none"), "warnings", warnings))
	}
	return c.ok(body)
}

// fieldWindowField reads the required field: one non-empty top-level key.
func fieldWindowField(q *query) (string, *apiError) {
	n := q.node("field")
	if n == nil || n.nested() || len(n.vals) != 1 || n.vals[0] == "" {
		return "", errf(http.StatusBadRequest, "invalid_field_path", "field is required and must be a non-empty string").param("field")
	}
	if strings.IndexByte(n.vals[0], 0) >= 0 {
		return "", errf(http.StatusBadRequest, "invalid_field_path", "field must not contain NUL").param("field")
	}
	return n.vals[0], nil
}

// parseWindowSelector validates offset_chars, limit_chars, q, before_chars
// and after_chars. Every mistake is 400 invalid_window: a silently shifted
// window would mislead a client paging through text.
func parseWindowSelector(q *query) (*windowSelector, *apiError) {
	invalid := func(format string, args ...any) *apiError {
		return errf(http.StatusBadRequest, "invalid_window", format, args...)
	}
	hasQ := q.has("q")
	if !hasQ && (q.has("before_chars") || q.has("after_chars")) {
		return nil, invalid("before_chars and after_chars require q")
	}
	if hasQ && q.has("offset_chars") {
		return nil, invalid("q is exclusive with offset_chars").param("offset_chars")
	}
	sel := &windowSelector{limit: fieldWindowDefaultLimit}
	if q.has("offset_chars") {
		n, ok := windowInt(q, "offset_chars")
		if !ok {
			return nil, invalid("offset_chars must be a non-negative integer").param("offset_chars")
		}
		sel.offset = n
	}
	explicitLimit := q.has("limit_chars")
	if explicitLimit {
		n, ok := windowInt(q, "limit_chars")
		if !ok || n == 0 {
			return nil, invalid("limit_chars must be a positive integer").param("limit_chars")
		}
		sel.limit = n
	}
	if !hasQ {
		sel.clampLimit()
		return sel, nil
	}
	v, _, err := q.single("q")
	if err != nil || v == "" {
		return nil, invalid("q must be a non-empty string").param("q")
	}
	sel.q = v
	for _, ctx := range []struct {
		name string
		dst  *int
	}{{"before_chars", &sel.before}, {"after_chars", &sel.after}} {
		if !q.has(ctx.name) {
			continue
		}
		n, ok := windowInt(q, ctx.name)
		if !ok {
			return nil, invalid("%s must be a non-negative integer", ctx.name).param(ctx.name)
		}
		if n > fieldWindowMaxContext {
			return nil, invalid("%s must be <= %d", ctx.name, fieldWindowMaxContext).param(ctx.name)
		}
		*ctx.dst = n
	}
	// Without limit_chars, context sizes the window around the match.
	if !explicitLimit && (q.has("before_chars") || q.has("after_chars")) {
		sel.limit = sel.before + utf8.RuneCountInString(sel.q) + sel.after
	}
	sel.clampLimit()
	return sel, nil
}

func (sel *windowSelector) clampLimit() {
	if sel.limit > fieldWindowMaxLimit {
		sel.clamped, sel.requested, sel.limit = true, sel.limit, fieldWindowMaxLimit
	}
}

// windowInt reads a non-negative decimal integer; huge values saturate so
// they clamp or fail the range checks rather than wrap.
func windowInt(q *query, key string) (int, bool) {
	v, _, aerr := q.single(key)
	if aerr != nil || v == "" || strings.Trim(v, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 1 << 40, true // only digits, so it overflowed: saturate
	}
	return int(min(n, 1<<40)), true
}

// textField returns the string value of a top-level field, or the error for
// an absent or non-text field.
func textField(rec *storedRecord, field string) (string, *apiError) {
	raw, ok := rec.raw(field)
	if !ok {
		return "", errf(http.StatusNotFound, "field_not_found", "field '%s' is not present on this record", field).param("field")
	}
	// Decoding null into a string would succeed, so the kind decides.
	var text string
	if kind := jsonKind(raw); kind != "string" || json.Unmarshal(raw, &text) != nil {
		return "", errf(http.StatusUnprocessableEntity, "field_not_text",
			"field '%s' is %s, not a readable text field; non-text and binary fields are metadata-only", field, kind).param("field")
	}
	return text, nil
}

// jsonKind names the JSON type of a raw value.
func jsonKind(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "null":
		return "null"
	case s == "true" || s == "false":
		return "boolean"
	case strings.HasPrefix(s, "{"):
		return "object"
	case strings.HasPrefix(s, "["):
		return "array"
	case strings.HasPrefix(s, `"`):
		return "string"
	}
	return "number"
}

// window cuts the text. In query mode the window starts before_chars ahead of
// the first case-insensitive occurrence of q, as the reference server
// matches it.
func (sel *windowSelector) window(text, field string) (*object, *apiError) {
	runes := []rune(text)
	total := len(runes)
	offset := sel.offset
	var matchStart, matchEnd any
	if sel.q != "" {
		start := indexFoldChars(text, sel.q)
		if start < 0 {
			return nil, errf(http.StatusNotFound, "query_not_found", "q was not found in field '%s'", field).param("q")
		}
		matchStart, matchEnd = start, start+utf8.RuneCountInString(sel.q)
		offset = max(0, start-sel.before)
	}
	start := min(offset, total)
	end := min(start+sel.limit, total)
	var next, prev any
	if end < total {
		next = end
	}
	if start > 0 {
		prev = max(0, start-sel.limit)
	}
	return obj("complete", start == 0 && end >= total, "end_chars", end, "has_more", end < total,
		"limit_chars", sel.limit, "match_end_chars", matchEnd, "match_start_chars", matchStart,
		"next_offset_chars", next, "previous_offset_chars", prev, "start_chars", start,
		"text", string(runes[start:end]), "total_chars", total), nil
}

// indexFoldChars is the code-point offset of the first occurrence of q in
// text ignoring case, or -1. Each code point is lowered on its own, so an
// offset in the lowered text is an offset in text; an exact occurrence
// counts too, so bytes that lowering would replace (invalid UTF-8) still
// match themselves.
func indexFoldChars(text, q string) int {
	at := -1
	if i := strings.Index(text, q); i >= 0 {
		at = utf8.RuneCountInString(text[:i])
	}
	lowered := strings.Map(unicode.ToLower, text)
	if i := strings.Index(lowered, strings.Map(unicode.ToLower, q)); i >= 0 {
		if f := utf8.RuneCountInString(lowered[:i]); at < 0 || f < at {
			at = f
		}
	}
	return at
}
