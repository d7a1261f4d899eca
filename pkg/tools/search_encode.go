package tools

import (
	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
)

// encode writes s as json.Marshal would, with the RS envelope copied
// through jsonw.AppendRaw and the results and ladder written field by field: the
// guard's reflection over every result was a tenth of a search call. It
// reports false when a part cannot be encoded; the result then keeps s and
// the server's encoding check says why.
func (s *searchStructured) encode() (jsonw.Encoded, bool) {
	n := len(s.Data) + len(s.ProviderURL) + len(s.RequestID) + 96 + len(s.ContentLadder.Records)*512
	for i := range s.Results {
		r := &s.Results[i]
		n += len(r.ID) + len(r.Title) + len(r.URL) + len(r.ConnectionID) + len(r.ConnectorKey) +
			len(r.Stream) + len(r.RecordKey) + len(r.DisplayName) + len(r.Snippet) + 160
	}
	b := make([]byte, 0, n+n/16)
	var err error
	if b, err = jsonw.AppendRaw(append(b, `{"data":`...), s.Data); err != nil {
		return nil, false
	}
	b = jsonw.AppendSlice(append(b, `,"results":`...), s.Results, (*searchResult).appendJSON)
	b = s.ContentLadder.AppendJSON(append(b, `,"content_ladder":`...))
	b = jsonw.AppendMarshalString(append(b, `,"provider_url":`...), s.ProviderURL)
	if s.RequestID != "" {
		b = jsonw.AppendMarshalString(append(b, `,"request_id":`...), s.RequestID)
	}
	return jsonw.Encoded(append(b, '}')), true
}

// appendJSON writes r in its struct's field order, with its omissions.
func (r *searchResult) appendJSON(b []byte) []byte {
	b = jsonw.AppendMarshalString(append(b, `{"id":`...), r.ID)
	b = jsonw.AppendMarshalString(append(b, `,"title":`...), r.Title)
	b = jsonw.AppendMarshalString(append(b, `,"url":`...), r.URL)
	for _, f := range [...]struct{ key, v string }{
		{`,"connection_id":`, r.ConnectionID}, {`,"connector_key":`, r.ConnectorKey}, {`,"stream":`, r.Stream},
		{`,"record_key":`, r.RecordKey}, {`,"display_name":`, r.DisplayName}, {`,"snippet":`, r.Snippet},
	} {
		if f.v != "" {
			b = jsonw.AppendMarshalString(append(b, f.key...), f.v)
		}
	}
	return append(b, '}')
}
