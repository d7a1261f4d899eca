package tools

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// filterExample is shown whenever a filter is rejected, so the caller sees
// both accepted shapes.
const filterExample = `filter: {"from_email": "a@example.com"} for an exact match, or filter: {"received_at": {"gte": "2026-01-01T00:00:00Z"}} for a range`

// rangeOps are the range operators the RS understands, in the order the
// schema lists them.
var rangeOps = []string{"gte", "gt", "lte", "lt"}

// filterArg is the typed filter argument encoded as RS bracket parameters
// (filter[field]=v, filter[field][op]=v) in the order the caller wrote it.
type filterArg []rs.Param

// UnmarshalJSON parses and checks the filter object. Its errors are
// *toolError values with code invalid_filter.
func (f *filterArg) UnmarshalJSON(b []byte) error {
	p, err := parseFilter(b)
	if err != nil {
		return err
	}
	*f = p
	return nil
}

// parseFilter turns a typed filter object into bracket parameters. Anything
// that is not a non-empty object of scalar or range values is rejected, so a
// string, a pre-encoded bracket key or an empty object never reaches the RS.
func parseFilter(b []byte) ([]rs.Param, error) {
	if !gjson.ValidBytes(b) {
		return nil, filterError("filter is not valid JSON")
	}
	r := gjson.ParseBytes(b)
	if !r.IsObject() {
		return nil, filterError("filter must be an object keyed by field name; got " + jsonKind(r) + " " + clip(r.Raw, 60))
	}
	var params []rs.Param
	var err error
	n := 0
	r.ForEach(func(k, v gjson.Result) bool {
		field := k.String()
		if n++; n > MaxListItems {
			err = tooLarge("filter", fmt.Sprintf("filter has more than %d fields", MaxListItems))
			return false
		}
		switch {
		case strings.TrimSpace(field) == "":
			err = filterError("filter field names must be non-empty")
			return false
		case len(field) > MaxNameBytes:
			err = tooLarge("filter", fmt.Sprintf("filter key is %d bytes; names are at most %d", len(field), MaxNameBytes))
			return false
		case nameProblem(field, false) != "":
			err = filterError("filter key " + quoteArg(field) + " " + nameProblem(field, false))
			return false
		case strings.ContainsAny(field, "[]"):
			err = filterError("filter key " + quoteArg(field) +
				" must be an advertised field name, not pre-encoded bracket syntax")
			return false
		}
		if v.IsObject() {
			n := 0
			v.ForEach(func(op, val gjson.Result) bool {
				n++
				name := op.String()
				if !isRangeOp(name) {
					err = filterError("filter." + field + " uses operator " + quoteArg(name) +
						"; range operators are gte, gt, lte and lt")
					return false
				}
				// Range bounds are numbers or date strings; the RS compares
				// nothing else with gte/gt/lte/lt.
				s, ok := scalarText(val)
				if !ok || val.Type == gjson.True || val.Type == gjson.False {
					err = filterError("filter." + field + "." + name + " must be a string (a date) or a number; got " + jsonKind(val))
					return false
				}
				if len(s) > MaxFilterValueBytes {
					err = filterValueTooLarge(field+"."+name, len(s))
					return false
				}
				params = append(params, rs.Param{Key: "filter[" + field + "][" + name + "]", Value: s})
				return true
			})
			if err == nil && n == 0 {
				err = filterError("filter." + field + " is an empty range; it must include at least one of gte, gt, lte or lt")
			}
			return err == nil
		}
		s, ok := scalarText(v)
		if !ok {
			err = filterError("filter." + field + " must be a string, number or boolean (exact match) or a range object; got " + jsonKind(v))
			return false
		}
		if len(s) > MaxFilterValueBytes {
			err = filterValueTooLarge(field, len(s))
			return false
		}
		params = append(params, rs.Param{Key: "filter[" + field + "]", Value: s})
		return true
	})
	if err != nil {
		return nil, err
	}
	if len(params) == 0 {
		return nil, filterError("filter object must include at least one field; omit filter entirely to read without one")
	}
	return params, nil
}

func filterValueTooLarge(where string, n int) *toolError {
	return tooLarge("filter", fmt.Sprintf("filter.%s is %d bytes; filter values are at most %d", where, n, MaxFilterValueBytes))
}

