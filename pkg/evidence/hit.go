package evidence

import (
	"cmp"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/resultid"
)

// Hit is one search hit as the RS sent it, read in one pass over its
// members. Search shaping, the search ladder and the fan-out's ranking and
// de-duplication all read hits through ReadHit, so a hit means the same to
// each of them.
//
// Of a member that appears twice, the first counts, as with gjson's Get.
type Hit struct {
	// Raw is the hit's JSON.
	Raw gjson.Result
	// ConnectionID is connection_id, else the deprecated
	// connector_instance_id.
	ConnectionID string
	// ConnectorKey is connector_key, else connector_id (the RS's name for
	// the connector key on hits).
	ConnectorKey string
	DisplayName  string
	// Stream is stream, else stream_name.
	Stream string
	// RecordKey is record_key, else record_id, else id: the record's key in
	// its stream.
	RecordKey string
	// RecordURL is the RS's record_url, often relative to the provider.
	RecordURL string
	// Score is the hit's own score; Score.Kind is "" when it has none that
	// can be compared.
	Score Score

	// The raw JSON of snippet, evidence_excerpts and matched_fields: kept
	// as text, re-parsed lazily (gjson parses a container on demand), so a
	// page of hits held for ranking stays small.
	snippet, excerpts, matched string
	keyNamed                   bool
}

// NamesConnectorKey reports whether the hit has a connector_key member (not
// only connector_id), for a caller that adds one.
func (h *Hit) NamesConnectorKey() bool { return h.keyNamed }

// Score is a hit's score: a bare number (Kind "number") or an object
// {kind, value, order} (Kind "<kind>/<order>").
type Score struct {
	Value         float64
	Kind          string
	LowerIsBetter bool
}

// ReadHit reads hit. It reports false when hit is not a JSON object.
func ReadHit(hit gjson.Result) (Hit, bool) {
	h := Hit{Raw: hit}
	if !hit.IsObject() {
		return h, false
	}
	var conn, alias, key, connector, stream, streamName, recordKey, recordID, id string
	var seen uint32 // one bit per member below: the first of a name counts
	first := func(bit uint32) bool {
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	}
	str := func(dst *string, v gjson.Result, bit uint32) {
		if first(bit) && v.Type == gjson.String {
			*dst = v.Str
		}
	}
	hit.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "connection_id":
			str(&conn, v, 1<<0)
		case "connector_instance_id":
			str(&alias, v, 1<<1)
		case "connector_key":
			str(&key, v, 1<<2)
		case "connector_id":
			str(&connector, v, 1<<3)
		case "display_name":
			str(&h.DisplayName, v, 1<<4)
		case "stream":
			str(&stream, v, 1<<5)
		case "stream_name":
			str(&streamName, v, 1<<6)
		case "record_key":
			str(&recordKey, v, 1<<7)
		case "record_id":
			str(&recordID, v, 1<<8)
		case "id":
			str(&id, v, 1<<9)
		case "record_url":
			str(&h.RecordURL, v, 1<<10)
		case "snippet":
			if first(1 << 11) {
				h.snippet = v.Raw
			}
		case "evidence_excerpts":
			if first(1 << 12) {
				h.excerpts = v.Raw
			}
		case "matched_fields":
			if first(1 << 13) {
				h.matched = v.Raw
			}
		case "score":
			if first(1 << 14) {
				h.Score = readScore(v)
			}
		}
		return true
	})
	h.ConnectionID = cmp.Or(conn, alias)
	h.ConnectorKey, h.keyNamed = cmp.Or(key, connector), key != ""
	h.Stream = cmp.Or(stream, streamName)
	h.RecordKey = cmp.Or(recordKey, recordID, id)
	return h, true
}

func readScore(v gjson.Result) Score {
	switch {
	case v.Type == gjson.Number:
		return Score{Value: v.Num, Kind: "number"}
	case v.IsObject():
		var kind, order string
		var val gjson.Result
		v.ForEach(func(k, f gjson.Result) bool {
			switch k.Str {
			case "kind":
				kind = f.Str
			case "order":
				order = f.Str
			case "value":
				val = f
			}
			return true
		})
		if val.Type == gjson.Number {
			return Score{Value: val.Num, Kind: kind + "/" + order, LowerIsBetter: order == "lower_is_better"}
		}
	}
	return Score{}
}

// Identity is the hit's record id: its own connection and stream, else
// scope's, and its record key. It reports false when no valid id can be
// formed.
func (h *Hit) Identity(scope Scope) (resultid.ID, bool) {
	id, err := resultid.New(cmp.Or(h.ConnectionID, scope.ConnectionID), cmp.Or(h.Stream, scope.Stream), h.RecordKey)
	return id, err == nil
}

// SnippetField is the field a snippet object names ("" for a bare string
// snippet or none).
func (h *Hit) SnippetField() string {
	return gjson.Get(h.snippet, "field").Str
}

// SnippetText is the hit's snippet: snippet.text, or a snippet that is a
// bare string; "" when there is none.
func (h *Hit) SnippetText() (string, bool) {
	s := gjson.Parse(h.snippet)
	if s.IsObject() {
		s = s.Get("text")
	}
	return s.Str, s.Type == gjson.String
}
