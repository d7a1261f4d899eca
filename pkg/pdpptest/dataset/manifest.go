package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Manifest is the part of a connector manifest the resource server reads. The
// verbatim JSON of each stream's schema, query, relationships, views and
// selection is kept too, because the server echoes those declarations as-is.
type Manifest struct {
	ConnectorID  string
	ConnectorKey string
	DisplayName  string
	// MaxStalenessSeconds is capabilities.refresh_policy.maximum_staleness_seconds
	// (0 when undeclared): how old data may be and still count as current.
	MaxStalenessSeconds int
	Streams             []*StreamDecl
}

// Stream returns the declaration of the named stream, or nil.
func (m *Manifest) Stream(name string) *StreamDecl {
	for _, s := range m.Streams {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// StreamDecl is one declared stream.
type StreamDecl struct {
	Name             string
	Semantics        string
	PrimaryKey       []string
	CursorField      string
	ConsentTimeField string
	// Properties in authored order.
	Properties []Property
	Required   []string
	// Relationships and Views in authored order.
	Relationships []Relationship
	Views         []View
	Query         Query

	// Verbatim declarations; nil when the manifest omits them.
	SchemaRaw        json.RawMessage
	QueryRaw         json.RawMessage
	RelationshipsRaw json.RawMessage
	ViewsRaw         json.RawMessage
	SelectionRaw     json.RawMessage
}

// Property returns the declared property, or nil.
func (s *StreamDecl) Property(name string) *Property {
	for i := range s.Properties {
		if s.Properties[i].Name == name {
			return &s.Properties[i]
		}
	}
	return nil
}

// Relationship returns the named relationship, or nil.
func (s *StreamDecl) Relationship(name string) *Relationship {
	for i := range s.Relationships {
		if s.Relationships[i].Name == name {
			return &s.Relationships[i]
		}
	}
	return nil
}

// View returns the view with the given id, or nil.
func (s *StreamDecl) View(id string) *View {
	for i := range s.Views {
		if s.Views[i].ID == id {
			return &s.Views[i]
		}
	}
	return nil
}

// Property is one top-level schema property.
type Property struct {
	Name string
	// Types is the JSON Schema "type", as a list even when declared as a string.
	Types  []string
	Format string
	// XType and XRole are the x_pdpp_type and x_pdpp_role annotations.
	XType string
	XRole string
	// Raw is the property schema verbatim.
	Raw json.RawMessage
}

// NonNullTypes returns Types without "null".
func (p *Property) NonNullTypes() []string {
	var out []string
	for _, t := range p.Types {
		if t != "null" {
			out = append(out, t)
		}
	}
	return out
}

// Scalar reports whether the property has exactly one non-null type and it is
// boolean, integer, number or string: the fields exact filters accept.
func (p *Property) Scalar() bool {
	nn := p.NonNullTypes()
	if len(nn) != 1 {
		return false
	}
	switch nn[0] {
	case "boolean", "integer", "number", "string":
		return true
	}
	return false
}

// Numeric reports whether the property's single non-null type is integer or number.
func (p *Property) Numeric() bool {
	nn := p.NonNullTypes()
	return len(nn) == 1 && (nn[0] == "integer" || nn[0] == "number")
}

// Temporal reports whether the property is a string with format date or date-time.
func (p *Property) Temporal() bool {
	nn := p.NonNullTypes()
	return len(nn) == 1 && nn[0] == "string" && (p.Format == "date" || p.Format == "date-time")
}

// Relationship is a declared relation from a stream to a child stream whose
// ForeignKey field holds the parent's primary key.
type Relationship struct {
	Name        string `json:"name"`
	Stream      string `json:"stream"`
	ForeignKey  string `json:"foreign_key"`
	Cardinality string `json:"cardinality"`
}

// View is a named field list.
type View struct {
	ID     string   `json:"id"`
	Label  string   `json:"label"`
	Fields []string `json:"fields"`
}

// Query is a stream's declared query capabilities.
type Query struct {
	// RangeFilters maps a field to its declared operators; RangeFilterFields
	// keeps the authored field order.
	RangeFilters      map[string][]string
	RangeFilterFields []string
	Expand            []ExpandDecl
	LexicalFields     []string
	SemanticFields    []string
	// Aggregations is nil when the stream declares none.
	Aggregations *Aggregations
}

// ExpandItem returns the declared expand entry, or nil.
func (q *Query) ExpandItem(name string) *ExpandDecl {
	for i := range q.Expand {
		if q.Expand[i].Name == name {
			return &q.Expand[i]
		}
	}
	return nil
}

// ExpandDecl is one query.expand entry. Zero limits mean "not declared".
type ExpandDecl struct {
	Name         string `json:"name"`
	DefaultLimit int    `json:"default_limit,omitempty"`
	MaxLimit     int    `json:"max_limit,omitempty"`
}

// Aggregations is query.aggregations.
type Aggregations struct {
	Count         bool     `json:"count"`
	Sum           []string `json:"sum"`
	Min           []string `json:"min"`
	Max           []string `json:"max"`
	GroupBy       []string `json:"group_by"`
	GroupByTime   []string `json:"group_by_time"`
	CountDistinct []string `json:"count_distinct"`
}

// Member is one key/value pair of a JSON object, in document order.
type Member struct {
	Key   string
	Value json.RawMessage
}

// ObjectMembers splits a JSON object into its members in document order.
// Duplicate keys are kept as they appear. Values alias raw.
func ObjectMembers(raw []byte) ([]Member, error) {
	// Validating first lets the scan below trust the grammar: it only has to
	// find where each key and value ends.
	if !json.Valid(raw) {
		return nil, errors.New("invalid JSON")
	}
	i := skipSpace(raw, 0)
	if raw[i] != '{' {
		return nil, errors.New("not a JSON object")
	}
	i = skipSpace(raw, i+1)
	var out []Member
	for raw[i] != '}' {
		end := stringEnd(raw, i)
		key, err := unquote(raw[i:end])
		if err != nil {
			return nil, err
		}
		i = skipSpace(raw, skipSpace(raw, end)+1) // past ':'
		vEnd := valueEnd(raw, i)
		out = append(out, Member{Key: key, Value: json.RawMessage(raw[i:vEnd:vEnd])})
		i = skipSpace(raw, vEnd)
		if raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return out, nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the string starting at b[i] == '"'.
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// valueEnd returns the index just past the value starting at b[i].
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = stringEnd(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	}
	for i < len(b) && !strings.ContainsRune(",}] \t\r\n", rune(b[i])) {
		i++
	}
	return i
}

// unquote decodes a JSON string literal, taking a fast path when it has no
// escapes and is valid UTF-8 (encoding/json replaces invalid bytes).
func unquote(lit []byte) (string, error) {
	if bytes.IndexByte(lit, '\\') < 0 && utf8.Valid(lit) {
		return string(lit[1 : len(lit)-1]), nil
	}
	var s string
	err := json.Unmarshal(lit, &s)
	return s, err
}

// ParseManifest reads a connector manifest.
func ParseManifest(raw []byte) (*Manifest, error) {
	var doc struct {
		ConnectorID  string `json:"connector_id"`
		ConnectorKey string `json:"connector_key"`
		DisplayName  string `json:"display_name"`
		Capabilities struct {
			RefreshPolicy struct {
				MaxStaleness int `json:"maximum_staleness_seconds"`
			} `json:"refresh_policy"`
		} `json:"capabilities"`
		Streams []json.RawMessage `json:"streams"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	m := &Manifest{
		ConnectorID: doc.ConnectorID, ConnectorKey: doc.ConnectorKey, DisplayName: doc.DisplayName,
		MaxStalenessSeconds: doc.Capabilities.RefreshPolicy.MaxStaleness,
	}
	for i, sr := range doc.Streams {
		s, err := parseStreamDecl(sr)
		if err != nil {
			return nil, fmt.Errorf("manifest stream %d: %w", i, err)
		}
		m.Streams = append(m.Streams, s)
	}
	return m, nil
}

func parseStreamDecl(raw json.RawMessage) (*StreamDecl, error) {
	var doc struct {
		Name             string          `json:"name"`
		Semantics        string          `json:"semantics"`
		PrimaryKey       []string        `json:"primary_key"`
		CursorField      string          `json:"cursor_field"`
		ConsentTimeField string          `json:"consent_time_field"`
		Schema           json.RawMessage `json:"schema"`
		Selection        json.RawMessage `json:"selection"`
		Relationships    json.RawMessage `json:"relationships"`
		Views            json.RawMessage `json:"views"`
		Query            json.RawMessage `json:"query"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	if doc.Name == "" {
		return nil, errors.New("stream without a name")
	}
	s := &StreamDecl{
		Name: doc.Name, Semantics: doc.Semantics, PrimaryKey: doc.PrimaryKey,
		CursorField: doc.CursorField, ConsentTimeField: doc.ConsentTimeField,
		SchemaRaw: doc.Schema, SelectionRaw: doc.Selection, RelationshipsRaw: doc.Relationships,
		ViewsRaw: doc.Views, QueryRaw: doc.Query,
	}
	if len(doc.Schema) > 0 {
		var schema struct {
			Properties json.RawMessage `json:"properties"`
			Required   []string        `json:"required"`
		}
		if err := json.Unmarshal(doc.Schema, &schema); err != nil {
			return nil, fmt.Errorf("%s schema: %w", s.Name, err)
		}
		s.Required = schema.Required
		if len(schema.Properties) > 0 {
			members, err := ObjectMembers(schema.Properties)
			if err != nil {
				return nil, fmt.Errorf("%s schema properties: %w", s.Name, err)
			}
			for _, mb := range members {
				p, err := parseProperty(mb.Key, mb.Value)
				if err != nil {
					return nil, fmt.Errorf("%s.%s: %w", s.Name, mb.Key, err)
				}
				s.Properties = append(s.Properties, p)
			}
		}
	}
	if len(doc.Relationships) > 0 {
		if err := json.Unmarshal(doc.Relationships, &s.Relationships); err != nil {
			return nil, fmt.Errorf("%s relationships: %w", s.Name, err)
		}
	}
	if len(doc.Views) > 0 {
		if err := json.Unmarshal(doc.Views, &s.Views); err != nil {
			return nil, fmt.Errorf("%s views: %w", s.Name, err)
		}
	}
	if len(doc.Query) > 0 {
		q, err := parseQueryDecl(doc.Query)
		if err != nil {
			return nil, fmt.Errorf("%s query: %w", s.Name, err)
		}
		s.Query = q
	}
	return s, nil
}

func parseProperty(name string, raw json.RawMessage) (Property, error) {
	var doc struct {
		Type   json.RawMessage `json:"type"`
		Format string          `json:"format"`
		XType  string          `json:"x_pdpp_type"`
		XRole  string          `json:"x_pdpp_role"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return Property{}, err
	}
	p := Property{Name: name, Format: doc.Format, XType: doc.XType, XRole: doc.XRole, Raw: raw}
	if len(doc.Type) > 0 {
		var one string
		if err := json.Unmarshal(doc.Type, &one); err == nil {
			p.Types = []string{one}
		} else if err := json.Unmarshal(doc.Type, &p.Types); err != nil {
			return Property{}, fmt.Errorf("type: %w", err)
		}
	}
	return p, nil
}

func parseQueryDecl(raw json.RawMessage) (Query, error) {
	var doc struct {
		RangeFilters json.RawMessage `json:"range_filters"`
		Expand       []ExpandDecl    `json:"expand"`
		Search       struct {
			LexicalFields  []string `json:"lexical_fields"`
			SemanticFields []string `json:"semantic_fields"`
		} `json:"search"`
		Aggregations *Aggregations `json:"aggregations"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return Query{}, err
	}
	q := Query{
		Expand: doc.Expand, LexicalFields: doc.Search.LexicalFields,
		SemanticFields: doc.Search.SemanticFields, Aggregations: doc.Aggregations,
	}
	if len(doc.RangeFilters) > 0 {
		members, err := ObjectMembers(doc.RangeFilters)
		if err != nil {
			return Query{}, fmt.Errorf("range_filters: %w", err)
		}
		q.RangeFilters = map[string][]string{}
		for _, mb := range members {
			var ops []string
			if err := json.Unmarshal(mb.Value, &ops); err != nil {
				return Query{}, fmt.Errorf("range_filters.%s: %w", mb.Key, err)
			}
			q.RangeFilters[mb.Key] = ops
			q.RangeFilterFields = append(q.RangeFilterFields, mb.Key)
		}
	}
	return q, nil
}
