package rs

import (
	"slices"
	"strings"
	"testing"
)

func TestParsePathInvertsPath(t *testing.T) {
	tests := [][]string{
		{"v1", "schema"},
		{"v1", "streams", "messages", "records", "a/b?c#d e%f", "field-window"},
		{"v1", "streams", ".", "records", ".."},
		{"v1", "streams", "ünïcode", "records", "+plus&amp;"},
	}
	for _, segs := range tests {
		p := Path(segs...)
		got, err := ParsePath(p)
		if err != nil || !slices.Equal(got, segs) {
			t.Errorf("ParsePath(%q) = %q, %v; want %q", p, got, err, segs)
		}
	}
	for _, bad := range []string{"", "v1", "/v1//schema", "/v1/%zz", "/"} {
		if _, err := ParsePath(bad); err == nil {
			t.Errorf("ParsePath(%q) accepted", bad)
		}
	}
}

func TestRouteOf(t *testing.T) {
	tests := map[string]Route{
		Path("v1", "schema"):                                         RouteSchema,
		Path("v1", "streams"):                                        RouteStreams,
		Path("v1", "streams", "records"):                             RouteStream,
		Path("v1", "streams", "m", "records"):                        RouteRecords,
		Path("v1", "streams", "m", "records", "field-window"):        RouteRecord,
		Path("v1", "streams", "m", "records", "a/b", "field-window"): RouteFieldWindow,
		Path("v1", "streams", "m", "aggregate"):                      RouteAggregate,
		Path("v1", "search"):                                         RouteSearch,
		Path("v1", "search", "semantic"):                             RouteSearchSemantic,
		Path("v1", "search", "hybrid"):                               RouteSearchHybrid,
		Path("v1", "streams", "m", "records", "r", "blobs"):          RouteOther,
		Path("v2", "schema"):                                         RouteOther,
		"/v1//schema":                                                RouteOther,
	}
	for p, want := range tests {
		if got := RouteOf(p); got != want {
			t.Errorf("RouteOf(%q) = %s, want %s", p, got, want)
		}
	}
	// The template names no stream or record: it is what the logs carry.
	if s := RouteOf(Path("v1", "streams", "secret", "records", "id42")).String(); strings.Contains(s, "secret") || strings.Contains(s, "id42") {
		t.Errorf("route %q names data", s)
	}
}

func TestClientsShareOneHTTPClient(t *testing.T) {
	tok := func() string { return "t" }
	a, err := New(Options{BaseURL: "http://127.0.0.1:1", Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(Options{BaseURL: "https://example.test/pdpp", Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	if a.hc != b.hc || a.hc != SharedHTTPClient() {
		t.Error("two clients of one process use different *http.Client values")
	}
	if a.hc.CheckRedirect == nil {
		t.Error("the shared client would follow redirects")
	}
}

func FuzzParsePath(f *testing.F) {
	f.Add("messages", "a/b?c#d", "field-window")
	f.Add(".", "..", "%2E")
	f.Add("ü", " ", "+")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		segs := []string{"v1", "streams", a, "records", b, c}
		if slices.Contains(segs, "") {
			return // Path gives an empty segment, which ParsePath refuses
		}
		got, err := ParsePath(Path(segs...))
		if err != nil || !slices.Equal(got, segs) {
			t.Fatalf("ParsePath(Path(%q)) = %q, %v", segs, got, err)
		}
		if r := RouteOf(Path(segs...)); r != RouteFieldWindow && c == "field-window" {
			t.Fatalf("RouteOf = %s for a field-window path", r)
		}
		// Any input: no panic, and a parsed path builds back to an
		// equivalent path.
		if segs, err := ParsePath(a); err == nil {
			if again, err := ParsePath(Path(segs...)); err != nil || !slices.Equal(again, segs) {
				t.Fatalf("round trip of %q: %q, %v", a, again, err)
			}
		}
	})
}
