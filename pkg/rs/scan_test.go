package rs

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// scanJSON must answer exactly what gjson.ValidBytes and CheckDepth answer,
// on any input: it replaces the two of them on every RS answer.
func checkScan(t *testing.T, b []byte) {
	t.Helper()
	for _, max := range []int{MaxDepth, 3, 1, 0} {
		valid, deep := scanJSON(b, max)
		wantDeep := CheckDepth(b, max) != nil
		wantValid := !wantDeep && gjson.ValidBytes(b)
		if deep != wantDeep || (!deep && valid != wantValid) || (deep && valid) {
			t.Fatalf("scanJSON(%q, %d) = valid %v, deep %v; want valid %v, deep %v", b, max, valid, deep, wantValid, wantDeep)
		}
	}
}

func TestScanJSON(t *testing.T) {
	for _, in := range scanSeeds() {
		checkScan(t, []byte(in))
	}
}

func scanSeeds() []string {
	seeds := []string{
		``, ` `, `{}`, `[]`, ` { } `, `{"a":1}`, `{"a":1,}`, `{,}`, `[1,]`, `[,1]`, `[1 2]`, `{"a" 1}`, `{"a":}`, `{"a":1 "b":2}`,
		`{"a":[1,{"b":[]}]}`, `[[[[]]]]`, `[[[[]]]`, `]]]][[[[`, `"x"`, `"x`, `"\u00e9\n\"\\\/"`, `"\u00g0"`, `"\u12"`, `"\x"`, "\"a\tb\"",
		`0`, `-0`, `-`, `01`, `1.`, `1.5`, `1.5e`, `1e+`, `1e+5`, `-1.5E-10`, `.5`, `+1`, `1 2`, `true`, `tru`, `false`, `fals`, `null`, `nul`, `nulll`,
		`{"a":"]]]]"}`, `["[[[[[["]`, `{"a":"\"[[[["}`, "{\"a\":1}\n", `{"a":1}x`, `{"a":{"b":{"c":{}}}}`, `[{"a":[{"b":[{}]}]}]`,
		`{"a":[1,2,3],"b":{"c":null,"d":true,"e":false,"f":-0.5e3}}`, `[1,{"a":"\u`, `{"a":"é"}`, "[\"\xff\"]",
		`{"data":[{"id":"p_msg_001","data":{"subject":"Dinner"}}],"has_more":false}`,
	}
	for _, d := range []int{2, 3, 4, 63, 64, 65, 100} {
		seeds = append(seeds, strings.Repeat("[", d)+strings.Repeat("]", d), strings.Repeat(`{"a":`, d)+"1"+strings.Repeat("}", d),
			strings.Repeat("[", d)+"x", "x"+strings.Repeat("[", d), strings.Repeat("[", d)+strings.Repeat("]", d-1)+",]")
	}
	return seeds
}

func FuzzScanJSON(f *testing.F) {
	for _, s := range scanSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkScan(t, b) })
}
