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
		valid, deep, longest := scanJSON(b, max)
		wantDeep := CheckDepth(b, max) != nil
		wantValid := !wantDeep && gjson.ValidBytes(b)
		if deep != wantDeep || (!deep && valid != wantValid) || (deep && valid) {
			t.Fatalf("scanJSON(%q, %d) = valid %v, deep %v; want valid %v, deep %v", b, max, valid, deep, wantValid, wantDeep)
		}
		if !valid || max != MaxDepth {
			continue
		}
		// The envelope check that skips reading rows when no string is
		// long enough must answer as the full one, on every route.
		for route := RouteOther; route <= RouteBlob; route++ {
			for _, compat := range []bool{false, true} {
				if got, want := checkEnvelopeScanned(route, b, compat, longest), checkEnvelope(route, b, compat); got != want {
					t.Fatalf("%s (compat %v) of %q with longest string %d: %q, want %q", route, compat, b, longest, got, want)
				}
			}
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
		`{"data":[{"id":"` + strings.Repeat("k", 300) + `","stream":"s","x":"` + strings.Repeat("y", 250) + `"}]}`,
		`{"data":[{"stream":"` + strings.Repeat("s", 255) + `","x":"` + strings.Repeat("y", 300) + `"},{"stream":"` + strings.Repeat("s", 257) + `"}]}`,
		`{"data":[{"id":"a","x":"` + strings.Repeat("y", 300) + `"},{"connection_id":"` + strings.Repeat("c", 255) + `","pad":"` + strings.Repeat("p", 300) + `"}]}`,
		`{"object":"list","data":[{"record_key":"` + strings.Repeat("r", 513) + `"}],"next_cursor":"` + strings.Repeat("n", 4097) + `"}`,
		`{"data":{"results":[{"id":"` + strings.Repeat("k", 600) + `"}],"next_cursor":"c"}}`,
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
