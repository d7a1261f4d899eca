package pdpptest

import (
	"slices"
	"strings"
	"testing"
)

func TestParseQuery(t *testing.T) {
	q := parseQuery("limit=3&streams=messages&streams[]=threads&filter[received_at][gte]=2026-01-01T00:00:00Z" +
		"&filter[is_seen]=true&expand_limit[attachments]=2&fields=id,%20subject,,&fields=snippet&q=Lisbon+flight%21" +
		"&expand[0]=a&x=%zz&&=orphan")

	if got := q.keys(); !slices.Equal(got, []string{"limit", "streams", "filter", "expand_limit", "fields", "q", "expand", "x"}) {
		t.Errorf("keys = %v", got)
	}
	if v, ok, err := q.single("limit"); v != "3" || !ok || err != nil {
		t.Errorf("limit = %q %v %v", v, ok, err)
	}
	if got := q.list("streams"); !slices.Equal(got, []string{"messages", "threads"}) {
		t.Errorf("streams (x and x[] are one key) = %v", got)
	}
	if got := q.node("filter").kids["received_at"].kids["gte"].vals; !slices.Equal(got, []string{"2026-01-01T00:00:00Z"}) {
		t.Errorf("filter[received_at][gte] = %v", got)
	}
	if got := q.node("filter").order; !slices.Equal(got, []string{"received_at", "is_seen"}) {
		t.Errorf("filter fields in request order = %v", got)
	}
	if got := q.node("expand_limit").kids["attachments"].vals; !slices.Equal(got, []string{"2"}) {
		t.Errorf("expand_limit[attachments] = %v", got)
	}
	if got := q.csv("fields"); !slices.Equal(got, []string{"id", "subject", "snippet"}) {
		t.Errorf("fields CSV = %v", got)
	}
	if v, _, _ := q.single("q"); v != "Lisbon flight!" {
		t.Errorf("q = %q", v)
	}
	if got := q.list("expand"); !slices.Equal(got, []string{"a"}) {
		t.Errorf("indexed expand[0] = %v", got)
	}
	if v, _, _ := q.single("x"); v != "%zz" {
		t.Errorf("an undecodable escape stays literal: %q", v)
	}
	if _, _, err := q.single("streams"); err == nil {
		t.Error("a repeated key read as a scalar should be an error")
	}
	if _, _, err := q.single("filter"); err == nil {
		t.Error("a bracketed key read as a scalar should be an error")
	}
	if unk := q.unknown(set("limit", "streams", "filter", "expand_limit", "fields")); !slices.Equal(unk, []string{"q", "expand", "x"}) {
		t.Errorf("unknown = %v", unk)
	}
	// pairs keep the decoded request order for links.next; a pair without a key is dropped.
	if len(q.pairs) != 11 || q.pairs[3].key != "filter[received_at][gte]" {
		t.Errorf("pairs = %v", q.pairs)
	}
}

func TestSplitKey(t *testing.T) {
	for key, want := range map[string][]string{
		"a":                            {"a"},
		"a[]":                          {"a", ""},
		"a[b][c]":                      {"a", "b", "c"},
		"a[b":                          {"a", "[b"},
		"a[b]x":                        {"a", "b", "x"},
		"[a]":                          {"[a]"},
		"a[1][2][3][4][5][6][7][8][9]": {"a", "1", "2", "3", "4", "5", "6", "7", "8", "[9]"},
	} {
		if got := splitKey(key); !slices.Equal(got, want) {
			t.Errorf("splitKey(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestFormEncode(t *testing.T) {
	for in, want := range map[string]string{
		"id,subject":              "id%2Csubject",
		"filter[has_attachments]": "filter%5Bhas_attachments%5D",
		"trip to Portugal":        "trip+to+Portugal",
		"eyJhIjoxfQ==":            "eyJhIjoxfQ%3D%3D",
		"a*b-c.d_e~f":             "a*b-c.d_e%7Ef",
		"café":                    "caf%C3%A9",
	} {
		if got := formEncode(in); got != want {
			t.Errorf("formEncode(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzParseQuery checks that any query string parses without panicking and
// that every decoded pair lands under its top-level key.
func FuzzParseQuery(f *testing.F) {
	for _, seed := range []string{
		"", "a=1", "filter[a][gte]=1&filter[a][lt]=2", "x[]=1&x=2", "a[b", "a=%zz", "=x&&&",
		"fields=a,b,,c", "a[0]=1&a[1]=2", strings.Repeat("a[b]", 20) + "=1",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q := parseQuery(raw)
		for _, p := range q.pairs {
			top := splitKey(p.key)[0]
			if !q.has(top) {
				t.Fatalf("pair %q has no top-level key %q", p.key, top)
			}
		}
		for _, k := range q.keys() {
			_, _, _ = q.single(k)
			_ = q.csv(k)
		}
	})
}
