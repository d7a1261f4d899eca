package credential

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

func TestNormalizeProviderURL(t *testing.T) {
	for _, tt := range []struct {
		in, want string
	}{
		{"pdpp.example.com/", "https://pdpp.example.com"},
		{"https://pdpp.example.com", "https://pdpp.example.com"},
		{"  https://pdpp.example.com  ", "https://pdpp.example.com"},
		{"HTTPS://PDPP.Example.COM:443/", "https://pdpp.example.com"},
		{"http://localhost:7662", "http://localhost:7662"},
		{"localhost:7662", "https://localhost:7662"},
		{"http://localhost:80/x", "http://localhost/x"},
		{"https://h.example:80", "https://h.example:80"},
		{"http://127.0.0.1:08080/", "http://127.0.0.1:8080"},
		{"https://user:pw@h.example/a/b//?q=1#frag", "https://h.example/a/b"},
		{"https://h.example/pdpp/", "https://h.example/pdpp"},
		{"https://h.example/", "https://h.example"},
		{"https://h.example///", "https://h.example"},
		{"https://h.example/a/../b/./c/", "https://h.example/b/c"},
		{"https://h.example?x=1", "https://h.example"},
		{"https://h.example#x", "https://h.example"},
		{"https://h.example:", "https://h.example"},
		{"http://[::1]:8080/", "http://[::1]:8080"},
		{"http://[::1]:80/", "http://[::1]"},
		{"https://my_host.example", "https://my_host.example"},
		{"https://h.example/a%20b", "https://h.example/a%20b"},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := NormalizeProviderURL(tt.in)
			if err != nil {
				t.Fatalf("NormalizeProviderURL(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("NormalizeProviderURL(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestNormalizeProviderURLErrors(t *testing.T) {
	for _, tt := range []struct {
		in, code, msg string
	}{
		{"", CodeNoProviderURL, "Provider URL required."},
		{"   ", CodeNoProviderURL, "Provider URL required."},
		{"ftp://h.example", CodeInvalidProviderURL, `Invalid provider URL "ftp://h.example": only http and https are supported.`},
		{"https://", CodeInvalidProviderURL, "no host"},
		{"https:///path", CodeInvalidProviderURL, "no host"},
		{"https://h.example:99999", CodeInvalidProviderURL, "port out of range"},
		{"https://h.example:12ab", CodeInvalidProviderURL, "not a valid URL"},
		{"https://bücher.example", CodeInvalidProviderURL, "punycode"},
		{"https://a*b.example", CodeInvalidProviderURL, "invalid character in host name"},
		{"https://[1.2.3.4]", CodeInvalidProviderURL, "not a valid URL"},
		{"https://[fe80::1%25en0]", CodeInvalidProviderURL, "invalid IPv6 address"},
		{"https://h.example/%zz", CodeInvalidProviderURL, "not a valid URL"},
		{"javascript://h.example", CodeInvalidProviderURL, "only http and https"},
		// The host names the cache file, whose name has at most 255 bytes.
		{"https://" + strings.Repeat("a", 251), CodeInvalidProviderURL, "longer than 250 characters"},
		{"https://" + strings.Repeat("a", 246) + ":8443", CodeInvalidProviderURL, "longer than 250 characters"},
	} {
		t.Run(tt.in, func(t *testing.T) {
			_, err := NormalizeProviderURL(tt.in)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error = %v, want *Error", err)
			}
			if ce.Code != tt.code || ce.ExitCode() != ExitUsage {
				t.Errorf("code, exit = %q, %d; want %q, %d", ce.Code, ce.ExitCode(), tt.code, ExitUsage)
			}
			if !strings.Contains(ce.Error(), tt.msg) {
				t.Errorf("message %q does not contain %q", ce.Error(), tt.msg)
			}
		})
	}
}

func TestNormalizeProviderURLHidesPassword(t *testing.T) {
	for _, in := range []string{
		"ftp://alice:s3cret@h.example/",
		"https://alice:s3cret@h.example:99999/",
		"alice:s3cret@h.example:99999",
		"https://alice:s3cret@/x",
	} {
		_, err := NormalizeProviderURL(in)
		if err == nil {
			t.Fatalf("NormalizeProviderURL(%q) succeeded", in)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("error for %q repeats the password: %v", in, err)
		}
	}
}

func TestHostKey(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"http://localhost:7662", "localhost_7662"},
		{"https://pdpp.example.com/rs", "pdpp.example.com"},
		{"http://[::1]:8080", "___1__8080"},
		{"https://my_host.example", "my_host.example"},
		{"https://Upper.Example", "Upper.Example"},
	} {
		if got := HostKey(tt.in); got != tt.want {
			t.Errorf("HostKey(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzNormalizeProviderURL(f *testing.F) {
	for _, s := range []string{
		"pdpp.example.com/", "http://localhost:7662", "https://u:p@h/a/../b?q#f", "http://[::1]:80/",
		"https://h:", "HTTP://H", "h/%2e%2e/x", "https://h/a b", "ftp://x", "", "https://h.example:443//",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := NormalizeProviderURL(in)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) || ce.ExitCode() != ExitUsage {
				t.Fatalf("error %v is not a usage *Error", err)
			}
			return
		}
		u, err := url.Parse(got)
		if err != nil {
			t.Fatalf("result %q does not parse: %v", got, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Errorf("result %q has scheme %q", got, u.Scheme)
		}
		if u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.Contains(got, "?") || strings.Contains(got, "#") {
			t.Errorf("result %q keeps user info, query or fragment", got)
		}
		if strings.HasSuffix(got, "/") {
			t.Errorf("result %q ends in a slash", got)
		}
		if u.Host == "" || u.Host != strings.ToLower(u.Host) {
			t.Errorf("result %q has host %q", got, u.Host)
		}
		again, err := NormalizeProviderURL(got)
		if err != nil || again != got {
			t.Errorf("not idempotent: %q -> %q -> %q, %v", in, got, again, err)
		}
		if k := HostKey(got); k == "" || strings.Trim(k, "abcdefghijklmnopqrstuvwxyz0123456789.-_") != "" {
			t.Errorf("HostKey(%q) = %q", got, k)
		}
	})
}
