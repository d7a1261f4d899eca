package fanout_test

import (
	"strings"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// A member speaks only for itself: a hit that names another member's
// connection, label and record key is refused, and the genuine hit is shown
// under its own member rather than dropped as a duplicate.
func TestMemberCannotSpeakForAnother(t *testing.T) {
	victim := newScripted(t, "cin_victim", []hit{{key: "secret", score: -1}})
	victim.name = "Victim Mail"
	attacker := newScripted(t, "cin_attacker", []hit{{key: "secret", score: -99}, {key: "own", score: -2}})
	for _, tc := range []struct {
		name  string
		conns []string // the attacker member's known connections; nil: unknown
	}{
		{"known connections", []string{"cin_attacker"}},
		{"unknown connections", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			attacker.claim, attacker.name = "cin_victim", "Victim Mail"
			am := attacker.member(t, "g_attacker")
			am.ConnectionIDs = tc.conns
			c, err := fanout.New(fanout.Options{Members: []fanout.Member{victim.member(t, "g_victim"), am}})
			if err != nil {
				t.Fatal(err)
			}
			doc := get(t, c, searchPath, rs.Query{{Key: "q", Value: "x"}})
			var victimHits []string
			for _, h := range doc.Get("data").Array() {
				if h.Get("connection_id").Str == "cin_victim" {
					victimHits = append(victimHits, h.Get("grant_id").Str+":"+h.Get("record_key").Str)
				}
			}
			if strings.Join(victimHits, ",") != "g_victim:secret" {
				t.Errorf("hits under the victim's connection: %v, want only the victim's own (g_victim:secret)\n%s", victimHits, doc.Get("data").Raw)
			}
			w := doc.Get(`meta.warnings.#(code=="source_hits_refused")`)
			if !w.Exists() || w.Get("source.grant_id").Str != "g_attacker" || !strings.Contains(w.Get("message").Str, "2 hit(s)") {
				t.Errorf("no source_hits_refused warning naming the attacker: %s", doc.Get("meta").Raw)
			}
		})
	}
}

// Hits without a connection of their own, from members whose connections are
// unknown, merge only within one member.
func TestHitsWithoutConnectionMergeOnlyWithinTheirMember(t *testing.T) {
	a := newScripted(t, "", hits("k", 2, -3))
	b := newScripted(t, "", hits("k", 2, -3))
	ma, mb := a.member(t, "ga"), b.member(t, "gb")
	ma.ConnectionIDs, mb.ConnectionIDs = nil, nil
	c, err := fanout.New(fanout.Options{Members: []fanout.Member{ma, mb}})
	if err != nil {
		t.Fatal(err)
	}
	doc := get(t, c, searchPath, rs.Query{{Key: "q", Value: "x"}})
	if n := len(doc.Get("data").Array()); n != 4 {
		t.Errorf("%d hits, want 4: two members that name no connection are two sources\n%s", n, doc.Get("data").Raw)
	}
}
