package dataset

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
)

// demoGrantSpec describes one demo grant; the field lists are derived from the
// manifests so a property added to a manifest is granted unless withheld here.
type demoGrantSpec struct {
	name        string
	clientID    string
	clientName  string
	purpose     string
	purposeText string
	issuedAt    string
	connectors  []string                   // whose streams are granted, in manifest order
	omitStreams []string                   // streams withheld entirely
	withhold    map[string][]string        // fields withheld, by stream
	constrain   map[string]*TimeConstraint // time windows, by stream
}

var demoGrantSpecs = []demoGrantSpec{
	{
		// The grant behind the default client token: an assistant that can read
		// everything except the calendar's guest lists, Bcc recipients and full
		// account numbers.
		name:        "client",
		clientID:    "demo_assistant",
		clientName:  "Demo Assistant",
		purpose:     "https://pdpp.dev/purpose/personal_ai_assistant",
		purposeText: "Personal AI assistant",
		issuedAt:    "2026-11-20T09:12:44.318Z",
		connectors:  []string{"mail", "chat", "bank", "calendar"},
		omitStreams: []string{"calendar_attendees"},
		withhold: map[string][]string{
			"mail_messages": {"bcc"},
			"accounts":      {"account_number", "routing_number"},
			"transactions":  {"account_number"},
		},
	},
	{
		name:        DemoBudgetGrant,
		clientID:    "budget_coach",
		clientName:  "Budget Coach",
		purpose:     "https://pdpp.dev/purpose/personal_finance",
		purposeText: "Review spending for the first half of 2026",
		issuedAt:    "2026-11-18T16:40:02.907Z",
		connectors:  []string{"bank"},
		omitStreams: []string{"balances"},
		withhold: map[string][]string{
			"accounts":     {"account_number", "routing_number"},
			"transactions": {"account_number", "note"},
		},
		constrain: map[string]*TimeConstraint{
			"transactions": {Field: "transacted_at", Since: "2026-01-01T00:00:00.000Z", Until: "2026-07-01T00:00:00.000Z"},
		},
	},
}

// demoGrantJSON writes the PDPP grant document, keys in the alphabetical
// order the reference serialises them (see gmail/client-grant.json).
//
// A grant spanning several connectors is a demo extension: the reference binds a
// grant to one source. Its source is then {"kind":"connector_set"} naming the
// registry, and the server maps each stream to its connector through the
// stream's instance_ids.
func demoGrantJSON(d *Dataset, spec demoGrantSpec) ([]byte, error) {
	var streams []byte
	sourceID, sourceKind := "https://registry.pdpp.dev/connectors", "connector_set"
	if len(spec.connectors) == 1 {
		sourceID, sourceKind = "https://registry.pdpp.dev/connectors/"+spec.connectors[0], "connector"
	}
	declaration := sha256.New()
	for _, key := range spec.connectors {
		c := d.Connector(key)
		if c == nil {
			return nil, fmt.Errorf("no connector %q", key)
		}
		declaration.Write(c.Manifest)
		m, err := ParseManifest(c.Manifest)
		if err != nil {
			return nil, fmt.Errorf("manifest %s: %w", key, err)
		}
		ids := make([]string, len(c.Connections))
		for i, conn := range c.Connections {
			ids[i] = conn.ID
		}
		for _, s := range m.Streams {
			if slices.Contains(spec.omitStreams, s.Name) {
				continue
			}
			var fields []string
			for _, p := range s.Properties {
				if !slices.Contains(spec.withhold[s.Name], p.Name) {
					fields = append(fields, p.Name)
				}
			}
			slices.Sort(fields)
			if len(streams) > 0 {
				streams = append(streams, ',')
			}
			var o jsonObj
			o.begin()
			o.strs("fields", fields)
			o.strs("instance_ids", ids)
			o.str("name", s.Name)
			if tc := spec.constrain[s.Name]; tc != nil {
				var t jsonObj
				t.begin()
				t.str("field", tc.Field)
				t.str("since", tc.Since)
				t.str("until", tc.Until)
				o.raw("time_constraint", t.close())
			}
			streams = append(streams, o.close()...)
		}
	}

	var o jsonObj
	o.begin()
	o.str("access_mode", "continuous")
	client := jsonObj{}
	client.begin()
	client.str("client_display", spec.clientName)
	client.str("client_id", spec.clientID)
	o.raw("client", client.close())
	o.null("expires_at")
	o.str("grant_id", "grt_"+hashHex("pdpp-demo/grant/"+spec.name, 16))
	o.str("issued_at", spec.issuedAt)
	o.str("purpose_code", spec.purpose)
	o.str("purpose_description", spec.purposeText)
	src := jsonObj{}
	src.begin()
	src.str("id", sourceID)
	src.str("kind", sourceKind)
	o.raw("source", src.close())
	decl := jsonObj{}
	decl.begin()
	decl.str("version", "demo.manifest-projection.v1:sha256:"+hex.EncodeToString(declaration.Sum(nil)))
	o.raw("source_declaration", decl.close())
	o.raw("streams", append(append([]byte{'['}, streams...), ']'))
	subj := jsonObj{}
	subj.begin()
	subj.str("id", d.SubjectID)
	o.raw("subject", subj.close())
	o.str("version", "0.1.0")
	return o.close(), nil
}
