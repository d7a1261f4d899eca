// Package evidence decides what a model sees of PDPP records: bounded record
// previews, content ladders (how to read what a preview left out), binary
// detection, titles, snippets and bounded text. Tools share it so every tool
// cuts, labels and continues records the same way.
//
// It works on raw RS JSON with gjson: authored key order is kept and nothing is
// decoded into maps and re-marshalled.
//
// # Use from the tools
//
// query_records renders the page text and its ladder from the RS body:
//
//	scope := evidence.Scope{Stream: stream, ConnectionID: connectionArg}
//	p := evidence.Preview(body, evidence.PreviewOptions{
//		Label:     `records from stream "messages"`,
//		Scope:     scope,
//		KeyFields: fieldsWithRoles, // x_pdpp_role primary-title / event-time, if known
//	})
//	ladder := evidence.RecordSet(body, scope) // structuredContent.content_ladder
//
// fetch bounds its document text and builds one rung:
//
//	cut := evidence.BoundText(id, "body", text, 16384) // cut.Next continues it
//	js := evidence.BoundJSON(id, payload, 16384)       // no text field: compact JSON;
//	                                                   // js.Next and js.Rest continue it
//	entry, ok := evidence.FetchEntry(body, scope)
//	title := evidence.Title(gjson.ParseBytes(body), evidence.TitleOptions{Fallback: id})
//
// read_record_field windows a non-text field (which the RS refuses) over its
// compact JSON rendering with the RS window math:
//
//	w, found := evidence.WindowOf(evidence.VisibleJSON(value), evidence.WindowSelector{Offset: 0})
//
// search shapes each hit and builds the hit ladder (an excerpt that highlights
// a match is read around it with q):
//
//	h, _ := evidence.ReadHit(raw) // one pass; the one reader of hits
//	id, ok := h.Identity(evidence.Scope{ConnectionID: connectionArg})
//	title := evidence.Title(h.Raw, evidence.TitleOptions{Fallback: id.String()})
//	ladder := evidence.SearchLadder(hits, evidence.Scope{ConnectionID: connectionArg})
//
// Ids in previews and ladders come from Identity, which uses the record-level
// "id" (a hit's "record_key") and formats with resultid, so they parse with
// resultid.Parse and fetch as they are.
//
// # Characters
//
// Field lengths, offsets and value cuts count Unicode code points, the unit
// the RS uses for offset_chars, size and window bounds in the field-window
// route. (The TypeScript adapter counted UTF-16 code units, which disagrees with
// the RS on characters outside the Basic Multilingual Plane, so a continuation it
// computed could land one unit off per emoji.) A cut never splits a code point;
// invalid UTF-8 bytes count one each.
//
// Whole-text budgets (the record preview) are enforced in UTF-8 bytes, which
// bounds the characters as well: a 1,792-byte preview is also at most 1,792
// characters, and multi-byte data cannot push the wire size over the budget.
//
// # Binary values
//
// A value is binary when it is a blob_ref-shaped object (a blob_id plus a
// mime_type or a size_bytes) or a long base64-looking string (IsBase64Blob).
// Binary values never reach text: they render as metadata, and a blob_ref
// keeps the fetch_url the RS injected (GET /v1/blobs/{blob_id}). Ordinary
// nested objects that merely have an id or a url stay visible data.
package evidence
