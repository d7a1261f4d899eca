package evidence

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// The one-pass reader must build the tree gjson's reading builds, for every
// valid JSON text at every depth, and give up on anything else.
func checkFastParse(t *testing.T, text string) {
	t.Helper()
	for _, v := range []gjson.Result{gjson.Parse(text), gjson.Parse(`{"data":` + text + `}`).Get("data")} {
		if v.Type != gjson.JSON {
			continue
		}
		for _, depth := range []int{0, 1, maxDepth - 1, maxDepth} {
			var fp, sp parser
			got, ok := fp.fast(v, depth)
			if !ok {
				if gjson.Valid(v.Raw) {
					t.Fatalf("gave up on valid JSON %q", v.Raw)
				}
				continue
			}
			if !gjson.Valid(v.Raw) {
				t.Fatalf("read invalid JSON %q", v.Raw)
			}
			if want := sp.slow(v, depth); !reflect.DeepEqual(got, want) {
				t.Fatalf("tree of %q at depth %d:\n got %+v\nwant %+v", v.Raw, depth, got, want)
			}
		}
	}
}

func fastParseSeeds() []string {
	seeds := []string{`{}`, `[]`, ` {"a":1} `, `{"a":1}` + "\n", `{"a":1} x`, `{"a":"b","a":"c"}`, `{"a\u0062":"\u00e9\n"}`, `{"\"":"\\"}`,
		`{"a":[1,2,{"b":null}],"c":true,"d":false,"e":-1.5e3,"f":0}`, `{"x":"QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkwYWJjZGVmZ2hpamtsbW5vcA=="}`,
		`{"f":{"blob_id":"blob_1","mime_type":"image/png","size_bytes":2048,"sha256":"ab","fetch_url":"/v1/blobs/blob_1"}}`,
		`{"f":{"blob_id":"b\u005f1","size_bytes":1.5}}`, `{"f":{"blob_id":"b","size_bytes":-3,"mime_type":7}}`, `{"f":{"blob_id":"b","size_bytes":1e3}}`,
		`{"a":}`, `{"a" 1}`, `{"a":1,}`, `[1,]`, `[1 2]`, `{"a":"\x"}`, `{"a":"\u12"}`, `{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":tru}`, `{a:1}`,
		"{\"a\":\"b\tc\"}", "{\"a\":\"\xff\"}", `[{"a":[{"b":[{"c":"d"}]}]}]`, `{"emoji":"\ud83d\ude00","lone":"\ud800"}`,
	}
	for _, d := range []int{30, 31, 32, 33, 34, 40, 100} {
		seeds = append(seeds, `{"deep":`+strings.Repeat("[", d)+`"x"`+strings.Repeat("]", d)+`,"after":"y"}`,
			`{"deep":`+strings.Repeat(`{"a":`, d)+"1"+strings.Repeat("}", d)+`}`,
			`{"bad":`+strings.Repeat("[", d)+`"x"`+strings.Repeat("]", d-1)+`}`)
	}
	return seeds
}

func TestFastParse(t *testing.T) {
	for _, s := range fastParseSeeds() {
		checkFastParse(t, s)
	}
}

func FuzzFastParse(f *testing.F) {
	for _, s := range fastParseSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkFastParse(t, s) })
}
