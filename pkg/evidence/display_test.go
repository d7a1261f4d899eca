package evidence

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

func TestTitle(t *testing.T) {
	hits := fixtureRows(t, "search-lexical")
	records := fixtureRows(t, "records-messages-limit3")
	tests := []struct {
		name string
		rec  gjson.Result
		opts TitleOptions
		want string
	}{
		{"lexical hit: source / stream / time", hits[0], TitleOptions{}, "Personal Gmail / messages / 2026-01-17T11:14:00.000Z"},
		{"declared primary title", records[0], TitleOptions{PrimaryTitleField: "subject"}, "Monthly budget check-in"},
		// Titles never guess from field names: without a declared
		// primary-title value, the source / stream / time form.
		{"subject without a declaration", records[0], TitleOptions{}, "Personal Gmail / messages / 2026-02-16T16:49:00.000Z"},
		{"declared field missing falls through", records[0], TitleOptions{PrimaryTitleField: "headline"}, "Personal Gmail / messages / 2026-02-16T16:49:00.000Z"},
		{"declared field beats title", gjson.Parse(`{"data":{"title":"T","headline":"H"}}`), TitleOptions{PrimaryTitleField: "headline"}, "H"},
		{"declared field with a dot in its name", gjson.Parse(`{"data":{"a.b":"dotted"}}`), TitleOptions{PrimaryTitleField: "a.b"}, "dotted"},
		{"no title from a title field", gjson.Parse(`{"stream":"m","data":{"summary":"S","name":"N"}}`), TitleOptions{}, "m"},
		{"whitespace collapsed", gjson.Parse(`{"data":{"title":"  a\n\tb  "}}`), TitleOptions{PrimaryTitleField: "title"}, "a b"},
		{"blank declared title is skipped", gjson.Parse(`{"data":{"title":"   "}}`), TitleOptions{PrimaryTitleField: "title", PrimaryTitle: "whole"}, "whole"},
		{"a declared body is not a title", gjson.Parse(`{"stream":"bodies","data":{"body_text":"` + strings.Repeat("word ", 40) + `"}}`), TitleOptions{PrimaryTitleField: "body_text"}, "bodies"},
		{"primary title from the caller", gjson.Parse(`{"stream":"m"}`), TitleOptions{PrimaryTitleField: "subject", PrimaryTitle: "Your receipt"}, "Your receipt"},
		// authored times beat emitted_at, wherever they are
		{"sent_at beats emitted_at", gjson.Parse(`{"display_name":"Slack","stream":"messages","emitted_at":"E","data":{"sent_at":"S"}}`), TitleOptions{}, "Slack / messages / S"},
		{"received_at in data", gjson.Parse(`{"display_name":"W","stream":"m","emitted_at":"E","data":{"received_at":"R","body":"b"}}`), TitleOptions{}, "W / m / R"},
		{"hit authored_at", gjson.Parse(`{"object":"search_result","display_name":"W","stream":"m","emitted_at":"E","authored_at":"A"}`), TitleOptions{}, "W / m / A"},
		{"declared event time first", gjson.Parse(`{"display_name":"W","stream":"m","data":{"sent_at":"S","at":"EV"}}`), TitleOptions{EventTimeField: "at"}, "W / m / EV"},
		{"emitted_at when nothing authored", gjson.Parse(`{"display_name":"W","stream":"m","emitted_at":"E"}`), TitleOptions{}, "W / m / E"},
		{"registry connector key shortened", gjson.Parse(`{"connector_key":"https://registry.pdpp.dev/connectors/gmail","stream":"m"}`), TitleOptions{}, "gmail / m"},
		{"hit connector_id", gjson.Parse(`{"connector_id":"gmail","stream":"m"}`), TitleOptions{}, "gmail / m"},
		{"connection id last", gjson.Parse(`{"connection_id":"cin_a"}`), TitleOptions{Stream: "orders"}, "cin_a / orders"},
		// the title never falls back to the snippet
		{"snippet is not a title", gjson.Parse(`{"object":"search_result","snippet":{"field":"body","text":"matched text"}}`), TitleOptions{Fallback: "s:k"}, "s:k"},
		{"nothing at all", gjson.Parse(`{}`), TitleOptions{Fallback: "id"}, "id"},
	}
	for _, tt := range tests {
		if got := Title(tt.rec, tt.opts); got != tt.want {
			t.Errorf("%s: Title = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestShortConnectorKey(t *testing.T) {
	for in, want := range map[string]string{
		"gmail": "gmail",
		"https://registry.pdpp.dev/connectors/gmail":   "gmail",
		"https://registry.pdpp.dev/connectors/gmail/":  "gmail",
		"https://registry.pdpp.dev/connectors/slack?v": "slack",
		"https://registry.pdpp.dev":                    "https://registry.pdpp.dev",
		"":                                             "",
	} {
		if got := ShortConnectorKey(in); got != want {
			t.Errorf("ShortConnectorKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSnippet(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"<mark>Lisbon</mark> Air", 320, "<mark>Lisbon</mark> Air"},
		{"Your <mark>Lisbon</mark> <mark>flight</mark> itinerary", 320, "Your <mark>Lisbon</mark> <mark>flight</mark> itinerary"},
		{"a\n\n b\t c", 320, "a b c"},
		{"  lead and trail  ", 320, "lead and trail"},
		{"stray </mark> close", 320, "stray close"},
		{"<mark>unclosed", 320, "<mark>unclosed</mark>"},
		{"<mark>a <mark>nested</mark> b</mark>", 320, "<mark>a nested</mark> b"},
		{"empty <mark></mark>pair", 320, "empty pair"},
		{"x <mark> </mark> y", 320, "x y"},
		{"<MARK>upper</MARK>", 320, "<MARK>upper</MARK>"},
		// cuts never leave a tag open and stay within max, tags included
		{"Offsite in <mark>Lisbon</mark>? Yes", 28, "Offsite in <mark>Lis</mark>…"},
		{"Offsite in <mark>Lisbon</mark>? Yes", 27, "Offsite in <mark>Li</mark>…"},
		{"Offsite in <mark>Lisbon</mark>? Yes", 25, "Offsite in…"},
		{"Offsite in <mark>Lisbon</mark>? Yes", 17, "Offsite in…"},
		{"<mark>abcdef</mark>", 15, "<mark>a</mark>…"},
		{"<mark>abcdef</mark>", 14, "…"},
		{"abcdef", 4, "abc…"},
		{"abcdef", 1, "…"},
		{"abcdef", 0, ""},
		{"😀😀😀😀", 3, "😀😀…"},
	}
	for _, tt := range tests {
		got := Snippet(tt.in, tt.max)
		if got != tt.want {
			t.Errorf("Snippet(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

func TestPlainSnippet(t *testing.T) {
	if got := PlainSnippet("Your <mark>Lisbon</mark>\nflight </mark>", 320); got != "Your Lisbon flight" {
		t.Errorf("PlainSnippet = %q", got)
	}
	if got := PlainSnippet("<mark>abcdef</mark>", 4); got != "abc…" {
		t.Errorf("PlainSnippet cut = %q", got)
	}
}

// balanced reports whether every <mark> is closed before the next opens and
// no </mark> appears without an open one.
func balanced(s string) bool {
	open := false
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], markOpen):
			if open {
				return false
			}
			open = true
		case strings.HasPrefix(s[i:], markClose):
			if !open {
				return false
			}
			open = false
		}
	}
	return !open
}

func FuzzSnippet(f *testing.F) {
	f.Add("Offsite in <mark>Lisbon</mark>?", 12)
	f.Add("<mark><mark></mark></mark></mark>", 9)
	f.Add("<mark>😀😀😀</mark> tail", 16)
	f.Fuzz(func(t *testing.T, s string, limit int) {
		if limit > 1000 || limit < -5 {
			return
		}
		for _, got := range []string{Snippet(s, limit), PlainSnippet(s, limit)} {
			if !balanced(got) {
				t.Fatalf("Snippet(%q, %d) = %q is unbalanced", s, limit, got)
			}
			if Len(got) > max(limit, 0) {
				t.Fatalf("Snippet(%q, %d) = %q has %d code points", s, limit, got, Len(got))
			}
			if utf8.ValidString(s) && !utf8.ValidString(got) {
				t.Fatalf("Snippet(%q, %d) = %q splits a code point", s, limit, got)
			}
			if strings.ContainsAny(got, "\n\r\t") {
				t.Fatalf("Snippet(%q, %d) = %q is not one line", s, limit, got)
			}
		}
	})
}

// A primary-title field can hold a whole body: it is not a title then, and
// a long fallback is cut to TitleMaxChars.
func TestTitleIsBounded(t *testing.T) {
	rec := gjson.Parse(`{"stream":"bodies","data":{"body_text":"` + strings.Repeat("word ", 10000) + `"}}`)
	if got := Title(rec, TitleOptions{PrimaryTitleField: "body_text"}); got != "bodies" {
		t.Errorf("title %.40q…", got)
	}
	long := gjson.Parse(`{"stream":"` + strings.Repeat("s", 500) + `"}`)
	if got := Title(long, TitleOptions{}); Len(got) != TitleMaxChars || !strings.HasSuffix(got, Ellipsis) {
		t.Errorf("title of %d characters: %.40q…", Len(got), got)
	}
}
