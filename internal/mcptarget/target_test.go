package mcptarget

import "testing"

func TestParseHeader(t *testing.T) {
	for _, tt := range []struct {
		in, name, value string
		ok              bool
	}{
		{in: "Authorization: Bearer x", name: "Authorization", value: "Bearer x", ok: true},
		{in: "x-api-key:abc:def", name: "X-Api-Key", value: "abc:def", ok: true},
		{in: "  X-Tenant :  t1  ", name: "X-Tenant", value: "t1", ok: true},
		{in: "X-Empty:", name: "X-Empty", value: "", ok: true},
		{in: "no colon"},
		{in: ": value"},
		{in: "Bad Name: v"},
		{in: "Bad(Name): v"},
		{in: "X-Split: a\r\nInjected: b"},
	} {
		name, value, err := ParseHeader(tt.in)
		if (err == nil) != tt.ok || name != tt.name || value != tt.value {
			t.Errorf("ParseHeader(%q) = %q, %q, %v; want %q, %q, ok %v", tt.in, name, value, err, tt.name, tt.value, tt.ok)
		}
	}
}

func TestCheckURL(t *testing.T) {
	for _, tt := range []struct {
		in string
		ok bool
	}{
		{"https://mcp.example/mcp", true},
		{"http://127.0.0.1:8080/mcp", true},
		{"ftp://x/mcp", false},
		{"/mcp", false},
		{"https://", false},
	} {
		if err := CheckURL(tt.in); (err == nil) != tt.ok {
			t.Errorf("CheckURL(%q) = %v, want ok %v", tt.in, err, tt.ok)
		}
	}
}
