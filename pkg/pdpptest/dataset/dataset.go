// Package dataset holds the deterministic personal data that pkg/pdpptest serves:
// connector manifests, connections, records, blobs and the grants behind client
// tokens. It knows nothing about HTTP; the server in pkg/pdpptest interprets it.
package dataset

import (
	"encoding/json"
	"strings"
)

// Dataset is one personal data store: every connector the owner registered, the
// records each connection holds, the blob bytes those records reference, and the
// grants the double turns into client tokens.
type Dataset struct {
	// Name identifies the dataset ("gmail", "demo").
	Name string
	// Provider is the human name used in metadata ("<Provider> Resource Server").
	Provider string
	// SubjectID is the owner's subject id.
	SubjectID string
	// Connectors in registration order.
	Connectors []*Connector
	// Blobs by blob_id.
	Blobs map[string]Blob
	// Grants by name. The grant named "client" backs the default client token.
	Grants map[string]*Grant
}

// Connector is one registered connector (source) and all of its connections.
type Connector struct {
	// Key is the canonical short key ("gmail").
	Key string
	// SourceID is the registry URI used as grant source.id and as connector_key on
	// record detail ("https://registry.pdpp.dev/connectors/gmail").
	SourceID string
	// DisplayName is the connector's human name ("Gmail").
	DisplayName string
	// Manifest is the connector manifest JSON, verbatim, authored key order kept.
	Manifest json.RawMessage
	// Connections in registration order.
	Connections []Connection
	// Records by connection id, then stream name, in storage order.
	Records map[string]map[string][]Record
}

// Connection is one owner-configured account of a connector.
type Connection struct {
	// ID is the canonical connection id ("cin_…").
	ID string `json:"connection_id"`
	// DisplayName is the owner's label; empty when there is none.
	DisplayName string `json:"display_name,omitempty"`
}

// Record is one stored record of a (connection, stream).
type Record struct {
	// Key is the canonical record key. Compound keys are the minified JSON array of
	// their string parts, e.g. ["user_1","2026-04-01"].
	Key string
	// EmittedAt is the ISO 8601 time the record was emitted.
	EmittedAt string
	// Data is the record payload, authored key order kept.
	Data json.RawMessage
	// Deleted marks a tombstone; DeletedAt says when.
	Deleted   bool
	DeletedAt string
}

// Blob is the stored bytes of one blob_ref.
type Blob struct {
	ID       string
	MIMEType string
	Bytes    []byte
}

// Grant is a resolved PDPP client grant. Raw keeps the grant JSON
// verbatim for introspection answers; the typed fields are what enforcement reads.
type Grant struct {
	GrantID   string        `json:"grant_id"`
	ClientID  string        `json:"-"`
	SourceID  string        `json:"-"`
	ExpiresAt string        `json:"-"`
	Streams   []GrantStream `json:"streams"`
	// SourceDeclarationVersion is source_declaration.version: which declaration
	// the grant was issued against (see LegacyProjection).
	SourceDeclarationVersion string `json:"-"`
	Raw                      json.RawMessage
}

// legacyProjectionPrefix marks grants issued against the reference's
// synthesized "legacy connector projection" declaration.
const legacyProjectionPrefix = "reference.legacy-connector-projection."

// LegacyProjection reports whether the grant was issued against a legacy
// connector projection. The reference then describes the granted streams on its
// discovery surfaces (schema, stream metadata) from that projection: every
// granted field with an empty property schema, no primary key, cursor field,
// query declarations, relationships or views. Reads still follow the manifest.
func (g *Grant) LegacyProjection() bool {
	return strings.HasPrefix(g.SourceDeclarationVersion, legacyProjectionPrefix)
}

// Stream returns the grant's entry for the named stream, or nil.
func (g *Grant) Stream(name string) *GrantStream {
	for i := range g.Streams {
		if g.Streams[i].Name == name {
			return &g.Streams[i]
		}
	}
	return nil
}

// GrantStream is one stream of a grant.
type GrantStream struct {
	Name        string   `json:"name"`
	InstanceIDs []string `json:"instance_ids"`
	// Fields is the field allowlist; nil means every field.
	Fields []string `json:"fields,omitempty"`
	// TimeConstraint bounds visible records on a frozen field: Since inclusive,
	// Until exclusive. Records without a parseable value are invisible.
	TimeConstraint *TimeConstraint `json:"time_constraint,omitempty"`
	// Resources, when non-nil, is the record-key allowlist.
	Resources []string `json:"resources,omitempty"`
}

// TimeConstraint is a grant stream's time window.
type TimeConstraint struct {
	Field string `json:"field"`
	Since string `json:"since,omitempty"`
	Until string `json:"until,omitempty"`
}

// Connector returns the connector with the given key, or nil.
func (d *Dataset) Connector(key string) *Connector {
	for _, c := range d.Connectors {
		if c.Key == key {
			return c
		}
	}
	return nil
}
