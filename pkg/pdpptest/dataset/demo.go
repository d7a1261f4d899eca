package dataset

import (
	"compress/zlib"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"
)

// The demo dataset is a newcomer's first look at the product and the corpus the
// size budgets are measured on: eighteen months of one person's mail, chat, bank
// feed and calendar, generated at start-up from fixed seeds. Nothing reads the
// clock and no output depends on map iteration order, so every call returns the
// same bytes.
//
// What tests can rely on is exported below. Everything else (which merchant a
// transaction names, how many messages a thread has) may change when the
// generator is tuned; tests should discover such values through the server.
const (
	// DemoName is the dataset name.
	DemoName = "demo"

	// DemoPersonalMailConnection and DemoWorkMailConnection are the two Mail
	// connections. Both hold the labels INBOX, Sent and Archive and a handful of
	// messages addressed to both of Nora's addresses, under the same keys, so
	// record reads of those need connection_id (DemoSharedMessageKey is one).
	DemoPersonalMailConnection = "cin_838839b61dc602e1869f025c"
	DemoWorkMailConnection     = "cin_3a769b3e43e3792e0a811ceb"
	// DemoSharedMessageKey is a mail_messages key present in both connections.
	DemoSharedMessageKey = "85969eb4ca9f27a1"

	// DemoLongStream/DemoLongRecordKey/DemoLongField name the longest text in
	// the dataset: the body of the Atlas launch retrospective transcript, in the
	// Work Mail connection only, over 50,000 characters long.
	DemoLongStream    = "mail_bodies"
	DemoLongRecordKey = "177aa15315e811e9_body"
	DemoLongField     = "body_text"
	// DemoLongPhrase occurs exactly once in the whole dataset, past character
	// 30,000 of the long field, so search and field-window tests can find it.
	DemoLongPhrase = "marigold contingency"

	// DemoBudgetGrant names the narrow grant: the bank connector only, accounts
	// and transactions without account numbers, transactions limited to the
	// first half of 2026 by a time_constraint on transacted_at.
	DemoBudgetGrant = "budget"
)

// Message-IDs of the messages behind DemoLongRecordKey and DemoSharedMessageKey;
// a mail record key is the first 16 hex digits of the sha256 of its Message-ID.
const (
	demoRetroHeader  = "<atlas-retro-transcript@tidewaterlabs.example>"
	demoSharedHeader = "<offsite-travel-2026@tidewaterlabs.example>"
)

// Demo returns the demo dataset: four connectors (Mail with two connections,
// Team Chat, Bank Accounts, Calendar), over 5,000 records, blobs for the
// collected attachments, the "client" grant (every connector, some fields and the
// calendar_attendees stream withheld) and the narrow DemoBudgetGrant.
func Demo() (*Dataset, error) {
	g := &demoGen{blobs: map[string]Blob{}, blobRand: demoRand(randBlobs)}
	manifests := make(map[string]json.RawMessage, len(demoConnectorKeys))
	for _, key := range demoConnectorKeys {
		b, err := demoFS.ReadFile("demodata/" + key + ".manifest.json")
		if err != nil {
			return nil, fmt.Errorf("demo manifest %s: %w", key, err)
		}
		manifests[key] = b
	}

	// The bank feed comes first because the personal mailbox holds receipts for
	// some of its card payments.
	bank := g.bank()
	mail := g.mail()
	chat := g.chat()
	cal := g.calendar()

	connectors := []*Connector{
		{Key: "mail", DisplayName: "Mail", Connections: []Connection{
			{ID: demoConnectionID("mail", "personal"), DisplayName: "Personal Mail"},
			{ID: demoConnectionID("mail", "work"), DisplayName: "Work Mail"},
		}},
		{Key: "chat", DisplayName: "Team Chat", Connections: []Connection{
			{ID: demoConnectionID("chat", "tidewater"), DisplayName: "Tidewater Labs workspace"},
		}},
		{Key: "bank", DisplayName: "Bank Accounts", Connections: []Connection{
			{ID: demoConnectionID("bank", "harbor"), DisplayName: "Harbor Credit Union"},
		}},
		{Key: "calendar", DisplayName: "Calendar", Connections: []Connection{
			{ID: demoConnectionID("calendar", "nora"), DisplayName: "Nora's calendars"},
		}},
	}
	records := [][]map[string][]Record{
		{mail.personal, mail.work},
		{chat},
		{bank},
		{cal},
	}
	for i, c := range connectors {
		c.SourceID = "https://registry.pdpp.dev/connectors/" + c.Key
		c.Manifest = manifests[c.Key]
		c.Records = make(map[string]map[string][]Record, len(c.Connections))
		for j, conn := range c.Connections {
			c.Records[conn.ID] = records[i][j]
		}
	}

	d := &Dataset{
		Name:       DemoName,
		Provider:   "PDPP Demo",
		SubjectID:  "owner_nora",
		Connectors: connectors,
		Blobs:      g.blobs,
		Grants:     map[string]*Grant{},
	}
	for _, spec := range demoGrantSpecs {
		raw, err := demoGrantJSON(d, spec)
		if err != nil {
			return nil, fmt.Errorf("demo grant %s: %w", spec.name, err)
		}
		gr, err := ParseGrant(raw)
		if err != nil {
			return nil, fmt.Errorf("demo grant %s: %w", spec.name, err)
		}
		d.Grants[spec.name] = gr
	}
	return d, nil
}

