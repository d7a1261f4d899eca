package pdpptest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// storedRecord is one immutable revision of a record. Readers may hold it
// without the store lock: writes add new revisions instead of changing old ones.
type storedRecord struct {
	key       string
	emittedAt string
	// data keeps the authored key order; values are json.RawMessage. nil on a
	// tombstone.
	data *object
	// vals holds the decoded top-level scalars (numbers as json.Number;
	// arrays and objects as json.RawMessage) for sorting, filtering and
	// aggregation.
	vals      map[string]any
	deleted   bool
	deletedAt string
	// jsonBytes is the stored size of data (record_json_bytes).
	jsonBytes int
	version   int64
}

// value returns the decoded top-level field, or nil.
func (r *storedRecord) value(field string) any { return r.vals[field] }

// raw returns the authored JSON of a top-level field.
func (r *storedRecord) raw(field string) (json.RawMessage, bool) {
	if r.data == nil {
		return nil, false
	}
	v, ok := r.data.get(field)
	if !ok {
		return nil, false
	}
	return v.(json.RawMessage), true
}

// newStoredRecord decodes a dataset record. A fetch_url inside blob_ref is
// dropped: the server injects it at read time and it is not part of the stored
// size.
func newStoredRecord(r dataset.Record) (*storedRecord, error) {
	sr := &storedRecord{key: r.Key, emittedAt: r.EmittedAt, deleted: r.Deleted, deletedAt: r.DeletedAt}
	if r.Deleted {
		return sr, nil
	}
	data, err := decodeObject(r.Data)
	if err != nil {
		return nil, fmt.Errorf("record %q: %w", r.Key, err)
	}
	var stored []byte
	if br, ok := data.get("blob_ref"); ok {
		if ref, err := decodeObject(br.(json.RawMessage)); err == nil && ref.has("fetch_url") {
			ref.del("fetch_url")
			b, err := marshal(ref)
			if err != nil {
				return nil, err
			}
			data.set("blob_ref", json.RawMessage(b))
			if stored, err = marshal(data); err != nil {
				return nil, err
			}
		}
	}
	sr.jsonBytes = len(stored)
	if stored == nil {
		sr.jsonBytes = compactLen(r.Data)
	}
	sr.data = data
	sr.vals = make(map[string]any, data.len())
	for _, m := range data.members {
		v, err := decodeValue(m.val.(json.RawMessage))
		if err != nil {
			return nil, fmt.Errorf("record %q field %q: %w", r.Key, m.key, err)
		}
		sr.vals[m.key] = v
	}
	return sr, nil
}

// compactLen is the length of valid JSON without insignificant whitespace,
// counted without building the compact form.
func compactLen(b []byte) int {
	n := 0
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			start := i
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			n += i - start + 1
			continue
		}
		n++
	}
	return n
}

// decodeValue decodes a scalar (string, json.Number, bool or nil). Arrays and
// objects stay json.RawMessage: nothing sorts, filters or groups on them, and
// decoding every list of every record made start-up slow.
func decodeValue(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, errors.New("empty value")
	}
	switch raw[0] {
	case '{', '[':
		return raw, nil
	case 'n':
		return nil, nil
	case 't':
		return true, nil
	case 'f':
		return false, nil
	case '"':
		if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
			return string(raw[1 : len(raw)-1]), nil
		}
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	return json.Number(raw), nil
}

// connectorState is one registered connector with its parsed manifest.
type connectorState struct {
	ds       *dataset.Connector
	manifest *dataset.Manifest
}

// key is the canonical connector key ("gmail").
func (c *connectorState) key() string { return c.ds.Key }

// connection returns the connection with the given id, or nil.
func (c *connectorState) connection(id string) *dataset.Connection {
	for i := range c.ds.Connections {
		if c.ds.Connections[i].ID == id {
			return &c.ds.Connections[i]
		}
	}
	return nil
}

type tableKey struct{ conn, stream string }

// table is the change history of one (connection, stream). Every write gets the
// next version; a record's state at version v is its last revision at or below
// v. History below floor has been compacted away, so changes_since tokens older
// than floor can no longer be answered.
type table struct {
	version int64
	floor   int64
	keys    []string // first-write order (storage order)
	revs    map[string][]*storedRecord
}

func newTable() *table { return &table{revs: map[string][]*storedRecord{}} }

func (t *table) write(r *storedRecord) {
	t.version++
	r.version = t.version
	if _, ok := t.revs[r.key]; !ok {
		t.keys = append(t.keys, r.key)
	}
	t.revs[r.key] = append(t.revs[r.key], r)
}

// at returns the state of key at version v (nil when it did not exist yet).
func (t *table) at(key string, v int64) *storedRecord {
	revs := t.revs[key]
	for i := len(revs) - 1; i >= 0; i-- {
		if revs[i].version <= v {
			return revs[i]
		}
	}
	return nil
}

// compact keeps at most retain versions of history: for each record the last
// revision at or below the new floor survives, so every state from floor on can
// still be rebuilt.
func (t *table) compact(retain int) {
	if retain <= 0 || t.version-int64(retain) <= t.floor {
		return
	}
	t.floor = t.version - int64(retain)
	for k, revs := range t.revs {
		i := 0
		for i+1 < len(revs) && revs[i+1].version <= t.floor {
			i++
		}
		if i > 0 {
			t.revs[k] = slices.Clone(revs[i:])
		}
	}
}

