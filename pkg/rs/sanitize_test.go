package rs

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCheckDepth(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		deep bool
	}{
		{`{"a":[1,{"b":[]}]}`, 4, false},
		{`{"a":[1,{"b":[]}]}`, 3, true},
		{`[[[[]]]]`, 3, true},
		{`"[[[[[[["`, 1, false},             // brackets inside a string
		{`["\"[[[[[["]`, 1, false},          // an escaped quote does not end the string
		{`["\\", [[[]]]]`, 3, true},         // an escaped backslash does
		{strings.Repeat("[", 65), 64, true}, // unclosed
		{strings.Repeat("[", 64) + strings.Repeat("]", 64), 64, false},
	}
	for _, tt := range tests {
		err := CheckDepth([]byte(tt.in), tt.max)
		if (err != nil) != tt.deep || (err != nil && !errors.Is(err, ErrTooDeep)) {
			t.Errorf("CheckDepth(%.40q, %d) = %v, want deep=%v", tt.in, tt.max, err, tt.deep)
		}
	}
}

// TestCheckDepthCheap: 16 MB of '[' is refused without allocating.
func TestCheckDepthCheap(t *testing.T) {
	b := bytes.Repeat([]byte("["), 16<<20)
	if n := testing.AllocsPerRun(3, func() { _ = CheckDepth(b, MaxDepth) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

func TestRedactEscapedForms(t *testing.T) {
	const tok = "ab/cd_EF"
	tests := []string{
		`{"m":"ab\/cd_EF"}`,
		`{"m":"\u0061\u0062\u002f\u0063\u0064\u005f\u0045\u0046 tail"}`,
		`{"ab\/cd_EF":1}`,
		`{"m":"x ab%2Fcd_EF y"}`,
	}
	for _, in := range tests {
		out := redact([]byte(in), tok)
		var v any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Errorf("redact(%s) = %s: not JSON: %v", in, out, err)
			continue
		}
		dec, _ := json.Marshal(v)
		if strings.Contains(string(dec), "cd_EF") {
			t.Errorf("redact(%s) = %s still carries the token", in, out)
		}
	}
}

func FuzzCheckDepth(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":[]}]}`, `["\"[["]`, `"\\"`, `[[[[`, `]]]]{{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := CheckDepth(b, 4)
		// Reference: a JSON value encoding/json accepts nests at most as
		// deep as its maximum open brackets outside strings.
		if json.Valid(b) {
			var v any
			_ = json.Unmarshal(b, &v)
			if d := depthOf(v); (d > 4) != (err != nil) {
				t.Fatalf("CheckDepth(%q) = %v, real depth %d", b, err, d)
			}
		}
	})
}

func depthOf(v any) int {
	d := 0
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			d = max(d, depthOf(e))
		}
		return d + 1
	case map[string]any:
		for _, e := range x {
			d = max(d, depthOf(e))
		}
		return d + 1
	}
	return 0
}

// tokenLike reports whether tok is made of bearer-token characters
// (RFC 6750 b64token) and long enough to stand for one.
func tokenLike(tok string) bool {
	if len(tok) < 8 || tok == "redacted" {
		return false
	}
	for _, c := range []byte(tok) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~+/=", c) >= 0
		if !ok {
			return false
		}
	}
	return true
}

func FuzzRedact(f *testing.F) {
	f.Add([]byte(`{"m":"ab\/cd_EF12 \u0061"}`), "ab/cd_EF12")
	f.Add([]byte(`{"m":"\ud83d\ude00"}`), "xxxxxxxx")
	f.Add([]byte(`"00\u0000"`), "00000000")
	f.Add([]byte(`{"u":"https://x/?t=%61%62%2fcd_EF12","v":"\u0025%62"}`), "ab/cd_EF12")
	f.Fuzz(func(t *testing.T, body []byte, tok string) {
		if !tokenLike(tok) {
			return
		}
		valid := json.Valid(body)
		out := redact(validUTF8(body), tok)
		if !utf8.Valid(out) {
			t.Fatalf("invalid UTF-8 out of %q", body)
		}
		if bytes.Contains(out, []byte(tok)) {
			t.Fatalf("token left in %q", out)
		}
		if !json.Valid(out) {
			if valid && !bytes.Contains(body, []byte(tok)) && bytes.IndexByte(body, '\\') < 0 {
				t.Fatalf("redact broke JSON that held no token: %q -> %q", body, out)
			}
			return
		}
		if newBearer(tok).in(out) {
			t.Fatalf("valid JSON that still spells the token: %q -> %q", body, out)
		}
		var v any
		_ = json.Unmarshal(out, &v)
		var dec bytes.Buffer
		enc := json.NewEncoder(&dec)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(v)
		if strings.Contains(dec.String(), tok) {
			t.Fatalf("escaped token left: %q -> %q", body, out)
		}
	})
}
