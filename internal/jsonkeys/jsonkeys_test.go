package jsonkeys

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestEach(t *testing.T) {
	// many is an object of 40 distinct keys, past the slice the first keys
	// are compared in.
	var many []string
	for i := range 40 {
		many = append(many, `"k`+strconv.Itoa(i)+`":`+strconv.Itoa(i))
	}
	manyObj := "{" + strings.Join(many, ",") + "}"
	for _, tt := range []struct {
		name     string
		json     string
		dup      string
		repeated bool
		seen     []string // the keys each is called for
	}{
		{"distinct", `{"a":1,"b":2}`, "", false, []string{"a", "b"}},
		{"repeated", `{"a":1,"b":2,"a":3}`, "a", true, []string{"a", "b"}},
		{"escaped spelling", `{"token_kind":"client","token\u005fkind":"owner"}`, "token_kind", true, []string{"token_kind"}},
		{"both escaped", `{"\u0061":1,"\u0061":2}`, "a", true, []string{"a"}},
		{"escaped slash", `{"a/b":1,"a\/b":2}`, "a/b", true, []string{"a/b"}},
		{"empty key", `{"":1,"":2}`, "", true, []string{""}},
		{"case differs", `{"Kind":1,"kind":2}`, "", false, []string{"Kind", "kind"}},
		{"nested repeats are not this object's", `{"a":{"b":1,"b":2},"c":[1,1]}`, "", false, []string{"a", "c"}},
		{"many distinct", manyObj, "", false, nil},
		{"repeated after many", manyObj[:len(manyObj)-1] + `,"k3":0}`, "k3", true, nil},
		{"array", `[1,2,3]`, "", false, nil},
		{"string", `"a"`, "", false, nil},
		{"empty object", `{}`, "", false, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var seen []string
			dup, repeated := Each(gjson.Parse(tt.json), func(k string, _ gjson.Result) { seen = append(seen, k) })
			if dup != tt.dup || repeated != tt.repeated {
				t.Errorf("Each = %q, %v; want %q, %v", dup, repeated, tt.dup, tt.repeated)
			}
			if tt.seen != nil && !slices.Equal(seen, tt.seen) {
				t.Errorf("each called for %q, want %q", seen, tt.seen)
			}
		})
	}
}

func TestEachNil(t *testing.T) {
	if dup, repeated := Each(gjson.Parse(`{"a":1,"a":2}`), nil); !repeated || dup != "a" {
		t.Errorf("Each with no callback = %q, %v", dup, repeated)
	}
}
