package loopback

import "testing"

func TestHost(t *testing.T) {
	for _, tc := range []struct {
		host string
		want bool
	}{
		{"localhost", true},
		{"LocalHost", true},
		{"mcp.localhost", true},
		{"127.0.0.1", true},
		{"127.8.9.10", true},
		{"::1", true},
		{"[::1]", true},
		{"::ffff:127.0.0.1", true},
		{"[::ffff:127.0.0.1]", true},
		{"", false},
		{"localhost.example.com", false},
		{"notlocalhost", false},
		{"example.com", false},
		{"10.0.0.1", false},
		{"0.0.0.0", false},
		{"::", false},
		{"::ffff:10.0.0.1", false},
		{"127.0.0.1:8080", false}, // a port is the caller's to strip
		{"[::1]:8080", false},
	} {
		if got := Host(tc.host); got != tc.want {
			t.Errorf("Host(%q) = %v, want %v", tc.host, got, tc.want)
		}
	}
}
