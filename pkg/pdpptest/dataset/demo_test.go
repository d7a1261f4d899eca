package dataset

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image/png"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
)

// demoOnce shares one generated dataset between the read-only tests; the
// determinism test generates its own.
var demoOnce = sync.OnceValues(Demo)

func loadDemo(t testing.TB) *Dataset {
	t.Helper()
	d, err := demoOnce()
	if err != nil {
		t.Fatalf("Demo(): %v", err)
	}
	return d
}

// testStream is the part of a manifest stream declaration the tests check.
type testStream struct {
	Name       string          `json:"name"`
	Semantics  string          `json:"semantics"`
	Schema     schema          `json:"schema"`
	PrimaryKey []string        `json:"primary_key"`
	Cursor     *string         `json:"cursor_field"`
	Consent    *string         `json:"consent_time_field"`
	Selection  map[string]bool `json:"selection"`
	Relations  []testRelation  `json:"relationships"`
	Views      []struct {
		ID     string   `json:"id"`
		Label  string   `json:"label"`
		Fields []string `json:"fields"`
	} `json:"views"`
	Query struct {
		RangeFilters map[string][]string `json:"range_filters"`
		Expand       []struct {
			Name         string `json:"name"`
			DefaultLimit *int   `json:"default_limit"`
			MaxLimit     *int   `json:"max_limit"`
		} `json:"expand"`
		Search struct {
			Lexical  []string `json:"lexical_fields"`
			Semantic []string `json:"semantic_fields"`
		} `json:"search"`
		Aggregations *struct {
			Count         bool     `json:"count"`
			Sum           []string `json:"sum"`
			Min           []string `json:"min"`
			Max           []string `json:"max"`
			GroupBy       []string `json:"group_by"`
			GroupByTime   []string `json:"group_by_time"`
			CountDistinct []string `json:"count_distinct"`
		} `json:"aggregations"`
	} `json:"query"`
}

type testRelation struct {
	Name        string `json:"name"`
	Stream      string `json:"stream"`
	ForeignKey  string `json:"foreign_key"`
	Cardinality string `json:"cardinality"`
}

type schema struct {
	Type       any               `json:"type"`
	Format     string            `json:"format"`
	Required   []string          `json:"required"`
	Properties map[string]schema `json:"properties"`
	XType      string            `json:"x_pdpp_type"`
	XRole      string            `json:"x_pdpp_role"`
}

func (s schema) types() []string {
	switch t := s.Type.(type) {
	case string:
		return []string{t}
	case []any:
		out := make([]string, len(t))
		for i, v := range t {
			out[i], _ = v.(string)
		}
		return out
	}
	return nil
}

type testManifest struct {
	ConnectorID  string       `json:"connector_id"`
	ConnectorKey string       `json:"connector_key"`
	DisplayName  string       `json:"display_name"`
	Streams      []testStream `json:"streams"`
}

func (m *testManifest) stream(name string) *testStream {
	for i := range m.Streams {
		if m.Streams[i].Name == name {
			return &m.Streams[i]
		}
	}
	return nil
}

func parseManifest(t testing.TB, c *Connector) *testManifest {
	t.Helper()
	var m testManifest
	if err := json.Unmarshal(c.Manifest, &m); err != nil {
		t.Fatalf("%s manifest: %v", c.Key, err)
	}
	return &m
}

