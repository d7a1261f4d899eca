package evidence

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
)

// follow rebuilds every member of payload the way a model would from a
// JSONCut: the shown text, then Next (a window read of the member the cut
// fell in), then Rest (a fetch of the remaining members, bounded again). It
// returns, per member, the rendering of its value it could reassemble.
func follow(t *testing.T, id string, payload gjson.Result, limit int) map[string]string {
	t.Helper()
	got := map[string]string{}
	for round := 0; ; round++ {
		if round > 100 {
			t.Fatal("the continuations do not make progress")
		}
		c := BoundJSON(id, payload, limit)
		if Len(c.Text) > limit {
			t.Fatalf("text is %d code points, limit %d", Len(c.Text), limit)
		}
		shown := strings.TrimSuffix(c.Text, Ellipsis)
		// Members shown whole parse out of the shown prefix.
		payload.ForEach(func(k, v gjson.Result) bool {
			r := VisibleJSON(v)
			prefix := string(jsonw.AppendString(nil, k.Str)) + ":" + r
			if strings.Contains(shown, prefix) {
				got[k.Str] = r
			}
			return true
		})
		if !c.Cut() {
			return got
		}
		if c.Next != nil {
			a := c.Next.Args
			if c.Next.Tool != ToolReadRecordField || a.ID != id || a.FieldPath != c.CutField {
				t.Fatalf("next %+v", c.Next)
			}
			v := payload.Get(gjson.Escape(c.CutField))
			// The RS windows strings; read_record_field windows the JSON of anything else.
			text := VisibleJSON(v)
			if v.Type == gjson.String {
				text = v.Str
			}
			off := *a.OffsetChars
			head := string([]rune(text)[:off])
			if v.Type == gjson.String {
				// The shown text ends inside the member's literal, which holds
				// exactly off whole characters of the value.
				key := string(jsonw.AppendString(nil, c.CutField)) + ":"
				lit := shown[strings.LastIndex(shown, key)+len(key):]
				if n := rawCharsShown(lit, Len(lit)); !strings.HasPrefix(lit, `"`) || n != off {
					t.Fatalf("member %s: the shown literal holds %d characters, next reads from %d", c.CutField, n, off)
				}
			} else if !strings.HasSuffix(shown, head) {
				t.Fatalf("the shown text does not end with the first %d characters of %s", off, c.CutField)
			}
			rebuilt := head
			for o := off; o < Len(text); o += a.LimitChars {
				w, ok := WindowOf(text, WindowSelector{Offset: o, Limit: a.LimitChars})
				if !ok {
					t.Fatal("offset window failed")
				}
				rebuilt += w.Text
			}
			if rebuilt != text {
				t.Fatalf("member %s: shown part plus windows is not the value", c.CutField)
			}
			if v.Type == gjson.String {
				got[c.CutField] = VisibleJSON(v)
			} else {
				got[c.CutField] = rebuilt
			}
		}
		if c.Rest == nil {
			return got
		}
		if c.Rest.Tool != ToolFetch || c.Rest.Args.ID != id {
			t.Fatalf("rest %+v", c.Rest)
		}
		// fetch(fields) projects the payload to the named members.
		var w strings.Builder
		w.WriteString("{")
		for i, f := range c.Rest.Args.Fields {
			if i > 0 {
				w.WriteString(",")
			}
			w.WriteString(string(jsonw.AppendString(nil, f)) + ":" + payload.Get(gjson.Escape(f)).Raw)
		}
		w.WriteString("}")
		payload = gjson.Parse(w.String())
	}
}