func filterError(msg string) *toolError {
	return &toolError{Code: CodeInvalidFilter, Param: "filter", Message: msg,
		Next: "pass " + filterExample + "; schema(stream) shows which fields accept eq (exact) or r (range)"}
}

func isRangeOp(op string) bool {
	for _, o := range rangeOps {
		if op == o {
			return true
		}
	}
	return false
}

// expandLimitArg is the typed expand_limit argument encoded as
// expand_limit[relation]=n parameters, in the caller's order.
type expandLimitArg []rs.Param

// UnmarshalJSON parses and checks the expand_limit object. Its errors are
// *toolError values with code invalid_expand.
func (e *expandLimitArg) UnmarshalJSON(b []byte) error {
	p, err := parseExpandLimit(b)
	if err != nil {
		return err
	}
	*e = p
	return nil
}

func parseExpandLimit(b []byte) ([]rs.Param, error) {
	if !gjson.ValidBytes(b) {
		return nil, expandError("expand_limit is not valid JSON")
	}
	r := gjson.ParseBytes(b)
	if !r.IsObject() {
		return nil, expandError("expand_limit must be an object keyed by relation name; got " + jsonKind(r) + " " + clip(r.Raw, 60))
	}
	var params []rs.Param
	var err error
	r.ForEach(func(k, v gjson.Result) bool {
		rel := k.String()
		switch {
		case len(params) == MaxListItems:
			err = tooLarge("expand_limit", fmt.Sprintf("expand_limit has more than %d relations", MaxListItems))
		case strings.TrimSpace(rel) == "":
			err = expandError("expand_limit relation names must be non-empty")
		case len(rel) > MaxNameBytes:
			err = tooLarge("expand_limit", fmt.Sprintf("expand_limit key is %d bytes; names are at most %d", len(rel), MaxNameBytes))
		case nameProblem(rel, false) != "":
			err = expandError("expand_limit key " + quoteArg(rel) + " " + nameProblem(rel, false))
		case strings.ContainsAny(rel, "[]"):
			err = expandError("expand_limit key " + quoteArg(rel) + " must be a relation name, not pre-encoded bracket syntax")
		case v.Type != gjson.Number || v.Num < 1 || v.Num != math.Trunc(v.Num) || v.Num > math.MaxInt32:
			err = expandError("expand_limit." + rel + " must be a positive integer; got " + clip(v.Raw, 40))
		}
		if err != nil {
			return false
		}
		params = append(params, rs.Param{Key: "expand_limit[" + rel + "]", Value: strconv.FormatInt(int64(v.Num), 10)})
		return true
	})
	if err != nil {
		return nil, err
	}
	if len(params) == 0 {
		return nil, expandError("expand_limit must include at least one relation; omit expand_limit entirely when not setting a cap")
	}
	return params, nil
}

func expandError(msg string) *toolError {
	return &toolError{Code: CodeInvalidExpand, Param: "expand_limit", Message: msg,
		Next: `pass expand_limit as {"<relation>": <positive integer>} for relations also listed in expand`}
}

// relation returns the relation name of an expand_limit[<rel>] parameter.
func relation(p rs.Param) string {
	return strings.TrimSuffix(strings.TrimPrefix(p.Key, "expand_limit["), "]")
}

// scalarText renders an exact-filter or range value the way the RS compares
// it: strings as they are, booleans as true/false, numbers in their shortest
// decimal form (integers keep every digit).
func scalarText(v gjson.Result) (string, bool) {
	switch v.Type {
	case gjson.String:
		return v.Str, true
	case gjson.True:
		return "true", true
	case gjson.False:
		return "false", true
	case gjson.Number:
		if !strings.ContainsAny(v.Raw, ".eE") {
			return v.Raw, true
		}
		if math.Abs(v.Num) >= 1e21 {
			return strconv.FormatFloat(v.Num, 'g', -1, 64), true
		}
		return strconv.FormatFloat(v.Num, 'f', -1, 64), true
	}
	return "", false
}

func jsonKind(v gjson.Result) string {
	switch {
	case v.Type == gjson.String:
		return "a string"
	case v.Type == gjson.Number:
		return "a number"
	case v.Type == gjson.True || v.Type == gjson.False:
		return "a boolean"
	case v.Type == gjson.Null:
		return "null"
	case v.IsArray():
		return "an array"
	case v.IsObject():
		return "an object"
	}
	return "a value"
}
