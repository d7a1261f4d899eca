package pdpptest

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
)

// Page cursors and changes_since tokens are base64 JSON, as in the reference,
// and opaque to clients. Struct fields are in alphabetical order so the
// encoding matches the reference byte for byte.

// recordsCursor is a keyset position in a records list.
type recordsCursor struct {
	CursorValue any    `json:"cursor_value"`
	Kind        string `json:"kind"`  // "page"
	Order       string `json:"order"` // "ASC" or "DESC"
	PrimaryKey  []any  `json:"primary_key"`
	Session     string `json:"session"` // "records"
}

// changesCursor continues a changes_since session.
type changesCursor struct {
	AfterVersion      int64  `json:"after_version"`
	Kind              string `json:"kind"`    // "page"
	Session           string `json:"session"` // "changes"
	SessionMaxVersion int64  `json:"session_max_version"`
	SinceVersion      int64  `json:"since_version"`
}

// changesToken is a next_changes_since value.
type changesToken struct {
	Kind    string `json:"kind"` // "changes_since"
	Version int64  `json:"version"`
}

func encodeToken(v any) string {
	b, _ := json.Marshal(v)
	return base64.StdEncoding.EncodeToString(b)
}

// decodeToken reads base64 JSON in any of the usual alphabets, padded or not.
func decodeToken(s string, v any) bool {
	s = strings.TrimRight(s, "=")
	b, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		if b, err = base64.RawURLEncoding.DecodeString(s); err != nil {
			return false
		}
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	return dec.Decode(v) == nil
}

// pageCursorKind peeks at a cursor's session ("records" or "changes").
func pageCursorKind(s string) (session string, ok bool) {
	var head struct {
		Kind    string `json:"kind"`
		Session string `json:"session"`
	}
	if !decodeToken(s, &head) || head.Kind != "page" {
		return "", false
	}
	return head.Session, head.Session == "records" || head.Session == "changes"
}

// sortKey is a record's position in a keyset order: its cursor value (nil when
// null, absent or empty) and its primary key parts.
type sortKey struct {
	cursor any
	pk     []any
}

func recordSortKey(decl streamKeys, r *storedRecord) sortKey {
	k := sortKey{}
	if decl.cursorField != "" {
		if v := r.value(decl.cursorField); !nullish(v) {
			k.cursor = v
		}
	}
	for _, f := range decl.primaryKey {
		k.pk = append(k.pk, r.value(f))
	}
	if len(k.pk) == 0 {
		k.pk = []any{r.key}
	}
	return k
}

// streamKeys is what ordering needs from a stream declaration.
type streamKeys struct {
	cursorField string
	primaryKey  []string
}

// compareSortKeys orders ascending: by cursor value with nulls after every
// present value, then by primary key parts.
func compareSortKeys(a, b sortKey) int {
	switch {
	case a.cursor == nil && b.cursor != nil:
		return 1
	case a.cursor != nil && b.cursor == nil:
		return -1
	case a.cursor != nil:
		if c := compareValues(a.cursor, b.cursor); c != 0 {
			return c
		}
	}
	for i := 0; i < len(a.pk) && i < len(b.pk); i++ {
		x, y := a.pk[i], b.pk[i]
		switch {
		case x == nil && y == nil:
			continue
		case x == nil:
			return 1
		case y == nil:
			return -1
		}
		if c := compareValues(x, y); c != 0 {
			return c
		}
	}
	return len(a.pk) - len(b.pk)
}

// keyset sorts rows in the given direction and keeps those strictly after the
// cursor position (when given). Because the position is a value, not an
// offset, inserts between pages cause neither duplicates nor skips.
func keyset(rows []*storedRecord, keys streamKeys, desc bool, after *sortKey) []*storedRecord {
	type keyed struct {
		r *storedRecord
		k sortKey
	}
	ks := make([]keyed, 0, len(rows))
	for _, r := range rows {
		k := recordSortKey(keys, r)
		if after != nil {
			c := compareSortKeys(k, *after)
			if desc {
				c = -c
			}
			if c <= 0 {
				continue
			}
		}
		ks = append(ks, keyed{r, k})
	}
	slices.SortStableFunc(ks, func(a, b keyed) int {
		c := compareSortKeys(a.k, b.k)
		if desc {
			return -c
		}
		return c
	})
	out := make([]*storedRecord, len(ks))
	for i, k := range ks {
		out[i] = k.r
	}
	return out
}

// cursorFor encodes the position of r as a page cursor.
func cursorFor(keys streamKeys, r *storedRecord, desc bool) string {
	k := recordSortKey(keys, r)
	order := "ASC"
	if desc {
		order = "DESC"
	}
	return encodeToken(recordsCursor{CursorValue: k.cursor, Kind: "page", Order: order, PrimaryKey: k.pk, Session: "records"})
}
