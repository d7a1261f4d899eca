package rs

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// spellIn is bearer.in written the plain way, for comparison: each decoding
// of the whole of b, then a search.
func spellIn(k *bearer, b []byte) bool {
	json := unescapeJSON(nil, b)
	for _, d := range [][]byte{b, json, percentDecode(json), percentDecode(b)} {
		if containsAny(d, k.forms) {
			return true
		}
	}
	return false
}

// percentDecode decodes every %XX of b and keeps any other % as written.
func percentDecode(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); i++ {
		if b[i] == '%' && i+2 < len(b) && isHex(b[i+1]) && isHex(b[i+2]) {
			v, _ := strconv.ParseUint(string(b[i+1:i+3]), 16, 8)
			out = append(out, byte(v))
			i += 2
			continue
		}
		out = append(out, b[i])
	}
	return out
}

// spell writes tok with each character spelled as choice[i] says (the
// choices cycle): as it is, a JSON \u escape in lower or upper case hex,
// \/ for a slash, a percent escape in lower or upper case hex, a percent
// escape whose % is itself \u0025, or a backslash before it (an unknown JSON
// escape stands for its character).
func spell(tok string, choice []byte) string {
	var b strings.Builder
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		hex := strconv.FormatUint(uint64(c)|0x100, 16)[1:]
		pick := byte(0)
		if len(choice) > 0 {
			pick = choice[i%len(choice)] % 8
		}
		switch pick {
		case 1:
			b.WriteString(`\u00` + hex)
		case 2:
			b.WriteString(`\u00` + strings.ToUpper(hex))
		case 3:
			if c == '/' {
				b.WriteString(`\/`)
			} else {
				b.WriteByte(c)
			}
		case 4:
			b.WriteString("%" + hex)
		case 5:
			b.WriteString("%" + strings.ToUpper(hex))
		case 6:
			b.WriteString(`\u0025` + hex)
		case 7:
			if strings.IndexByte(`bfnrtu`, c) < 0 {
				b.WriteString(`\` + string(c))
			} else {
				b.WriteByte(c)
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// The windows of in find a spelling wherever it falls, across a window's
// edge included, and agree with decoding the whole text.
func TestBearerInAcrossWindows(t *testing.T) {
	for _, tok := range []string{"tok/HOSTILE_5f3c9a1e7b2d4c6e8a0f", strings.Repeat("Ab9+/", 1000)} {
		k := newBearer(tok)
		for _, choice := range [][]byte{{0}, {1}, {2, 3}, {4}, {5, 1}, {6}, {7, 0, 4}, {1, 4, 6, 3, 2, 5, 7}} {
			s := spell(tok, choice)
			for _, at := range []int{0, 1, windowBytes - len(s) - 1, windowBytes - len(s)/2, windowBytes - 1, windowBytes,
				2*windowBytes - len(s)/3, 3*windowBytes + 7, 2 * len(tok)} {
				if at < 0 {
					continue
				}
				// Filler with escapes of its own, so the decoders' output
				// runs ahead of or behind the input.
				filler := bytes.Repeat([]byte(`ab\n%41 `), at/7+1)[:at]
				if n := len(filler); n > 0 && (filler[n-1] == '\\' || filler[n-1] == '%') {
					filler[n-1] = ' '
				}
				body := append(append(filler, " "+s+" "...), `tail\u0041%42`...)
				if !k.in(body) {
					t.Errorf("tok %.12q spelled %v at %d: not found", tok, choice, at)
				}
				if !spellIn(k, body) {
					t.Errorf("tok %.12q spelled %v at %d: the plain decoding finds nothing either", tok, choice, at)
				}
				other := newBearer(strings.Replace(tok, "t", "T", 1) + "x")
				if other.in(body) != spellIn(other, body) {
					t.Errorf("another token disagrees at %d", at)
				}
			}
		}
	}
}

// Every choice of spellings, anywhere in any bytes, is found; and on any
// bytes in agrees with decoding the whole text.
func FuzzBearerIn(f *testing.F) {
	f.Add("tok/HOSTILE_5f3c9a1e7b2d4c6e8a0f", []byte{1, 4, 6}, []byte("pre\\"), []byte(`%4"`))
	f.Add("ab/cd_EF12", []byte{0}, []byte("\\u00"), []byte(nil))
	f.Add("xxxxxxxx", []byte{7, 3}, []byte("%"), []byte("\\"))
	f.Add("ab+cd=EF~12", []byte{5, 2}, []byte(`{"a":"`), []byte(`"}`))
	f.Fuzz(func(t *testing.T, tok string, choice, prefix, suffix []byte) {
		if !tokenLike(tok) {
			return
		}
		k := newBearer(tok)
		// A space ends whatever escape the prefix leaves open.
		body := append(append(append([]byte{}, prefix...), " "+spell(tok, choice)...), suffix...)
		if !k.in(body) {
			t.Fatalf("%q not found in %q", tok, body)
		}
		for _, b := range [][]byte{prefix, suffix, append(prefix, suffix...)} {
			if got, want := k.in(b), spellIn(k, b); got != want {
				t.Fatalf("in(%q) = %v, whole decoding says %v", b, got, want)
			}
		}
	})
}

// Header values are also read with their quoted-pairs undone, and a
// Content-Type with its parameters decoded as mime does.
func TestBearerInHeaders(t *testing.T) {
	const tok = "tok/HOSTILE_5f3c9a1e7b2d4c6e8a0f"
	k := newBearer(tok)
	pairs := `"\t\o\k\/\H\O\S\T\I\L\E\_\5\f\3\c\9\a\1\e\7\b\2\d\4\c\6\e\8\a\0\f"`
	half := len(tok) / 2
	for _, tc := range []struct {
		v               string
		header, content bool
	}{
		{"text/plain", false, false},
		{`text/plain; note="` + tok + `"`, true, true},
		{"text/plain; note=" + pairs, true, true},
		{`text/plain; note="` + spell(tok, []byte{1}) + `"`, true, true},
		{"text/plain; note*=utf-8''" + spell(tok, []byte{4}), true, true},
		{"text/plain; note*0*=utf-8''" + spell(tok[:half], []byte{5}) + "; note*1*=" + spell(tok[half:], []byte{4}), false, true},
		{"text/plain; note*0=" + strconv.Quote(tok[:half]) + "; note*1=" + strconv.Quote(tok[half:]), false, true},
		{`text/plain; note="tok/HOSTILE_5f3c9a1e7b2d4c6e8a0"`, false, false},
	} {
		if got := k.inHeader(tc.v); got != tc.header {
			t.Errorf("inHeader(%s) = %v", tc.v, got)
		}
		if got := k.inMediaType(tc.v); got != tc.content {
			t.Errorf("inMediaType(%s) = %v", tc.v, got)
		}
	}
	h := http.Header{"Content-Type": {"application/json"}, "X-Echo": {"Bearer " + spell(tok, []byte{4})},
		"Etag": {`"` + tok + `"`}, "Request-Id": {"req_1"}}
	if k.scrubHeader(h) || len(h) != 2 || h.Get("Request-Id") != "req_1" || h.Get("Content-Type") != "application/json" {
		t.Errorf("scrubHeader left %v", h)
	}
	h = http.Header{"Content-Type": {"text/plain; x=" + spell(tok, []byte{4})}}
	if !k.scrubHeader(h) || len(h) != 0 {
		t.Errorf("a Content-Type that spells the token: %v", h)
	}
	if (*bearer)(nil).in([]byte(tok)) || (*bearer)(nil).inMediaType(tok) || (*bearer)(nil).scrubHeader(http.Header{"X": {tok}}) {
		t.Error("no token sent, yet one found")
	}
}

// The redaction of an answer that can be repaired keeps it valid JSON, and
// what no string can hold is replaced whole.
func TestRedactSpellings(t *testing.T) {
	const tok = "tok/HOSTILE_5f3c9a1e7b2d4c6e8a0f"
	for _, tc := range []struct{ in, want string }{
		{`{"a":"x ` + tok + ` y"}`, `{"a":"x [redacted] y"}`},
		{`{"a":"https://x.example/?t=` + spell(tok, []byte{4}) + `"}`, `{"a":"[redacted]"}`},
		{`{"a":"` + spell(tok, []byte{6}) + `"}`, `{"a":"[redacted]"}`},
		{`{"a":"` + spell(spell(tok, []byte{1}), []byte{7}) + `"}`, `{"a":"[redacted]"}`},
		{`{"a":"100%","b":"ok"}`, `{"a":"100%","b":"ok"}`},
	} {
		if got := string(redact([]byte(tc.in), tok)); got != tc.want {
			t.Errorf("redact(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	in := []byte(`{"a":"100%","b":"\n"}`)
	if out := redact(in, tok); &out[0] != &in[0] {
		t.Error("a body without the token was copied")
	}
	if got := cleanString("see "+spell(tok, []byte{2}), newBearer(tok), 100); got != redacted {
		t.Errorf("cleanString = %q", got)
	}
}

// BenchmarkBearerIn measures the check of a blob's bytes: raw bytes with no
// escape (one search per form), text with escapes and percent signs (the
// decoders' windows), and bytes like a compressed file's. literal is the
// search for the literal forms alone, the whole of the check before
// decodings were looked at: the ratio is what they cost.
func BenchmarkBearerIn(b *testing.B) {
	k := newBearer("tok_client_5f3c9a1e7b2d4c6e8a0f1234")
	plain := bytes.Repeat([]byte("Dear team, the itinerary for Lisbon is attached. "), 20000)
	escaped := bytes.Repeat([]byte(`{"line":"caf\u00e9 at 50% off\n","url":"https:\/\/x.example\/a%20b"} `), 12000)
	binary := make([]byte, 1<<20)
	for i := range binary {
		binary[i] = byte(i*7919>>3 ^ i>>11)
	}
	for _, c := range []struct {
		name string
		body []byte
	}{{"plain-1MB", plain}, {"escaped-1MB", escaped}, {"binary-1MB", binary}} {
		b.Run("in/"+c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			for b.Loop() {
				if k.in(c.body) {
					b.Fatal("found")
				}
			}
		})
		b.Run("literal/"+c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			for b.Loop() {
				if containsAny(c.body, k.forms) {
					b.Fatal("found")
				}
			}
		})
	}
}

// BenchmarkScrubHeader is what every answer pays for its headers: the ones
// a resource server sends with a JSON page, none of which spells the token.
func BenchmarkScrubHeader(b *testing.B) {
	k := newBearer("tok_client_5f3c9a1e7b2d4c6e8a0f1234")
	h := http.Header{"Content-Type": {"application/json; charset=utf-8"}, "Content-Length": {"12034"},
		"Date": {"Mon, 02 Mar 2026 09:00:00 GMT"}, "Request-Id": {"req_01HZX3K4QF"}, "Vary": {"Authorization"},
		"Cache-Control": {"private, no-store"}}
	b.ReportAllocs()
	for b.Loop() {
		if k.scrubHeader(h) || len(h) != 6 {
			b.Fatal("dropped")
		}
	}
}
