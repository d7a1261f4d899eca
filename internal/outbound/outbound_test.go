package outbound

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestNoClientFollowsRedirects: New, Wrap and Shared hand a 3xx back, and
// Redirect turns it into an error naming the target without its query;
// Wrap leaves the caller's client as it was.
func TestNoClientFollowsRedirects(t *testing.T) {
	var reached atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Add(1) }))
	defer target.Close()
	from := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/next?token=secret", http.StatusTemporaryRedirect)
	}))
	defer from.Close()
	callers := &http.Client{}
	for name, c := range map[string]*http.Client{"New": New(nil), "Wrap": Wrap(callers), "Wrap(nil)": Wrap(nil), "Shared": Shared()} {
		t.Run(name, func(t *testing.T) {
			resp, err := c.Get(from.URL)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			err = Redirect(resp, "the endpoint")
			var re *RedirectError
			if !errors.As(err, &re) || re.Status != http.StatusTemporaryRedirect || re.Origin != from.URL {
				t.Fatalf("Redirect = %v", err)
			}
			if want := `"` + target.URL + `/next?…"`; re.Location != want || strings.Contains(err.Error(), "secret") {
				t.Errorf("Location %s, want %s; error %q", re.Location, want, err)
			}
		})
	}
	if callers.CheckRedirect != nil {
		t.Error("Wrap changed the caller's client")
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the redirect target was reached %d times", n)
	}
	if Wrap(nil) != Shared() {
		t.Error("Wrap(nil) is not the shared client")
	}
}

func TestLocation(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "(no Location header)"},
		{"/a/b?x=1", "/a/b?…"},
		{"https://h.example:8443/p", "https://h.example:8443/p"},
		{"https://h.example/p?", "https://h.example/p?…"},
		{"http://h.example/\x01x", "(an unparseable Location header)"},
		{"https://h.example/" + strings.Repeat("a", 300), "https://h.example/" + strings.Repeat("a", maxLocation-len("https://h.example/")) + "…"},
	} {
		if got := Location(tc.in); got != tc.want {
			t.Errorf("Location(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
