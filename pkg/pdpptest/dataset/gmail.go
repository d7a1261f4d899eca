package dataset

import (
	"embed"
	"encoding/json"
	"fmt"
)

// The gmail corpus is the one the reference captures were taken against, copied
// unmodified so the double answers the same requests with the same data.
//
//go:embed gmail/gmail.manifest.json gmail/gmail.records.json gmail/client-grant.json gmail/blob_c514bff2.txt
var gmailFS embed.FS

// gmailWorkBlob stands in for the work connection's 80-byte attachment, whose
// bytes were not captured. Its sha256 in the records therefore does not match.
const gmailWorkBlob = "ITINERARY COPY\n\nBooking LX-4821 for Sam Rivera\nTP1347 BOS->LIS 2026-03-14 09:20\n"

// Gmail returns the two-connection Gmail corpus the reference captures were
// taken from: five streams, 62 records, two blobs and the client grant used
// in the captures.
func Gmail() (*Dataset, error) {
	read := func(name string) []byte {
		b, err := gmailFS.ReadFile("gmail/" + name)
		if err != nil {
			panic(err) // embedded: cannot fail at run time
		}
		return b
	}
	var recs struct {
		ConnectorKey string       `json:"connector_key"`
		Connections  []Connection `json:"connections"`
		Records      map[string]map[string][]struct {
			Key       string          `json:"key"`
			EmittedAt string          `json:"emitted_at"`
			Data      json.RawMessage `json:"data"`
		} `json:"records"`
	}
	if err := json.Unmarshal(read("gmail.records.json"), &recs); err != nil {
		return nil, fmt.Errorf("gmail records: %w", err)
	}
	c := &Connector{
		Key:         recs.ConnectorKey,
		SourceID:    "https://registry.pdpp.dev/connectors/gmail",
		DisplayName: "Gmail",
		Manifest:    read("gmail.manifest.json"),
		Connections: recs.Connections,
		Records:     map[string]map[string][]Record{},
	}
	for cid, streams := range recs.Records {
		c.Records[cid] = map[string][]Record{}
		for s, rows := range streams {
			for _, r := range rows {
				c.Records[cid][s] = append(c.Records[cid][s], Record{Key: r.Key, EmittedAt: r.EmittedAt, Data: r.Data})
			}
		}
	}
	g, err := ParseGrant(read("client-grant.json"))
	if err != nil {
		return nil, fmt.Errorf("gmail grant: %w", err)
	}
	return &Dataset{
		Name:       "gmail",
		Provider:   "PDPP Reference Provider",
		SubjectID:  "owner_local",
		Connectors: []*Connector{c},
		Blobs: map[string]Blob{
			"blob_sha256_c514bff25a8680e2bda41ec474006756282def0bcc3690db3cf55dad1c4837e6": {
				ID: "blob_sha256_c514bff25a8680e2bda41ec474006756282def0bcc3690db3cf55dad1c4837e6", MIMEType: "text/plain",
				Bytes: read("blob_c514bff2.txt"),
			},
			"blob_sha256_96d47e0fa0b3b651095acba03018ee9faffcdfd61f19ed4b5f1f214377300621": {
				ID: "blob_sha256_96d47e0fa0b3b651095acba03018ee9faffcdfd61f19ed4b5f1f214377300621", MIMEType: "text/plain",
				Bytes: []byte(gmailWorkBlob),
			},
		},
		Grants: map[string]*Grant{"client": g},
	}, nil
}

// ParseGrant reads a PDPP grant document, keeping it verbatim in Raw.
func ParseGrant(raw []byte) (*Grant, error) {
	var doc struct {
		GrantID   string  `json:"grant_id"`
		ExpiresAt *string `json:"expires_at"`
		Client    struct {
			ClientID string `json:"client_id"`
		} `json:"client"`
		Source struct {
			ID string `json:"id"`
		} `json:"source"`
		SourceDeclaration struct {
			Version string `json:"version"`
		} `json:"source_declaration"`
		Streams []GrantStream `json:"streams"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	g := &Grant{
		GrantID: doc.GrantID, ClientID: doc.Client.ClientID, SourceID: doc.Source.ID,
		SourceDeclarationVersion: doc.SourceDeclaration.Version, Streams: doc.Streams, Raw: raw,
	}
	if doc.ExpiresAt != nil {
		g.ExpiresAt = *doc.ExpiresAt
	}
	return g, nil
}