//go:embed demodata/*.manifest.json
var demoFS embed.FS

var demoConnectorKeys = []string{"mail", "chat", "bank", "calendar"}

// demoGen carries what the per-connector generators share: the blob store and
// the bank feed the receipts are cut from.
type demoGen struct {
	blobs map[string]Blob
	arena arena
	obj   jsonObj
	txns  []demoTxn // set by bank(), read by mail()
	// blobRand draws the generated pictures, in the order they are attached.
	blobRand *rand.Rand
	zw       *zlib.Writer // reused by encodePNG
}

// demoRand returns the generator of one part of the dataset. Each part has its
// own stream, so tuning the chat generator leaves the bank feed untouched.
func demoRand(stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(0x9e3779b97f4a7c15, stream))
}

// Streams of demoRand.
const (
	randBank uint64 = iota + 1
	randMailWork
	randMailPersonal
	randChat
	randCalendar
	randBlobs
)

// demoConnectionID derives a stable reference-shaped id ("cin_" + 24 hex).
func demoConnectionID(connector, label string) string {
	return "cin_" + hashHex("pdpp-demo/connection/"+connector+"/"+label, 24)
}

func hashHex(s string, n int) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:n]
}

// randHex returns n lowercase hex digits from r.
func randHex(r *rand.Rand, n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[r.IntN(16)]
	}
	return string(b)
}

// DemoTime is the moment of the demo's last sync (2026-11-20T18:00:00Z): no
// record was emitted later. A server that serves the demo with this as its
// clock reports every connector's data as current rather than stale.
func DemoTime() time.Time { return demoNow }

// The dataset covers eighteen months ending at demoNow, the moment of the last
// sync. Its clock is fixed, never the wall clock.
var (
	demoStart = time.Date(2025, 5, 20, 0, 0, 0, 0, time.UTC)
	demoNow   = time.Date(2026, 11, 20, 18, 0, 0, 0, time.UTC)
	// demoSync is when full-inventory streams (labels, channels, accounts,
	// attendees) were last collected.
	demoSync = time.Date(2026, 11, 20, 6, 0, 0, 0, time.UTC)
)

// ts formats t like the reference store: UTC with milliseconds and a Z.
func ts(t time.Time) string {
	var buf [24]byte
	return string(appendTS(buf[:0], t))
}

// appendTS is ts without the allocation; it runs for every timestamp of every
// record, so it is written out by hand.
func appendTS(b []byte, t time.Time) []byte {
	t = t.UTC()
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	b = appendDigits(b, y, 4)
	b = append(b, '-')
	b = appendDigits(b, int(mo), 2)
	b = append(b, '-')
	b = appendDigits(b, d, 2)
	b = append(b, 'T')
	b = appendDigits(b, h, 2)
	b = append(b, ':')
	b = appendDigits(b, mi, 2)
	b = append(b, ':')
	b = appendDigits(b, s, 2)
	b = append(b, '.')
	b = appendDigits(b, t.Nanosecond()/1e6, 3)
	return append(b, 'Z')
}