func TestBoundJSONReachesEveryMember(t *testing.T) {
	long := strings.Repeat("Lisbon \"quoted\" 😀 café\n", 2000)
	raw, _ := json.Marshal(map[string]any{"body": long})
	escaped := string(raw) // {"body":"…\"quoted\"…\n…"}
	for _, tc := range []struct {
		name, payload string
		limit         int
	}{
		{"fits", `{"a":"x","b":[1,2]}`, 100},
		{"cut inside a long string", `{"id":"m1","subject":"Hi","body":"` + strings.Repeat("word ", 5000) + `","tail":1}`, 1000},
		{"cut inside escapes", escaped[:len(escaped)-1] + `,"after":"z"}`, 777},
		{"source escapes kept", `{"t":"` + strings.Repeat(`caf\u00e9 \ud83d\ude00 `, 800) + `"}`, 501},
		{"cut inside an array", `{"a":"x","labels":[` + strings.Repeat(`"label",`, 900) + `"end"],"z":true}`, 300},
		{"cut in a key", `{"` + strings.Repeat("k", 50) + `":1,"b":2}`, 20},
		{"first member huge, many after", `{"big":"` + strings.Repeat("y", 40000) + `","c1":1,"c2":"two","c3":[3]}`, 16384},
		{"binary member", `{"a":"x","raw":"` + strings.Repeat("QUJD", 200) + `","b":"` + strings.Repeat("z", 300) + `"}`, 45},
	} {
		t.Run(tc.name, func(t *testing.T) {
			payload := gjson.Parse(tc.payload)
			if !payload.IsObject() {
				t.Fatalf("bad test payload %.80s", tc.payload)
			}
			got := follow(t, "cin_a/notes:n1", payload, tc.limit)
			payload.ForEach(func(k, v gjson.Result) bool {
				if got[k.Str] != VisibleJSON(v) {
					t.Errorf("member %q not reassembled: got %.60q", k.Str, got[k.Str])
				}
				return true
			})
		})
	}
}

func TestBoundJSON(t *testing.T) {
	p := gjson.Parse(`{"id":"n1","body":"` + strings.Repeat("é", 100) + `","n":5,"bad,name":"x","raw":"` + strings.Repeat("QUJD", 100) + `"}`)
	whole := BoundJSON("s:n1", p, 0)
	if whole.Cut() || strings.Contains(whole.Text, "QUJD") || !strings.Contains(whole.Text, `"raw":{"binary":"base64","size_chars":400}`) {
		t.Errorf("whole rendering %q", whole.Text)
	}
	c := BoundJSON("s:n1", p, 30)
	if !c.Cut() || c.ShownChars != 29 || c.TotalChars != whole.TotalChars || Len(c.Text) != 30 {
		t.Fatalf("cut %+v", c)
	}
	// {"id":"n1","body":" is 19 code points, so 10 characters of body are shown.
	if c.CutField != "body" || *c.Next.Args.OffsetChars != 10 || c.Next.Args.LimitChars != WindowChars {
		t.Errorf("next %+v", c.Next)
	}
	if len(c.Whole) != 1 || !c.Whole["id"] || len(whole.Whole) != 5 {
		t.Errorf("whole %v of a cut text, %v of the whole text", c.Whole, whole.Whole)
	}
	if c.Rest == nil || strings.Join(c.Rest.Args.Fields, ",") != "n,raw" || c.Unaddressable != 1 {
		t.Errorf("rest %+v, unaddressable %d", c.Rest, c.Unaddressable)
	}
	// A first member that no read can continue is passed over rather than
	// offered again, so a chain of continuations always progresses.
	for _, payload := range []string{`{"raw":"` + strings.Repeat("QUJD", 100) + `","b":"x"}`, `{"a,b":"` + strings.Repeat("x", 100) + `","b":"x"}`} {
		first := BoundJSON("s:n1", gjson.Parse(payload), 20)
		if first.Next != nil || first.Rest == nil || strings.Join(first.Rest.Args.Fields, ",") != "b" {
			t.Errorf("%.20s: next %+v rest %+v", payload, first.Next, first.Rest)
		}
	}
	if arr := BoundJSON("s:n1", gjson.Parse(`[1,2,3,4,5,6]`), 5); !arr.Cut() || arr.Next != nil || arr.Rest != nil {
		t.Errorf("a non-object payload has no member reads: %+v", arr)
	}
}

func TestRawCharsShown(t *testing.T) {
	for _, tc := range []struct {
		lit   string
		shown int
		want  int
	}{
		{`"abc"`, 0, 0},
		{`"abc"`, 1, 0},
		{`"abc"`, 3, 2},
		{`"abc"`, 10, 3},
		{`"a\"b"`, 3, 1}, // the escape does not fit whole
		{`"a\"b"`, 4, 2},
		{`"\u00e9x"`, 6, 0},
		{`"\u00e9x"`, 7, 1},
		{`"\ud83d\ude00x"`, 12, 0},
		{`"\ud83d\ude00x"`, 13, 1},
		{`"éé"`, 2, 1},
	} {
		if got := rawCharsShown(tc.lit, tc.shown); got != tc.want {
			t.Errorf("rawCharsShown(%s, %d) = %d, want %d", tc.lit, tc.shown, got, tc.want)
		}
	}
}

