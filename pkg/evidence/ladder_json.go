package evidence

import (
	"strconv"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
)

// The ladder travels in every query_records, search and fetch answer, and
// encoding/json's reflection over its nested entries was a tenth of a
// search call. AppendJSON writes it as json.Marshal would (field order,
// omissions, escaping), which FuzzLadderJSON holds it to.

// AppendJSON appends l as json.Marshal encodes it.
func (l *Ladder) AppendJSON(b []byte) []byte {
	b = jsonw.AppendMarshalString(append(b, `{"kind":`...), l.Kind)
	b = jsonw.AppendMarshalString(append(b, `,"read_tool":`...), l.ReadTool)
	b = jsonw.AppendSlice(append(b, `,"records":`...), l.Records, (*Entry).AppendJSON)
	b = appendIntOmit(b, `,"more_records":`, l.MoreRecords)
	b = appendIntOmit(b, `,"records_without_id":`, l.WithoutID)
	b = appendStringsOmit(b, `,"notes":`, l.Notes)
	return append(b, '}')
}

// AppendJSON appends e as json.Marshal encodes it.
func (e *Entry) AppendJSON(b []byte) []byte {
	b = append(b, '{')
	if e.Kind != "" {
		b = jsonw.AppendMarshalString(append(b, `"kind":`...), e.Kind)
		b = append(b, ',')
	}
	if e.ReadTool != "" {
		b = jsonw.AppendMarshalString(append(b, `"read_tool":`...), e.ReadTool)
		b = append(b, ',')
	}
	b = jsonw.AppendMarshalString(append(b, `"id":`...), e.ID)
	b = e.ConnectionID.appendJSON(append(b, `,"connection_id":`...))
	b = jsonw.AppendMarshalString(append(b, `,"stream":`...), e.Stream)
	b = jsonw.AppendMarshalString(append(b, `,"record_id":`...), e.RecordID)
	b = jsonw.AppendMarshalString(append(b, `,"handle_semantics":`...), e.HandleSemantics)
	b = jsonw.AppendSlice(append(b, `,"field_windows":`...), e.FieldWindows, (*TextField).appendJSON)
	b = jsonw.AppendSlice(append(b, `,"json_fields":`...), e.JSONFields, (*JSONField).appendJSON)
	b = jsonw.AppendSlice(append(b, `,"binary_fields":`...), e.BinaryFields, (*BinaryField).appendJSON)
	b = appendIntOmit(b, `,"more_fields":`, e.MoreFields)
	b = appendIntOmit(b, `,"shown_whole":`, e.ShownWhole)
	b = appendStringsOmit(b, `,"notes":`, e.Notes)
	return append(b, '}')
}

func (f *TextField) appendJSON(b []byte) []byte {
	b = jsonw.AppendMarshalString(append(b, `{"field_path":`...), f.FieldPath)
	b = appendBool(append(b, `,"text_like":`...), f.TextLike)
	b = jsonw.AppendMarshalString(append(b, `,"handle_semantics":`...), f.HandleSemantics)
	b = jsonw.AppendMarshalString(append(b, `,"preview_status":`...), f.PreviewStatus)
	if f.SizeChars != nil {
		b = strconv.AppendInt(append(b, `,"size_chars":`...), int64(*f.SizeChars), 10)
	}
	b = appendStringOmit(b, `,"preview_text":`, f.PreviewText)
	b = f.Read.appendJSON(append(b, `,"read":`...))
	return append(b, '}')
}

func (f *JSONField) appendJSON(b []byte) []byte {
	b = jsonw.AppendMarshalString(append(b, `{"field_path":`...), f.FieldPath)
	b = appendBool(append(b, `,"json_field":`...), f.JSONField)
	b = appendBool(append(b, `,"text_like":`...), f.TextLike)
	b = jsonw.AppendMarshalString(append(b, `,"handle_semantics":`...), f.HandleSemantics)
	b = jsonw.AppendMarshalString(append(b, `,"preview_status":`...), f.PreviewStatus)
	b = strconv.AppendInt(append(b, `,"size_chars":`...), int64(f.SizeChars), 10)
	b = jsonw.AppendMarshalString(append(b, `,"preview_text":`...), f.PreviewText)
	b = f.Read.appendJSON(append(b, `,"read":`...))
	return append(b, '}')
}

func (f *BinaryField) appendJSON(b []byte) []byte {
	b = jsonw.AppendMarshalString(append(b, `{"field_path":`...), f.FieldPath)
	b = appendBool(append(b, `,"binary_field":`...), f.BinaryField)
	b = appendBool(append(b, `,"text_like":`...), f.TextLike)
	b = jsonw.AppendMarshalString(append(b, `,"handle_semantics":`...), f.HandleSemantics)
	b = jsonw.AppendMarshalString(append(b, `,"preview_status":`...), f.PreviewStatus)
	b = appendStringOmit(b, `,"blob_id":`, f.BlobID)
	b = appendStringOmit(b, `,"mime_type":`, f.MIMEType)
	if f.SizeBytes != nil {
		b = strconv.AppendInt(append(b, `,"size_bytes":`...), *f.SizeBytes, 10)
	}
	b = appendStringOmit(b, `,"sha256":`, f.SHA256)
	b = appendStringOmit(b, `,"fetch_url":`, f.FetchURL)
	b = appendStringOmit(b, `,"fetch":`, f.Fetch)
	b = appendStringOmit(b, `,"encoding":`, f.Encoding)
	if f.SizeChars != nil {
		b = strconv.AppendInt(append(b, `,"size_chars":`...), int64(*f.SizeChars), 10)
	}
	return append(b, '}')
}

func (r *Read) appendJSON(b []byte) []byte {
	b = jsonw.AppendMarshalString(append(b, `{"tool":`...), r.Tool)
	a := &r.Args
	b = jsonw.AppendMarshalString(append(b, `,"args":{"id":`...), a.ID)
	b = appendStringOmit(b, `,"field_path":`, a.FieldPath)
	b = appendStringsOmit(b, `,"fields":`, a.Fields)
	b = appendIntPtrOmit(b, `,"offset_chars":`, a.OffsetChars)
	b = appendIntOmit(b, `,"limit_chars":`, a.LimitChars)
	b = appendStringOmit(b, `,"q":`, a.Q)
	b = appendIntPtrOmit(b, `,"before_chars":`, a.BeforeChars)
	b = appendIntPtrOmit(b, `,"after_chars":`, a.AfterChars)
	return append(b, '}', '}')
}

// appendJSON writes s as its MarshalJSON does, then as encoding/json
// re-escapes a Marshaler's output (<, >, & and U+2028/9).
func (s NullString) appendJSON(b []byte) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	out, err := jsonw.AppendRaw(b, jsonw.AppendString(nil, string(s)))
	if err != nil { // not reachable: AppendString writes a valid string
		return jsonw.AppendMarshalString(b, string(s))
	}
	return out
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

func appendStringOmit(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	return jsonw.AppendMarshalString(append(b, key...), v)
}

func appendIntOmit(b []byte, key string, v int) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendInt(append(b, key...), int64(v), 10)
}

func appendIntPtrOmit(b []byte, key string, v *int) []byte {
	if v == nil {
		return b
	}
	return strconv.AppendInt(append(b, key...), int64(*v), 10)
}

func appendStringsOmit(b []byte, key string, v []string) []byte {
	if len(v) == 0 {
		return b
	}
	b = append(append(b, key...), '[')
	for i, s := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonw.AppendMarshalString(b, s)
	}
	return append(b, ']')
}
