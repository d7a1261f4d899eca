package pdpptest

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Record values are compared the way the reference does: numbers numerically,
// ISO date strings chronologically, everything else as strings.

// timeLayouts are the ISO 8601 shapes accepted as instants.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05Z07:00", "2006-01-02T15:04Z07:00", "2006-01-02"}

// asTime parses an ISO 8601 date or date-time string.
func asTime(v any) (time.Time, bool) {
	s, ok := v.(string)
	if !ok || len(s) < 10 || s[4] != '-' {
		return time.Time{}, false
	}
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// asNumber returns a JSON number as float64.
func asNumber(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

// nullish reports a value that sorts as null: absent, null or the empty string.
func nullish(v any) bool {
	if v == nil {
		return true
	}
	s, ok := v.(string)
	return ok && s == ""
}

// compareValues orders two non-null scalar values.
func compareValues(a, b any) int {
	if x, ok := asNumber(a); ok {
		if y, ok := asNumber(b); ok {
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		}
	}
	if x, ok := asTime(a); ok {
		if y, ok := asTime(b); ok {
			return x.Compare(y)
		}
	}
	return strings.Compare(stringForm(a), stringForm(b))
}

// stringForm is a value as the reference compares it in exact filters: the
// JSON literal of numbers and booleans, the text of strings.
func stringForm(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	b, _ := marshal(v)
	return string(b)
}