// appendDigits appends v zero-padded to width digits (v < 10^width).
func appendDigits(b []byte, v, width int) []byte {
	for i := 0; i < width; i++ {
		b = append(b, '0')
	}
	for i := len(b) - 1; v > 0; i-- {
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return b
}

// pacific turns a wall-clock time in Portland into UTC, applying the US
// daylight-saving rule (second Sunday of March to first Sunday of November) so
// the demo does not need the tz database.
func pacific(y int, m time.Month, d, hh, mm int) time.Time {
	return time.Date(y, m, d, hh-pacificOffset(y, m, d), mm, 0, 0, time.UTC)
}

// pacificOffset is Portland's UTC offset in hours on a day (the switch hour
// itself is not modelled).
func pacificOffset(y int, m time.Month, d int) int {
	k := y*10000 + int(m)*100 + d
	dst, ok := dstByYear[y]
	if !ok {
		dst = dstDays(y)
	}
	if k >= dst[0] && k < dst[1] {
		return -7
	}
	return -8
}

// dstByYear caches the daylight-saving days (as localDay keys) of the years
// the demo spans.
var dstByYear = map[int][2]int{2025: dstDays(2025), 2026: dstDays(2026), 2027: dstDays(2027)}

func dstDays(y int) [2]int {
	key := func(t time.Time) int { return t.Year()*10000 + int(t.Month())*100 + t.Day() }
	return [2]int{key(nthSunday(y, time.March, 2)), key(nthSunday(y, time.November, 1))}
}

func nthSunday(y int, m time.Month, n int) time.Time {
	t := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	for t.Weekday() != time.Sunday {
		t = t.AddDate(0, 0, 1)
	}
	return t.AddDate(0, 0, 7*(n-1))
}

// localDay is a calendar day in Portland.
type localDay struct {
	y int
	m time.Month
	d int
}

// dayOf names the Portland day t falls on.
func dayOf(t time.Time) localDay {
	l := t.Add(-8 * time.Hour)
	if pacificOffset(l.Year(), l.Month(), l.Day()) == -7 {
		l = t.Add(-7 * time.Hour)
	}
	return localDay{l.Year(), l.Month(), l.Day()}
}

func (d localDay) at(hh, mm int) time.Time { return pacific(d.y, d.m, d.d, hh, mm) }

func (d localDay) weekday() time.Weekday {
	return time.Date(d.y, d.m, d.d, 12, 0, 0, 0, time.UTC).Weekday()
}

func (d localDay) addDays(n int) localDay {
	t := time.Date(d.y, d.m, d.d, 12, 0, 0, 0, time.UTC).AddDate(0, 0, n)
	return localDay{t.Year(), t.Month(), t.Day()}
}

// key orders days as an integer, yyyymmdd.
func (d localDay) key() int { return d.y*10000 + int(d.m)*100 + d.d }

func (d localDay) String() string {
	return time.Date(d.y, d.m, d.d, 0, 0, 0, 0, time.UTC).Format("2006-01-02")
}

// randomDay returns a day in [from, to) chosen by r.
func randomDay(r *rand.Rand, from, to time.Time) localDay {
	span := int(to.Sub(from).Hours() / 24)
	return dayOf(from.Add(12 * time.Hour)).addDays(r.IntN(span))
}

// workday moves d forward to the next Monday-to-Friday day.
func workday(d localDay) localDay {
	for d.weekday() == time.Saturday || d.weekday() == time.Sunday {
		d = d.addDays(1)
	}
	return d
}

// record builds a stored record; emitted is when the connector collected it.
func record(key string, emitted time.Time, data json.RawMessage) Record {
	return Record{Key: key, EmittedAt: ts(emitted), Data: data}
}

// compoundKey renders a compound primary key the way the RS does: the minified
// JSON array of its string parts.
func compoundKey(parts ...string) string {
	return string(appendJSONStrings(nil, parts))
}
