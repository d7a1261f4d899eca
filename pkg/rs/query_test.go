package rs

import (
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestQueryEncode(t *testing.T) {
	tests := []struct {
		name string
		q    Query
		want string
	}{
		{name: "empty", q: nil, want: ""},
		{name: "one", q: Query{{"limit", "10"}}, want: "limit=10"},
		{
			name: "order kept, arrays as repeated keys",
			q:    Query{{"streams", "messages"}, {"limit", "5"}, {"streams", "threads"}},
			want: "streams=messages&limit=5&streams=threads",
		},
		{
			name: "bracket keys",
			q:    Query{{"filter[received_at][gte]", "2026-01-01T00:00:00Z"}, {"expand_limit[attachments]", "3"}},
			want: "filter%5Breceived_at%5D%5Bgte%5D=2026-01-01T00%3A00%3A00Z&expand_limit%5Battachments%5D=3",
		},
		{
			name: "form escaping of values",
			q:    Query{{"q", "tax & invoice #2 100%"}, {"fields", "id,subject"}, {"cursor", "a+b/c=="}},
			want: "q=tax+%26+invoice+%232+100%25&fields=id%2Csubject&cursor=a%2Bb%2Fc%3D%3D",
		},
		{name: "empty value kept", q: Query{{"q", ""}}, want: "q="},
		{name: "unicode", q: Query{{"q", "café"}}, want: "q=caf%C3%A9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.q.Encode()
			if got != tt.want {
				t.Fatalf("Encode() = %q, want %q", got, tt.want)
			}
			// What a form parser reads back must be exactly what was put in.
			back, err := url.ParseQuery(got)
			if err != nil {
				t.Fatal(err)
			}
			want := url.Values{}
			for _, p := range tt.q {
				want[p.Key] = append(want[p.Key], p.Value)
			}
			if diff := cmp.Diff(want, back); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestQueryAddGet(t *testing.T) {
	var q Query
	q.Add("streams", "a")
	q.Add("streams", "b")
	if v, ok := q.Get("streams"); !ok || v != "a" {
		t.Errorf("Get(streams) = %q, %v; want first value a", v, ok)
	}
	if _, ok := q.Get("limit"); ok {
		t.Error("Get(limit) found a parameter that was never added")
	}
}

func TestPath(t *testing.T) {
	tests := []struct {
		name string
		segs []string
		want string
	}{
		{name: "schema", segs: []string{"v1", "schema"}, want: "/v1/schema"},
		{
			name: "record with reserved characters",
			segs: []string{"v1", "streams", "messages", "records", "a/b?c#d%e f"},
			want: "/v1/streams/messages/records/a%2Fb%3Fc%23d%25e%20f",
		},
		{
			name: "compound key",
			segs: []string{"v1", "streams", "daily", "records", `["user_1","2026-04-01"]`},
			want: "/v1/streams/daily/records/%5B%22user_1%22%2C%222026-04-01%22%5D",
		},
		{name: "dot segments cannot climb", segs: []string{"v1", "streams", "..", "records", "."}, want: "/v1/streams/%2E%2E/records/%2E"},
		{name: "unicode", segs: []string{"v1", "streams", "café"}, want: "/v1/streams/caf%C3%A9"},
		{name: "nothing", segs: nil, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Path(tt.segs...)
			if got != tt.want {
				t.Fatalf("Path() = %q, want %q", got, tt.want)
			}
			if len(tt.segs) == 0 {
				return
			}
			// Each segment must decode back to itself after a URL parser has
			// seen the whole path.
			u, err := url.Parse("http://h" + got)
			if err != nil {
				t.Fatal(err)
			}
			var back []string
			for _, s := range splitEscaped(u.EscapedPath()) {
				d, err := url.PathUnescape(s)
				if err != nil {
					t.Fatal(err)
				}
				back = append(back, d)
			}
			if diff := cmp.Diff(tt.segs, back); diff != "" {
				t.Errorf("segments (-want +got):\n%s", diff)
			}
		})
	}
}

// splitEscaped splits an escaped path on its literal slashes.
func splitEscaped(p string) []string {
	var out []string
	start := 1
	for i := 1; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return out
}