// store holds every record of every connection, with history.
type store struct {
	mu         sync.RWMutex
	connectors []*connectorState
	byConn     map[string]*connectorState
	tables     map[tableKey]*table
	retain     int
}

func newStore(ds *dataset.Dataset, retain int) (*store, error) {
	st := &store{byConn: map[string]*connectorState{}, tables: map[tableKey]*table{}, retain: retain}
	for _, c := range ds.Connectors {
		m, err := dataset.ParseManifest(c.Manifest)
		if err != nil {
			return nil, fmt.Errorf("connector %s: %w", c.Key, err)
		}
		cs := &connectorState{ds: c, manifest: m}
		st.connectors = append(st.connectors, cs)
		for _, conn := range c.Connections {
			if other, dup := st.byConn[conn.ID]; dup {
				return nil, fmt.Errorf("connection %s belongs to both %s and %s", conn.ID, other.key(), c.Key)
			}
			st.byConn[conn.ID] = cs
			for _, sd := range m.Streams {
				t := newTable()
				for _, r := range c.Records[conn.ID][sd.Name] {
					sr, err := newStoredRecord(r)
					if err != nil {
						return nil, fmt.Errorf("%s/%s/%s: %w", c.Key, conn.ID, sd.Name, err)
					}
					t.write(sr)
				}
				t.compact(retain)
				st.tables[tableKey{conn.ID, sd.Name}] = t
			}
		}
	}
	return st, nil
}

// current returns the live (not deleted) records of a (connection, stream) in
// storage order.
func (st *store) current(conn, stream string) []*storedRecord {
	st.mu.RLock()
	defer st.mu.RUnlock()
	t := st.tables[tableKey{conn, stream}]
	if t == nil {
		return nil
	}
	out := make([]*storedRecord, 0, len(t.keys))
	for _, k := range t.keys {
		revs := t.revs[k]
		if r := revs[len(revs)-1]; !r.deleted {
			out = append(out, r)
		}
	}
	return out
}

// get returns the live record with the given key, or nil.
func (st *store) get(conn, stream, key string) *storedRecord {
	st.mu.RLock()
	defer st.mu.RUnlock()
	t := st.tables[tableKey{conn, stream}]
	if t == nil {
		return nil
	}
	revs := t.revs[key]
	if len(revs) == 0 || revs[len(revs)-1].deleted {
		return nil
	}
	return revs[len(revs)-1]
}

// change is one record whose state differs between two versions.
type change struct {
	before, after *storedRecord // nil when absent at that version
	version       int64         // version of after (or of the deletion)
}

// changesBetween returns, for every record written in (since, until], its state
// at since and at until, ordered by the version of its state at until. ok is
// false when since predates the retained history.
func (st *store) changesBetween(conn, stream string, since, until int64) (out []change, ok bool) {
	st.mu.RLock()
	defer st.mu.RUnlock()
	t := st.tables[tableKey{conn, stream}]
	if t == nil {
		return nil, true
	}
	if since != 0 && since < t.floor || until < t.floor {
		return nil, false
	}
	for _, k := range t.keys {
		after := t.at(k, until)
		if after == nil || after.version <= since {
			continue
		}
		before := t.at(k, since)
		out = append(out, change{before: before, after: after, version: after.version})
	}
	slices.SortFunc(out, func(a, b change) int { return cmp.Compare(a.version, b.version) })
	return out, true
}

// maxVersion is the current version of a (connection, stream).
func (st *store) maxVersion(conn, stream string) int64 {
	st.mu.RLock()
	defer st.mu.RUnlock()
	if t := st.tables[tableKey{conn, stream}]; t != nil {
		return t.version
	}
	return 0
}

// write stores a new revision and compacts history to the retention limit.
func (st *store) write(conn, stream string, r *storedRecord) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	cs := st.byConn[conn]
	if cs == nil {
		return fmt.Errorf("unknown connection %q", conn)
	}
	if cs.manifest.Stream(stream) == nil {
		return fmt.Errorf("connector %s declares no stream %q", cs.key(), stream)
	}
	k := tableKey{conn, stream}
	t := st.tables[k]
	if t == nil {
		t = newTable()
		st.tables[k] = t
	}
	t.write(r)
	t.compact(st.retain)
	return nil
}

// Upsert writes a record into a (connection, stream) as a new version, for
// tests of changes_since and cursor stability. It panics on an unknown
// connection or stream or malformed data: a mistake in the calling test.
func (s *Server) Upsert(connectionID, stream string, r dataset.Record) {
	r.Deleted, r.DeletedAt = false, ""
	if r.EmittedAt == "" {
		r.EmittedAt = s.now().UTC().Format(isoMillis)
	}
	sr, err := newStoredRecord(r)
	if err != nil {
		panic("pdpptest: Upsert: " + err.Error())
	}
	if err := s.store.write(connectionID, stream, sr); err != nil {
		panic("pdpptest: Upsert: " + err.Error())
	}
}

// Delete writes a tombstone for a record key.
func (s *Server) Delete(connectionID, stream, key string) {
	ts := s.now().UTC().Format(isoMillis)
	if err := s.store.write(connectionID, stream, &storedRecord{key: key, emittedAt: ts, deleted: true, deletedAt: ts}); err != nil {
		panic("pdpptest: Delete: " + err.Error())
	}
}

// isoMillis is the timestamp format the reference emits.
const isoMillis = "2006-01-02T15:04:05.000Z07:00"