// WindowOf follows the RS window math.
func TestWindowOf(t *testing.T) {
	text := "Booking confirmation LX-4821. Flight TP1347 departs 2026-03-14 09:20 from Boston to Lisbon. Seat 23A. Baggage: one checked bag."
	ptr := func(n int) *int { return &n }
	for _, tc := range []struct {
		name string
		sel  WindowSelector
		want FieldWindow
		ok   bool
	}{
		{"offset", WindowSelector{Offset: 20, Limit: 40}, FieldWindow{EndChars: 60, HasMore: true, LimitChars: 40, NextOffset: ptr(60), PreviousOffset: ptr(0), StartChars: 20, Text: text[20:60], TotalChars: 127}, true},
		{"whole by default", WindowSelector{}, FieldWindow{Complete: true, EndChars: 127, LimitChars: 4096, Text: text, TotalChars: 127}, true},
		{"query with context", WindowSelector{Q: "Seat", Before: 10, After: 20, HasContext: true},
			FieldWindow{EndChars: 116, HasMore: true, LimitChars: 34, MatchStart: ptr(92), MatchEndChars: ptr(96), NextOffset: ptr(116), PreviousOffset: ptr(48), StartChars: 82, Text: text[82:116], TotalChars: 127}, true},
		{"offset past the end", WindowSelector{Offset: 500}, FieldWindow{EndChars: 127, LimitChars: 4096, PreviousOffset: ptr(0), StartChars: 127, TotalChars: 127}, true},
		{"limit clamped", WindowSelector{Limit: 99999}, FieldWindow{Complete: true, EndChars: 127, LimitChars: MaxWindowChars, Text: text, TotalChars: 127}, true},
		{"query is case-insensitive, as the RS matches", WindowSelector{Q: "seat"}, FieldWindow{EndChars: 127, LimitChars: 4096,
			MatchStart: ptr(92), MatchEndChars: ptr(96), PreviousOffset: ptr(0), StartChars: 92, Text: "Seat 23A. Baggage: one checked bag.", TotalChars: 127}, true},
		{"query not found", WindowSelector{Q: "quetzal"}, FieldWindow{}, false},
	} {
		got, ok := WindowOf(text, tc.sel)
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(tc.want)
		if ok != tc.ok || string(g) != string(w) {
			t.Errorf("%s:\n got %s %v\nwant %s %v", tc.name, g, ok, w, tc.ok)
		}
	}
	// Code points, not bytes.
	w, _ := WindowOf("😀é😀é", WindowSelector{Offset: 1, Limit: 2})
	if w.Text != "é😀" || w.TotalChars != 4 {
		t.Errorf("code point window %+v", w)
	}
}

func TestLooksBinary(t *testing.T) {
	b64 := strings.Repeat("QUJDRA", 60)
	for s, want := range map[string]bool{
		b64:                             true,
		b64[1:]:                         true, // a window need not start on a quantum
		b64 + "=":                       true,
		b64 + "===":                     false,
		strings.Repeat("ab", 200):       false, // two distinct characters
		strings.Repeat("word ", 100):    false,
		b64[:100]:                       false,
		strings.Repeat("abc", 100) + "": false,
	} {
		if got := LooksBinary(s); got != want {
			t.Errorf("LooksBinary(%.30q… len %d) = %v, want %v", s, len(s), got, want)
		}
	}
}

func TestFirstMark(t *testing.T) {
	for in, want := range map[string]string{
		"Offsite in <mark>Lisbon</mark>?":           "Lisbon",
		"<mark>marigold contingency</mark> plan":    "marigold contingency",
		"<mark> </mark> then <mark>x</mark>":        "x",
		"no marks":                                  "",
		"<mark>open":                                "",
		"<mark>a<mark>b</mark>":                     "b",
		"…the <mark>Café</mark> and <mark>b</mark>": "Café",
	} {
		if got := FirstMark(in); got != want {
			t.Errorf("FirstMark(%q) = %q, want %q", in, got, want)
		}
	}
}