// dump renders everything Demo returns in a fixed order, for byte comparison.
func dump(d *Dataset) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s|%s|%s\n", d.Name, d.Provider, d.SubjectID)
	for _, c := range d.Connectors {
		fmt.Fprintf(&b, "connector %s %s %s\n%s\n", c.Key, c.SourceID, c.DisplayName, c.Manifest)
		for _, conn := range c.Connections {
			fmt.Fprintf(&b, "connection %s %q\n", conn.ID, conn.DisplayName)
			streams := make([]string, 0, len(c.Records[conn.ID]))
			for s := range c.Records[conn.ID] {
				streams = append(streams, s)
			}
			slices.Sort(streams)
			for _, s := range streams {
				for _, r := range c.Records[conn.ID][s] {
					fmt.Fprintf(&b, "%s %q %s %t %s %s\n", s, r.Key, r.EmittedAt, r.Deleted, r.DeletedAt, r.Data)
				}
			}
		}
	}
	ids := make([]string, 0, len(d.Blobs))
	for id := range d.Blobs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		fmt.Fprintf(&b, "blob %s %s %x\n", id, d.Blobs[id].MIMEType, d.Blobs[id].Bytes)
	}
	names := make([]string, 0, len(d.Grants))
	for n := range d.Grants {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		g := d.Grants[n]
		fmt.Fprintf(&b, "grant %s %s %s %s %s\n%s\n", n, g.GrantID, g.ClientID, g.SourceID, g.ExpiresAt, g.Raw)
		for _, s := range g.Streams {
			fmt.Fprintf(&b, "  %s %v %v %v", s.Name, s.InstanceIDs, s.Fields, s.Resources)
			if s.TimeConstraint != nil {
				fmt.Fprintf(&b, " %+v", *s.TimeConstraint)
			}
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

func TestDemoIsDeterministic(t *testing.T) {
	a, err := Demo()
	if err != nil {
		t.Fatal(err)
	}
	b, err := Demo()
	if err != nil {
		t.Fatal(err)
	}
	da, db := dump(a), dump(b)
	if len(da) < 1<<20 {
		t.Fatalf("dump is only %d bytes; the comparison would prove little", len(da))
	}
	if !bytes.Equal(da, db) {
		i := 0
		for i < len(da) && i < len(db) && da[i] == db[i] {
			i++
		}
		lo := max(0, i-80)
		t.Fatalf("two calls differ at byte %d:\nfirst:  %q\nsecond: %q", i, da[lo:min(len(da), i+80)], db[lo:min(len(db), i+80)])
	}
}

var cinPattern = regexp.MustCompile(`^cin_[0-9a-f]{24}$`)

func TestDemoConnectors(t *testing.T) {
	d := loadDemo(t)
	if d.Name != DemoName {
		t.Errorf("Name = %q, want %q", d.Name, DemoName)
	}
	wantConnections := map[string]int{"mail": 2, "chat": 1, "bank": 1, "calendar": 1}
	if len(d.Connectors) != len(wantConnections) {
		t.Fatalf("%d connectors, want %d", len(d.Connectors), len(wantConnections))
	}
	seen := map[string]bool{}
	for _, c := range d.Connectors {
		m := parseManifest(t, c)
		if want := "https://registry.pdpp.dev/connectors/" + c.Key; c.SourceID != want || m.ConnectorID != want {
			t.Errorf("%s: SourceID %q, manifest connector_id %q, want %q", c.Key, c.SourceID, m.ConnectorID, want)
		}
		if m.ConnectorKey != c.Key || c.DisplayName == "" || m.DisplayName != c.DisplayName {
			t.Errorf("%s: manifest key %q display %q, connector display %q", c.Key, m.ConnectorKey, m.DisplayName, c.DisplayName)
		}
		if got := len(c.Connections); got != wantConnections[c.Key] {
			t.Errorf("%s: %d connections, want %d", c.Key, got, wantConnections[c.Key])
		}
		for _, conn := range c.Connections {
			if !cinPattern.MatchString(conn.ID) || seen[conn.ID] || conn.DisplayName == "" {
				t.Errorf("%s: bad or duplicate connection %+v", c.Key, conn)
			}
			seen[conn.ID] = true
			if len(c.Records[conn.ID]) != len(m.Streams) {
				t.Errorf("%s/%s holds %d streams, manifest declares %d", c.Key, conn.ID, len(c.Records[conn.ID]), len(m.Streams))
			}
		}
		if len(c.Records) != len(c.Connections) {
			t.Errorf("%s: records for %d connections, %d connections declared", c.Key, len(c.Records), len(c.Connections))
		}
	}
	mail := d.Connector("mail")
	if got := []string{mail.Connections[0].ID, mail.Connections[1].ID}; got[0] != DemoPersonalMailConnection || got[1] != DemoWorkMailConnection {
		t.Errorf("mail connections %v, want [%s %s]", got, DemoPersonalMailConnection, DemoWorkMailConnection)
	}
}

// TestDemoManifests checks every declaration against the schema it refers to:
// the server trusts manifests, so a typo here becomes a confusing 400 later.
func TestDemoManifests(t *testing.T) {
	d := loadDemo(t)
	owner := map[string]string{}
	var noCursor, compound, hasOne, hasMany, views int
	roles := map[string]bool{}
	xtypes := map[string]bool{}
	for _, c := range d.Connectors {
		m := parseManifest(t, c)
		for _, s := range m.Streams {
			where := c.Key + "/" + s.Name
			if prev, dup := owner[s.Name]; dup {
				t.Errorf("stream %s declared by %s and %s: names must be unique across the dataset", s.Name, prev, c.Key)
			}
			owner[s.Name] = c.Key
			props := s.Schema.Properties
			has := func(f string) bool { _, ok := props[f]; return ok }
			if s.Semantics == "" || s.Schema.Type != "object" || len(props) == 0 || len(s.PrimaryKey) == 0 || s.Selection == nil {
				t.Errorf("%s: incomplete declaration", where)
			}
			for _, f := range append(append([]string{}, s.Schema.Required...), s.PrimaryKey...) {
				if !has(f) {
					t.Errorf("%s: required/primary key field %q is not a property", where, f)
				}
			}
			for _, f := range s.PrimaryKey {
				if !slices.Contains(s.Schema.Required, f) {
					t.Errorf("%s: primary key field %q is not required", where, f)
				}
			}
			if s.Cursor == nil {
				noCursor++
			} else if p := props[*s.Cursor]; !has(*s.Cursor) || (p.Format != "date-time" && p.Format != "date") {
				t.Errorf("%s: cursor_field %q must be a declared date or date-time", where, *s.Cursor)
			}
			if s.Consent != nil && !has(*s.Consent) {
				t.Errorf("%s: consent_time_field %q undeclared", where, *s.Consent)
			}
			if len(s.PrimaryKey) > 1 {
				compound++
			}
			for f, ops := range s.Query.RangeFilters {
				p := props[f]
				numeric := slices.Contains(p.types(), "number") || slices.Contains(p.types(), "integer")
				if !has(f) || !numeric && p.Format != "date-time" && p.Format != "date" {
					t.Errorf("%s: range filter on %q, which is not a number or date", where, f)
				}
				for _, op := range ops {
					if !slices.Contains([]string{"gte", "gt", "lte", "lt"}, op) {
						t.Errorf("%s: range operator %q", where, op)
					}
				}
			}
			for _, f := range append(append([]string{}, s.Query.Search.Lexical...), s.Query.Search.Semantic...) {
				if !has(f) || !slices.Contains(props[f].types(), "string") {
					t.Errorf("%s: search field %q must be a declared string", where, f)
				}
			}
			if a := s.Query.Aggregations; a != nil {
				checkAgg := func(kind string, fields []string, ok func(schema) bool) {
					for _, f := range fields {
						if !has(f) || !ok(props[f]) {
							t.Errorf("%s: aggregation %s on %q is not usable", where, kind, f)
						}
					}
				}
				num := func(p schema) bool {
					return slices.Contains(p.types(), "number") || slices.Contains(p.types(), "integer")
				}
				date := func(p schema) bool { return p.Format == "date-time" || p.Format == "date" }
				scalar := func(p schema) bool {
					for _, ty := range p.types() {
						if ty == "array" || ty == "object" {
							return false
						}
					}
					return true
				}
				checkAgg("sum", a.Sum, num)
				checkAgg("min", a.Min, func(p schema) bool { return num(p) || date(p) })
				checkAgg("max", a.Max, func(p schema) bool { return num(p) || date(p) })
				checkAgg("group_by", a.GroupBy, scalar)
				checkAgg("group_by_time", a.GroupByTime, date)
				checkAgg("count_distinct", a.CountDistinct, scalar)
			}
			for _, v := range s.Views {
				views++
				for _, f := range v.Fields {
					if !has(f) {
						t.Errorf("%s: view %s names undeclared field %q", where, v.ID, f)
					}
				}
			}
			for _, e := range s.Query.Expand {
				i := slices.IndexFunc(s.Relations, func(r testRelation) bool { return r.Name == e.Name })
				if i < 0 {
					t.Errorf("%s: expand %q has no relationship", where, e.Name)
					continue
				}
				rel := s.Relations[i]
				target := m.stream(rel.Stream)
				if target == nil {
					t.Errorf("%s: relation %s targets unknown stream %s", where, rel.Name, rel.Stream)
					continue
				}
				if _, ok := target.Schema.Properties[rel.ForeignKey]; !ok {
					t.Errorf("%s: relation %s: foreign key %q is not a field of %s", where, rel.Name, rel.ForeignKey, rel.Stream)
				}
				switch rel.Cardinality {
				case "has_one":
					hasOne++
				case "has_many":
					hasMany++
					if e.DefaultLimit == nil || e.MaxLimit == nil || *e.DefaultLimit > *e.MaxLimit {
						t.Errorf("%s: has_many expand %s needs default_limit <= max_limit", where, e.Name)
					}
				default:
					t.Errorf("%s: relation %s cardinality %q", where, rel.Name, rel.Cardinality)
				}
			}
			for _, p := range props {
				roles[p.XRole] = true
				xtypes[p.XType] = true
			}
		}
	}
	if noCursor == 0 || compound == 0 || hasOne == 0 || hasMany == 0 || views == 0 {
		t.Errorf("streams without cursor_field %d, compound keys %d, expandable has_one %d, has_many %d, views %d: want each > 0",
			noCursor, compound, hasOne, hasMany, views)
	}
	for _, r := range []string{"primary-title", "secondary", "event-time"} {
		if !roles[r] {
			t.Errorf("no property has x_pdpp_role %q", r)
		}
	}
	if !xtypes["text"] {
		t.Error(`no property has x_pdpp_type "text"`)
	}
}

// TestDemoRecordsMatchSchemas checks every record against its stream: only
// declared properties, required ones present, values of the declared JSON
// types, the key equal to the primary key, keys unique, times sane.
func TestDemoRecordsMatchSchemas(t *testing.T) {
	d := loadDemo(t)
	total := 0
	for _, c := range d.Connectors {
		m := parseManifest(t, c)
		for _, conn := range c.Connections {
			for name, recs := range c.Records[conn.ID] {
				s := m.stream(name)
				if s == nil {
					t.Errorf("%s/%s: records for undeclared stream %s", c.Key, conn.DisplayName, name)
					continue
				}
				keys := map[string]bool{}
				for _, r := range recs {
					where := fmt.Sprintf("%s/%s %s[%s]", c.Key, conn.DisplayName, name, r.Key)
					total++
					if keys[r.Key] {
						t.Errorf("%s: duplicate key", where)
					}
					keys[r.Key] = true
					emitted, err := time.Parse(time.RFC3339Nano, r.EmittedAt)
					if err != nil || emitted.After(demoNow) {
						t.Errorf("%s: emitted_at %q unparseable or after the dataset's now", where, r.EmittedAt)
					}
					if r.Deleted {
						if r.Data != nil || r.DeletedAt == "" {
							t.Errorf("%s: a tombstone has no data and says when it was deleted", where)
						}
						continue
					}
					checkRecord(t, where, s, r)
				}
			}
		}
	}
	if total < 5000 {
		t.Errorf("%d records, want at least 5,000", total)
	}
}

func checkRecord(t *testing.T, where string, s *testStream, r Record) {
	t.Helper()
	if !json.Valid(r.Data) {
		t.Errorf("%s: data is not valid JSON", where)
		return
	}
	var data map[string]json.RawMessage
	if err := json.Unmarshal(r.Data, &data); err != nil {
		t.Errorf("%s: data is not an object: %v", where, err)
		return
	}
	for k, v := range data {
		p, ok := s.Schema.Properties[k]
		if !ok {
			t.Errorf("%s: field %q is not declared", where, k)
			continue
		}
		if got := jsonType(v); !typeAllowed(got, p.types()) {
			t.Errorf("%s: field %q is %s, declared %v", where, k, got, p.types())
		}
		if got := jsonType(v); got == "string" && (p.Format == "date-time" || p.Format == "date") {
			var sv string
			json.Unmarshal(v, &sv)
			layout := time.RFC3339Nano
			if p.Format == "date" {
				layout = time.DateOnly
			}
			if _, err := time.Parse(layout, sv); err != nil {
				t.Errorf("%s: %q = %q is not a %s", where, k, sv, p.Format)
			}
		}
		if got := jsonType(v); got == "object" && len(p.Properties) > 0 {
			var nested map[string]json.RawMessage
			json.Unmarshal(v, &nested)
			for nk := range nested {
				if _, ok := p.Properties[nk]; !ok {
					t.Errorf("%s: %s.%s is not declared", where, k, nk)
				}
			}
		}
	}
	for _, f := range s.Schema.Required {
		if _, ok := data[f]; !ok {
			t.Errorf("%s: required field %q missing", where, f)
		}
	}
	parts := make([]string, len(s.PrimaryKey))
	for i, f := range s.PrimaryKey {
		json.Unmarshal(data[f], &parts[i])
	}
	want := parts[0]
	if len(parts) > 1 {
		want = compoundKey(parts...)
	}
	if r.Key != want {
		t.Errorf("%s: key does not match primary key %v = %q", where, s.PrimaryKey, want)
	}
}

func jsonType(v json.RawMessage) string {
	switch v[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	if bytes.ContainsAny(v, ".eE") {
		return "number"
	}
	return "integer"
}

func typeAllowed(got string, declared []string) bool {
	return slices.Contains(declared, got) || got == "integer" && slices.Contains(declared, "number")
}

// TestDemoEventsPrecedeCollection checks that nothing was collected before it
// happened: a record's cursor time is not after its emitted_at. Calendars are
// the exception, since events are scheduled ahead.
func TestDemoEventsPrecedeCollection(t *testing.T) {
	d := loadDemo(t)
	checked := 0
	for _, c := range d.Connectors {
		if c.Key == "calendar" {
			continue
		}
		m := parseManifest(t, c)
		for _, s := range m.Streams {
			if s.Cursor == nil {
				continue
			}
			for _, conn := range c.Connections {
				for _, r := range c.Records[conn.ID][s.Name] {
					if r.Deleted {
						continue
					}
					v := stringField(t, &r, *s.Cursor)
					at, err := time.Parse(time.RFC3339Nano, v)
					if err != nil {
						at, err = time.Parse(time.DateOnly, v)
					}
					emitted, _ := time.Parse(time.RFC3339Nano, r.EmittedAt)
					if err != nil || at.After(emitted) {
						t.Errorf("%s %s: %s %s is after emitted_at %s", s.Name, r.Key, *s.Cursor, v, r.EmittedAt)
					}
					checked++
				}
			}
		}
	}
	if checked < 4000 {
		t.Errorf("checked only %d records", checked)
	}
}

func TestDemoCompoundKeys(t *testing.T) {
	d := loadDemo(t)
	recs := d.Connector("bank").Records[demoConnectionID("bank", "harbor")]["balances"]
	if len(recs) == 0 {
		t.Fatal("no balances")
	}
	want := `["acct_chk_4821","2025-05-31"]`
	if recs[0].Key != want {
		t.Errorf("first balance key %s, want %s", recs[0].Key, want)
	}
	var parts []string
	if err := json.Unmarshal([]byte(recs[0].Key), &parts); err != nil || len(parts) != 2 {
		t.Errorf("compound key %s is not a JSON array of two strings", recs[0].Key)
	}
}

func findRecord(d *Dataset, connectionID, stream, key string) *Record {
	for _, c := range d.Connectors {
		for i, r := range c.Records[connectionID][stream] {
			if r.Key == key {
				return &c.Records[connectionID][stream][i]
			}
		}
	}
	return nil
}

func stringField(t *testing.T, r *Record, field string) string {
	t.Helper()
	var data map[string]json.RawMessage
	if err := json.Unmarshal(r.Data, &data); err != nil {
		t.Fatal(err)
	}
	var s string
	if err := json.Unmarshal(data[field], &s); err != nil {
		t.Fatalf("%s.%s: %v", r.Key, field, err)
	}
	return s
}

func TestDemoLongField(t *testing.T) {
	d := loadDemo(t)
	r := findRecord(d, DemoWorkMailConnection, DemoLongStream, DemoLongRecordKey)
	if r == nil {
		t.Fatalf("%s %s not in Work Mail", DemoLongStream, DemoLongRecordKey)
	}
	if findRecord(d, DemoPersonalMailConnection, DemoLongStream, DemoLongRecordKey) != nil {
		t.Error("the long record must live in one connection only, so reads of it are not ambiguous")
	}
	text := stringField(t, r, DemoLongField)
	chars := utf8.RuneCountInString(text)
	if chars <= 50000 {
		t.Errorf("long field has %d characters, want more than 50,000", chars)
	}
	i := strings.Index(text, DemoLongPhrase)
	if i < 0 {
		t.Fatalf("phrase %q not in the long field", DemoLongPhrase)
	}
	if at := utf8.RuneCountInString(text[:i]); at <= 30000 {
		t.Errorf("phrase at character %d, want past 30,000", at)
	}
	// The phrase must be unique in the whole dataset, or search tests are vague.
	n := 0
	for _, c := range d.Connectors {
		for _, streams := range c.Records {
			for _, recs := range streams {
				for _, rec := range recs {
					n += bytes.Count(rec.Data, []byte(DemoLongPhrase))
				}
			}
		}
	}
	if n != 1 {
		t.Errorf("phrase occurs %d times in the dataset, want exactly once", n)
	}
	if got := mustInt(t, r, "body_text_chars"); got != chars {
		t.Errorf("body_text_chars = %d, body has %d characters", got, chars)
	}
}

func mustInt(t *testing.T, r *Record, field string) int {
	t.Helper()
	var data map[string]json.RawMessage
	json.Unmarshal(r.Data, &data)
	n, err := strconv.Atoi(string(data[field]))
	if err != nil {
		t.Fatalf("%s.%s = %s: %v", r.Key, field, data[field], err)
	}
	return n
}

// slotMarker returns the first "{word}" in b: a template slot the prose
// generator failed to fill. (A scan rather than a regexp: this runs over every
// byte of the dataset, also under the race detector.)
func slotMarker(b []byte) []byte {
	for i := 0; i < len(b); i++ {
		if b[i] != '{' {
			continue
		}
		j := i + 1
		for j < len(b) && (b[j] >= 'a' && b[j] <= 'z' || b[j] >= 'A' && b[j] <= 'Z') {
			j++
		}
		if j > i+1 && j < len(b) && b[j] == '}' {
			return b[i : j+1]
		}
	}
	return nil
}

// TestDemoText checks the prose newcomers read first: chat has long
// multi-paragraph posts, and no text anywhere has placeholder filler or
// unexpanded template slots.
func TestDemoText(t *testing.T) {
	d := loadDemo(t)
	chat := d.Connector("chat")
	long := 0
	authors := map[string]bool{}
	for _, r := range chat.Records[chat.Connections[0].ID]["chat_messages"] {
		if r.Deleted {
			continue
		}
		text := stringField(t, &r, "text")
		if strings.Count(text, "\n\n") >= 3 && len(text) >= 1000 {
			long++
		}
		authors[stringField(t, &r, "author_name")] = true
	}
	if long < 30 {
		t.Errorf("%d chat messages of four or more paragraphs, want at least 30", long)
	}
	if len(authors) < 8 {
		t.Errorf("%d chat authors, want a varied cast", len(authors))
	}
	for _, c := range d.Connectors {
		for _, streams := range c.Records {
			for s, recs := range streams {
				for _, r := range recs {
					if m := slotMarker(r.Data); m != nil {
						t.Errorf("%s %s: unexpanded template slot %s", s, r.Key, m)
					}
					lower := bytes.ToLower(r.Data)
					for _, f := range []string{"lorem", "ipsum", "dolor sit", "todo", "xxx"} {
						if bytes.Contains(lower, []byte(f)) {
							t.Errorf("%s %s: filler text %q", s, r.Key, f)
						}
					}
				}
			}
		}
	}
}

func TestSlotMarker(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text", ""},
		{`{"blob_id":"x"}`, ""},
		{"Hi {first}, see you", "{first}"},
		{"{Feature} ships", "{Feature}"},
		{"braces { alone }", ""},
		{"unclosed {word", ""},
	} {
		if got := string(slotMarker([]byte(tc.in))); got != tc.want {
			t.Errorf("slotMarker(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestDemoPeopleAreShared checks the cast is consistent: the coworkers who
// write mail also write in chat and sit in meetings.
func TestDemoPeopleAreShared(t *testing.T) {
	d := loadDemo(t)
	corpus := map[string][]byte{}
	for _, c := range d.Connectors {
		for _, streams := range c.Records {
			for _, recs := range streams {
				for _, r := range recs {
					corpus[c.Key] = append(corpus[c.Key], r.Data...)
				}
			}
		}
	}
	for _, p := range coworkers[:6] {
		for _, key := range []string{"mail", "chat", "calendar"} {
			if !bytes.Contains(corpus[key], []byte(p.email)) {
				t.Errorf("%s does not appear in %s", p.email, key)
			}
		}
	}
	addresses := 0
	for key, b := range corpus {
		for _, domain := range mailDomains(b) {
			addresses++
			if !strings.HasSuffix(domain, ".example") {
				t.Errorf("%s has an address at %s, outside .example", key, domain)
			}
		}
	}
	if addresses < 1000 {
		t.Errorf("found only %d addresses; the scan is not seeing the data", addresses)
	}
}

// mailDomains returns the domain after every "@" in b.
func mailDomains(b []byte) []string {
	var out []string
	for i := bytes.IndexByte(b, '@'); i >= 0; {
		j := i + 1
		for j < len(b) && (b[j] >= 'a' && b[j] <= 'z' || b[j] >= '0' && b[j] <= '9' || b[j] == '.' || b[j] == '-') {
			j++
		}
		out = append(out, strings.TrimSuffix(string(b[i+1:j]), "."))
		next := bytes.IndexByte(b[j:], '@')
		if next < 0 {
			break
		}
		i = j + next
	}
	return out
}

func TestDemoTransactions(t *testing.T) {
	d := loadDemo(t)
	bank := d.Connector("bank")
	recs := bank.Records[bank.Connections[0].ID]["transactions"]
	currencies, statuses, merchants, categories := map[string]int{}, map[string]int{}, map[string]bool{}, map[string]bool{}
	var first, last time.Time
	for _, r := range recs {
		var tx struct {
			Amount       json.Number `json:"amount"`
			Currency     string      `json:"currency"`
			Status       string      `json:"status"`
			Merchant     *string     `json:"merchant"`
			Category     string      `json:"category"`
			TransactedAt time.Time   `json:"transacted_at"`
			PostedAt     *time.Time  `json:"posted_at"`
		}
		if err := json.Unmarshal(r.Data, &tx); err != nil {
			t.Fatalf("%s: %v", r.Key, err)
		}
		if _, err := tx.Amount.Float64(); err != nil {
			t.Errorf("%s: amount %q is not a number", r.Key, tx.Amount)
		}
		currencies[tx.Currency]++
		statuses[tx.Status]++
		if tx.Merchant != nil {
			merchants[*tx.Merchant] = true
		}
		categories[tx.Category] = true
		if (tx.Status == "pending" || tx.Status == "declined") != (tx.PostedAt == nil) {
			t.Errorf("%s: status %s with posted_at %v", r.Key, tx.Status, tx.PostedAt)
		}
		if first.IsZero() || tx.TransactedAt.Before(first) {
			first = tx.TransactedAt
		}
		if tx.TransactedAt.After(last) {
			last = tx.TransactedAt
		}
	}
	if len(recs) < 800 || len(currencies) < 3 || len(merchants) < 25 || len(categories) < 10 {
		t.Errorf("%d transactions, currencies %v, %d merchants, %d categories: too little variety for aggregates",
			len(recs), currencies, len(merchants), len(categories))
	}
	for _, s := range []string{"posted", "pending", "declined", "refunded"} {
		if statuses[s] == 0 {
			t.Errorf("no %s transaction (statuses %v)", s, statuses)
		}
	}
	if span := last.Sub(first); span < 540*24*time.Hour {
		t.Errorf("transactions span %v, want about eighteen months", span)
	}

	s := parseManifest(t, bank).stream("transactions")
	a := s.Query.Aggregations
	for _, tc := range []struct {
		kind      string
		declared  []string
		mustCover []string
	}{
		{"sum", a.Sum, []string{"amount"}},
		{"min", a.Min, []string{"amount", "transacted_at"}},
		{"max", a.Max, []string{"amount", "transacted_at"}},
		{"group_by", a.GroupBy, []string{"currency", "status", "category", "merchant"}},
		{"group_by_time", a.GroupByTime, []string{"transacted_at"}},
		{"count_distinct", a.CountDistinct, []string{"merchant", "currency"}},
	} {
		for _, f := range tc.mustCover {
			if !slices.Contains(tc.declared, f) {
				t.Errorf("transactions: %s is not declared for %s", tc.kind, f)
			}
		}
	}
	for _, f := range []string{"amount", "transacted_at"} {
		if len(s.Query.RangeFilters[f]) != 4 {
			t.Errorf("transactions: range filter on %s declares %v, want all four operators", f, s.Query.RangeFilters[f])
		}
	}
	if !a.Count {
		t.Error("transactions: count aggregation not declared")
	}
}

// TestDemoBalancesAddUp checks month-end balances against the transactions:
// each month's change equals the sum of what posted that month.
func TestDemoBalancesAddUp(t *testing.T) {
	d := loadDemo(t)
	bank := d.Connector("bank")
	streams := bank.Records[bank.Connections[0].ID]
	cents := func(n json.Number) int64 {
		f, _ := n.Float64()
		if f < 0 {
			return int64(f*100 - 0.5)
		}
		return int64(f*100 + 0.5)
	}
	moved := map[string]int64{} // account|yyyy-mm
	for _, r := range streams["transactions"] {
		var tx struct {
			Account string      `json:"account_id"`
			Amount  json.Number `json:"amount"`
			Status  string      `json:"status"`
			At      time.Time   `json:"transacted_at"`
		}
		json.Unmarshal(r.Data, &tx)
		if tx.Status == "posted" || tx.Status == "refunded" {
			moved[tx.Account+"|"+dayOf(tx.At).String()[:7]] += cents(tx.Amount)
		}
	}
	prev := map[string]int64{}
	checked := 0
	for _, r := range streams["balances"] {
		var b struct {
			Account string      `json:"account_id"`
			Date    string      `json:"date"`
			Balance json.Number `json:"balance"`
		}
		json.Unmarshal(r.Data, &b)
		bal := cents(b.Balance)
		if p, ok := prev[b.Account]; ok {
			if got := bal - p; got != moved[b.Account+"|"+b.Date[:7]] {
				t.Errorf("%s %s: balance moved %d cents, transactions sum to %d", b.Account, b.Date, got, moved[b.Account+"|"+b.Date[:7]])
			}
			checked++
		}
		prev[b.Account] = bal
	}
	if checked < 50 {
		t.Errorf("only %d month-over-month balance checks", checked)
	}
}

func TestDemoBlobs(t *testing.T) {
	d := loadDemo(t)
	referenced := map[string]map[string]bool{} // blob id -> connection ids
	mimes := map[string]int{}
	for _, c := range d.Connectors {
		for connID, streams := range c.Records {
			for s, recs := range streams {
				for _, r := range recs {
					var data struct {
						BlobRef json.RawMessage `json:"blob_ref"`
					}
					if r.Deleted || json.Unmarshal(r.Data, &data) != nil || len(data.BlobRef) == 0 || string(data.BlobRef) == "null" {
						continue
					}
					var ref map[string]any
					if err := json.Unmarshal(data.BlobRef, &ref); err != nil {
						t.Fatalf("%s %s: blob_ref: %v", s, r.Key, err)
					}
					if len(ref) != 4 {
						t.Errorf("%s %s: blob_ref %v, want exactly blob_id, mime_type, size_bytes, sha256 (fetch_url is the server's)", s, r.Key, ref)
					}
					id, _ := ref["blob_id"].(string)
					blob, ok := d.Blobs[id]
					if !ok {
						t.Errorf("%s %s: blob %s not stored", s, r.Key, id)
						continue
					}
					sum := sha256.Sum256(blob.Bytes)
					if sha := hex.EncodeToString(sum[:]); ref["sha256"] != sha || id != "blob_sha256_"+sha {
						t.Errorf("%s %s: sha256 %v, bytes hash to %s", s, r.Key, ref["sha256"], sha)
					}
					if size, _ := ref["size_bytes"].(float64); int(size) != len(blob.Bytes) {
						t.Errorf("%s %s: size_bytes %v, blob has %d bytes", s, r.Key, ref["size_bytes"], len(blob.Bytes))
					}
					if ref["mime_type"] != blob.MIMEType || blob.ID != id {
						t.Errorf("%s %s: mime_type %v, blob stored as %s %s", s, r.Key, ref["mime_type"], blob.ID, blob.MIMEType)
					}
					if referenced[id] == nil {
						referenced[id] = map[string]bool{}
					}
					referenced[id][connID] = true
				}
			}
		}
	}
	shared := 0
	for id, b := range d.Blobs {
		if referenced[id] == nil {
			t.Errorf("blob %s is referenced by no record", id)
		}
		if len(referenced[id]) > 1 {
			shared++
		}
		mimes[b.MIMEType]++
		checkBlobFormat(t, b)
	}
	for _, m := range []string{"application/pdf", "image/png", "text/plain", "text/csv", "text/calendar", "application/zip"} {
		if mimes[m] == 0 {
			t.Errorf("no %s blob (have %v)", m, mimes)
		}
	}
	if shared == 0 {
		t.Error("no blob is visible under both mail connections")
	}
}

var pdfObject = regexp.MustCompile(`^(\d+) 0 obj\n`)

// checkBlobFormat makes sure the bytes are what their type says: PNGs decode,
// PDFs have a cross-reference table pointing at their objects.
func checkBlobFormat(t *testing.T, b Blob) {
	t.Helper()
	switch b.MIMEType {
	case "image/png":
		if _, err := png.Decode(bytes.NewReader(b.Bytes)); err != nil {
			t.Errorf("%s: PNG does not decode: %v", b.ID, err)
		}
	case "application/pdf":
		body := b.Bytes
		if !bytes.HasPrefix(body, []byte("%PDF-1.4\n")) || !bytes.HasSuffix(body, []byte("%%EOF\n")) {
			t.Errorf("%s: not framed as a PDF", b.ID)
			return
		}
		i := bytes.LastIndex(body, []byte("startxref\n"))
		xref, err := strconv.Atoi(string(bytes.Fields(body[i+len("startxref\n"):])[0]))
		if err != nil || !bytes.HasPrefix(body[xref:], []byte("xref\n")) {
			t.Errorf("%s: startxref does not point at the xref table", b.ID)
			return
		}
		lines := strings.Split(string(body[xref:]), "\n")
		for n, line := range lines[3:] { // "xref", "0 N", the free entry
			if !strings.HasSuffix(line, " 00000 n ") {
				break
			}
			off, _ := strconv.Atoi(line[:10])
			m := pdfObject.FindSubmatch(body[off:])
			if m == nil || string(m[1]) != strconv.Itoa(n+1) {
				t.Errorf("%s: xref entry %d does not point at object %d", b.ID, n+1, n+1)
			}
		}
	case "text/calendar":
		if !bytes.HasPrefix(b.Bytes, []byte("BEGIN:VCALENDAR\r\n")) {
			t.Errorf("%s: not an iCalendar file", b.ID)
		}
	case "text/plain", "text/csv":
		if !utf8.Valid(b.Bytes) || len(b.Bytes) == 0 {
			t.Errorf("%s: text blob is empty or not UTF-8", b.ID)
		}
	case "application/zip":
		// The one blob over the adapter's default 8 MiB bound.
		if !bytes.HasPrefix(b.Bytes, []byte("PK\x03\x04")) || len(b.Bytes) != LargeBlobBytes || len(b.Bytes) <= 8<<20 {
			t.Errorf("%s: the oversized archive is %d bytes or not framed as a zip", b.ID, len(b.Bytes))
		}
	default:
		t.Errorf("%s: unexpected type %s", b.ID, b.MIMEType)
	}
}

func TestDemoSharedKeys(t *testing.T) {
	d := loadDemo(t)
	mail := d.Connector("mail")
	personal, work := mail.Records[DemoPersonalMailConnection], mail.Records[DemoWorkMailConnection]
	for _, tc := range []struct{ stream, key string }{
		{"mail_labels", "INBOX"},
		{"mail_labels", "Travel"},
		{"mail_messages", DemoSharedMessageKey},
		{"mail_bodies", DemoSharedMessageKey + "_body"},
	} {
		p := findRecord(d, DemoPersonalMailConnection, tc.stream, tc.key)
		w := findRecord(d, DemoWorkMailConnection, tc.stream, tc.key)
		if p == nil || w == nil {
			t.Errorf("%s %s: in personal %t, in work %t; want both", tc.stream, tc.key, p != nil, w != nil)
		}
	}
	shared := 0
	keys := map[string]bool{}
	for _, r := range personal["mail_messages"] {
		keys[r.Key] = true
	}
	for _, r := range work["mail_messages"] {
		if keys[r.Key] {
			shared++
		}
	}
	if shared < 3 || shared > 20 {
		t.Errorf("%d messages in both mailboxes, want a handful", shared)
	}
}

// TestDemoRelations checks referential integrity of every expandable relation:
// children point at existing parents in the same connection, has_one means one.
func TestDemoRelations(t *testing.T) {
	d := loadDemo(t)
	for _, c := range d.Connectors {
		m := parseManifest(t, c)
		for _, s := range m.Streams {
			for _, e := range s.Query.Expand {
				for _, rel := range s.Relations {
					if rel.Name != e.Name {
						continue
					}
					for _, conn := range c.Connections {
						parents := map[string]int{}
						for _, r := range c.Records[conn.ID][s.Name] {
							parents[r.Key] = 0
						}
						for _, r := range c.Records[conn.ID][rel.Stream] {
							if r.Deleted {
								continue
							}
							var data map[string]json.RawMessage
							json.Unmarshal(r.Data, &data)
							var fk string
							json.Unmarshal(data[rel.ForeignKey], &fk)
							if _, ok := parents[fk]; !ok {
								t.Errorf("%s %s[%s].%s = %q: no such %s", conn.DisplayName, rel.Stream, r.Key, rel.ForeignKey, fk, s.Name)
								continue
							}
							parents[fk]++
						}
						most := 0
						for _, n := range parents {
							most = max(most, n)
						}
						if rel.Cardinality == "has_one" && most > 1 || rel.Cardinality == "has_many" && most < 2 {
							t.Errorf("%s %s.%s (%s): most children of one parent %d", conn.DisplayName, s.Name, rel.Name, rel.Cardinality, most)
						}
					}
				}
			}
		}
	}
}

func TestDemoGrants(t *testing.T) {
	d := loadDemo(t)
	streamsOf := map[string][]string{}     // connector key -> declared streams
	fieldsOf := map[string][]string{}      // stream -> declared properties
	connectorOf := map[string]*Connector{} // connection id -> connector
	for _, c := range d.Connectors {
		m := parseManifest(t, c)
		for _, s := range m.Streams {
			streamsOf[c.Key] = append(streamsOf[c.Key], s.Name)
			for f := range s.Schema.Properties {
				fieldsOf[s.Name] = append(fieldsOf[s.Name], f)
			}
		}
		for _, conn := range c.Connections {
			connectorOf[conn.ID] = c
		}
	}
	ids := map[string]bool{}
	for name, g := range d.Grants {
		var doc struct {
			GrantID  string `json:"grant_id"`
			IssuedAt string `json:"issued_at"`
			Version  string `json:"version"`
			Purpose  string `json:"purpose_code"`
			Subject  struct {
				ID string `json:"id"`
			} `json:"subject"`
			Client struct {
				ClientID string `json:"client_id"`
			} `json:"client"`
			Source struct {
				ID   string `json:"id"`
				Kind string `json:"kind"`
			} `json:"source"`
		}
		if err := json.Unmarshal(g.Raw, &doc); err != nil {
			t.Fatalf("grant %s: %v", name, err)
		}
		if !regexp.MustCompile(`^grt_[0-9a-f]{16}$`).MatchString(g.GrantID) || ids[g.GrantID] || doc.GrantID != g.GrantID {
			t.Errorf("grant %s: id %q bad or reused", name, g.GrantID)
		}
		ids[g.GrantID] = true
		if _, err := time.Parse(time.RFC3339Nano, doc.IssuedAt); err != nil || doc.Version != "0.1.0" || doc.Purpose == "" ||
			doc.Subject.ID != d.SubjectID || doc.Client.ClientID == "" || doc.Client.ClientID != g.ClientID || doc.Source.ID != g.SourceID || doc.Source.Kind == "" {
			t.Errorf("grant %s: not a complete PDPP grant document: %s", name, g.Raw)
		}
		for _, s := range g.Streams {
			if len(s.InstanceIDs) == 0 {
				t.Errorf("grant %s stream %s: no instance_ids", name, s.Name)
			}
			for _, id := range s.InstanceIDs {
				c := connectorOf[id]
				if c == nil {
					t.Errorf("grant %s stream %s: instance %s is no connection", name, s.Name, id)
				} else if !slices.Contains(streamsOf[c.Key], s.Name) {
					t.Errorf("grant %s stream %s: connection %s (%s) has no such stream", name, s.Name, id, c.Key)
				}
			}
			for _, f := range s.Fields {
				if !slices.Contains(fieldsOf[s.Name], f) {
					t.Errorf("grant %s stream %s: field %q undeclared", name, s.Name, f)
				}
			}
		}
	}

	client := d.Grants["client"]
	if client == nil {
		t.Fatal(`no "client" grant`)
	}
	granted := map[string]GrantStream{}
	covered := map[string]bool{}
	for _, s := range client.Streams {
		granted[s.Name] = s
		covered[connectorOf[s.InstanceIDs[0]].Key] = true
	}
	if len(covered) != len(d.Connectors) {
		t.Errorf("client grant covers connectors %v, want all %d", covered, len(d.Connectors))
	}
	var withheld []string
	for _, c := range d.Connectors {
		for _, s := range streamsOf[c.Key] {
			if _, ok := granted[s]; !ok {
				withheld = append(withheld, s)
			}
		}
	}
	if !slices.Equal(withheld, []string{"calendar_attendees"}) {
		t.Errorf("client grant withholds streams %v, want exactly [calendar_attendees]", withheld)
	}
	for _, tc := range []struct {
		stream  string
		without []string
	}{
		{"mail_messages", []string{"bcc"}},
		{"transactions", []string{"account_number"}},
		{"accounts", []string{"account_number", "routing_number"}},
		{"mail_bodies", nil},
	} {
		got := granted[tc.stream].Fields
		if len(got) != len(fieldsOf[tc.stream])-len(tc.without) {
			t.Errorf("client %s fields %v: want all %d declared but %v", tc.stream, got, len(fieldsOf[tc.stream]), tc.without)
		}
		for _, f := range tc.without {
			if slices.Contains(got, f) {
				t.Errorf("client grant exposes %s.%s", tc.stream, f)
			}
		}
	}
	if ids := granted["mail_messages"].InstanceIDs; !slices.Equal(ids, []string{DemoPersonalMailConnection, DemoWorkMailConnection}) {
		t.Errorf("client mail instance_ids %v, want both mail connections", ids)
	}

	budget := d.Grants[DemoBudgetGrant]
	if budget == nil {
		t.Fatalf("no %q grant", DemoBudgetGrant)
	}
	if budget.SourceID != d.Connector("bank").SourceID {
		t.Errorf("budget grant source %q, want the bank connector", budget.SourceID)
	}
	var tc *TimeConstraint
	for _, s := range budget.Streams {
		if connectorOf[s.InstanceIDs[0]].Key != "bank" {
			t.Errorf("budget grant reaches stream %s outside the bank", s.Name)
		}
		if s.TimeConstraint != nil {
			tc = s.TimeConstraint
		}
	}
	if tc == nil {
		t.Fatal("budget grant has no time_constraint")
	}
	since, err1 := time.Parse(time.RFC3339Nano, tc.Since)
	until, err2 := time.Parse(time.RFC3339Nano, tc.Until)
	if err1 != nil || err2 != nil || !since.Before(until) || tc.Field != "transacted_at" {
		t.Fatalf("time_constraint %+v", tc)
	}
	in, out := 0, 0
	bank := d.Connector("bank")
	for _, r := range bank.Records[bank.Connections[0].ID]["transactions"] {
		at, _ := time.Parse(time.RFC3339Nano, stringField(t, &r, "transacted_at"))
		if !at.Before(since) && at.Before(until) {
			in++
		} else {
			out++
		}
	}
	if in < 100 || out < 100 {
		t.Errorf("time window keeps %d and hides %d transactions; want both sides populated", in, out)
	}
}

func TestDemoTombstones(t *testing.T) {
	d := loadDemo(t)
	chat := d.Connector("chat")
	n := 0
	for _, r := range chat.Records[chat.Connections[0].ID]["chat_messages"] {
		if r.Deleted {
			n++
			if _, err := time.Parse(time.RFC3339Nano, r.DeletedAt); err != nil {
				t.Errorf("%s: deleted_at %q", r.Key, r.DeletedAt)
			}
		}
	}
	if n == 0 {
		t.Error("no tombstones in chat_messages")
	}
}

func TestConnectionIDs(t *testing.T) {
	for _, tc := range []struct{ connector, label, want string }{
		{"mail", "personal", DemoPersonalMailConnection},
		{"mail", "work", DemoWorkMailConnection},
	} {
		if got := demoConnectionID(tc.connector, tc.label); got != tc.want {
			t.Errorf("demoConnectionID(%q, %q) = %s, want %s", tc.connector, tc.label, got, tc.want)
		}
	}
	for _, tc := range []struct{ header, key string }{
		{demoRetroHeader, strings.TrimSuffix(DemoLongRecordKey, "_body")},
		{demoSharedHeader, DemoSharedMessageKey},
	} {
		if got := hashHex(tc.header, 16); got != tc.key {
			t.Errorf("key of %s = %s, want %s", tc.header, got, tc.key)
		}
	}
}

func TestTimestamps(t *testing.T) {
	const demoTimeLayout = "2006-01-02T15:04:05.000Z"
	for _, tc := range []time.Time{
		time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC),
		time.Date(2025, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(2026, 7, 4, 3, 7, 9, 12_000_000, time.FixedZone("PDT", -7*3600)),
	} {
		if got, want := ts(tc), tc.UTC().Format(demoTimeLayout); got != want {
			t.Errorf("ts(%v) = %s, want %s", tc, got, want)
		}
	}
	for _, tc := range []struct {
		y        int
		m        time.Month
		d        int
		wantHour int // UTC hour of local noon
	}{
		{2026, time.March, 7, 20},    // Saturday before DST starts
		{2026, time.March, 8, 19},    // second Sunday of March
		{2026, time.October, 31, 19}, // still daylight time
		{2026, time.November, 1, 20}, // first Sunday of November
		{2025, time.July, 1, 19},
		{2025, time.December, 24, 20},
	} {
		if got := pacific(tc.y, tc.m, tc.d, 12, 0).Hour(); got != tc.wantHour {
			t.Errorf("noon in Portland on %d-%02d-%02d is %02d:00 UTC, want %02d:00", tc.y, tc.m, tc.d, got, tc.wantHour)
		}
		if got := dayOf(pacific(tc.y, tc.m, tc.d, 23, 30)); got != (localDay{tc.y, tc.m, tc.d}) {
			t.Errorf("dayOf(23:30 local on %d-%02d-%02d) = %s", tc.y, tc.m, tc.d, got)
		}
	}
}

func TestAppendJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " and \ backslash`, "line\nbreak\ttab\rreturn", "\x00\x1f control",
		"Tomás · €49.80 — ok", "emoji 🎉 ☕", "<mark>html</mark> & more"} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		if got := jsonw.AppendString(nil, s); string(got) != strings.TrimSuffix(want.String(), "\n") {
			t.Errorf("jsonw.AppendString(%q) = %s, want %s", s, got, want.String())
		}
	}
	for _, cents := range []int64{0, 1, -1, 10, 12345, -215000, 448612, 99999999} {
		want, _ := json.Marshal(float64(cents) / 100)
		if got := appendMoney(nil, cents); string(got) != string(want) {
			t.Errorf("appendMoney(%d) = %s, want %s", cents, got, want)
		}
	}
	if got := compoundKey("acct_1", "2026-04-01"); got != `["acct_1","2026-04-01"]` {
		t.Errorf("compoundKey = %s", got)
	}
}

// TestProseTemplates expands every template once: a misspelt slot panics, an
// unbalanced brace leaves a marker behind.
func TestProseTemplates(t *testing.T) {
	pools := map[string][]string{
		"workUpdate": workUpdate, "workIncident": workIncident, "workCustomer": workCustomer, "workDesign": workDesign,
		"workPlanning": workPlanning, "chatShort": chatShort, "personalPlans": personalPlans, "personalTrip": personalTrip,
		"retroLines": retroLines, "newsletterLines": newsletterLines, "replyLines": replyLines, "chatExtra": chatExtra,
		"chatReplies": chatReplies, "dmLines": dmLines, "randomLines": randomLines, "photoNotes": photoNotes,
	}
	for k, v := range subjects {
		pools["subjects."+k] = v
	}
	p := &prose{r: demoRand(99)}
	for name, pool := range pools {
		for _, tmpl := range pool {
			got := p.fill(tmpl)
			if strings.ContainsAny(got, "{}") {
				t.Errorf("%s: %q expands to %q", name, tmpl, got)
			}
		}
	}
}

func BenchmarkDemo(b *testing.B) {
	var records, size int
	for b.Loop() {
		d, err := Demo()
		if err != nil {
			b.Fatal(err)
		}
		records, size = 0, 0
		for _, c := range d.Connectors {
			for _, streams := range c.Records {
				for _, recs := range streams {
					records += len(recs)
					for _, r := range recs {
						size += len(r.Data)
					}
				}
			}
		}
	}
	b.ReportMetric(float64(records), "records")
	b.ReportMetric(float64(size)/(1<<20), "data-MiB")
}