// BoundJSON never exceeds its limit, and its continuations name members of
// the payload by names a tool argument can carry, reading from inside the
// member's value.
func FuzzBoundJSON(f *testing.F) {
	f.Add(`{"a":"x","body":"`+strings.Repeat("é\\n\\\"", 50)+`","n":[1,{"k":null}]}`, 40)
	f.Add(`{"raw":"`+strings.Repeat("QUJD", 80)+`","t":"\ud83d\ude00 \u00e9"}`, 10)
	f.Add(`[1,2,3]`, 3)
	f.Fuzz(func(t *testing.T, payload string, limit int) {
		if !gjson.Valid(payload) || limit > 1<<16 {
			return
		}
		v := gjson.Parse(payload)
		// A name given twice addresses no member in particular (RS payloads
		// come from JSON objects and never repeat a name).
		seen := map[string]bool{}
		dup := false
		v.ForEach(func(k, _ gjson.Result) bool {
			dup = dup || seen[k.Str]
			seen[k.Str] = true
			return !dup
		})
		if dup {
			return
		}
		c := BoundJSON("s:r", v, limit)
		if limit > 0 && Len(c.Text) > limit {
			t.Fatalf("%d code points for limit %d", Len(c.Text), limit)
		}
		if !c.Cut() && c.Text != VisibleJSON(v) {
			t.Fatalf("uncut text %q is not the rendering %q", c.Text, VisibleJSON(v))
		}
		if c.Next != nil {
			m := v.Get(gjson.Escape(c.CutField))
			size := Len(VisibleJSON(m))
			if m.Type == gjson.String {
				size = Len(m.Str)
			}
			if !m.Exists() || !FieldPathOK(c.CutField) || *c.Next.Args.OffsetChars < 0 || *c.Next.Args.OffsetChars >= size {
				t.Fatalf("next %+v for member %s of size %d", c.Next.Args, c.CutField, size)
			}
		}
		if c.Rest != nil {
			for _, f := range c.Rest.Args.Fields {
				if !FieldPathOK(f) || f == c.CutField {
					t.Fatalf("rest names %q", f)
				}
			}
		}
	})
}

// WindowOf follows the RS window math for any text and selector.
func FuzzWindowOf(f *testing.F) {
	f.Add("Booking confirmation LX-4821. Seat 23A.", 3, 10, "Seat", 4, 2)
	f.Add("😀é😀é", 1, 2, "", 0, 0)
	f.Fuzz(func(t *testing.T, text string, offset, limit int, q string, before, after int) {
		if offset < 0 || limit < 0 || before < 0 || after < 0 || before > MaxContextChars || after > MaxContextChars {
			return
		}
		w, ok := WindowOf(text, WindowSelector{Offset: offset, Limit: limit, Q: q, Before: before, After: after, HasContext: before+after > 0})
		if !ok {
			if q == "" || strings.Contains(text, q) {
				t.Fatalf("window refused for q %q", q)
			}
			return
		}
		total := Len(text)
		if w.TotalChars != total || w.StartChars > w.EndChars || w.EndChars > total || w.LimitChars > MaxWindowChars ||
			Len(w.Text) != w.EndChars-w.StartChars || w.EndChars-w.StartChars > w.LimitChars ||
			w.Complete != (w.StartChars == 0 && w.EndChars >= total) || w.HasMore != (w.EndChars < total) {
			t.Fatalf("window %+v of %d code points", w, total)
		}
		if w.NextOffset != nil && *w.NextOffset != w.EndChars {
			t.Fatalf("next %d, end %d", *w.NextOffset, w.EndChars)
		}
		if utf8.ValidString(text) && !strings.Contains(text, w.Text) {
			t.Fatalf("window text %q is not part of the text", w.Text)
		}
	})
}

func FuzzFirstMark(f *testing.F) {
	f.Add("a <mark>b</mark> c")
	f.Add("<mark><mark>x</mark>")
	f.Fuzz(func(t *testing.T, s string) {
		m := FirstMark(s)
		if m != "" && (!strings.Contains(s, "<mark>"+m+"</mark>") || strings.Contains(m, "<mark>") || strings.Contains(m, "</mark>")) {
			t.Fatalf("FirstMark(%q) = %q", s, m)
		}
	})
}

func TestIndexFold(t *testing.T) {
	for _, tc := range []struct {
		text, q string
		want    int
	}{
		{"Hello World", "world", 6},
		{"café CAFÉ", "café", 0},
		{"xx CAFÉ", "café", 3},
		{"Ünïcode über", "ÜBER", 8},
		{"abc", "d", -1},
		{"Seat 12A, seat 14B", "seat 14", 10},
	} {
		if got := IndexFold(tc.text, tc.q); got != tc.want {
			t.Errorf("IndexFold(%q, %q) = %d, want %d", tc.text, tc.q, got, tc.want)
		}
	}
}
