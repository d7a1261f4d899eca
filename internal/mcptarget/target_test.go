package mcptarget

import (
	"slices"
	"strings"
	"testing"
)

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

func TestEndpoint(t *testing.T) {
	env := map[string]string{"TOKEN": "tok_1"}
	for _, tt := range []struct {
		name      string
		url       string
		headers   []string
		bearerEnv string
		auth      string   // the Authorization sent, "" for none
		secrets   []string // returned, error or not
		err       string   // "" for none
	}{
		{name: "bearer over https", url: "https://mcp.example/mcp", headers: []string{"Authorization: Basic x", "X-Key: k1"}, bearerEnv: "TOKEN",
			auth: "Bearer tok_1", secrets: []string{"Basic x", "k1", "tok_1"}},
		{name: "headers to loopback over http", url: "http://127.0.0.1:8080/mcp", headers: []string{"X-Key: k1"}, secrets: []string{"k1"}},
		{name: "nothing to send over http", url: "http://mcp.example/mcp"},
		{name: "a header in the clear", url: "http://mcp.example/mcp", headers: []string{"X-Key: k1"}, secrets: []string{"k1"}, err: "plain http"},
		{name: "a bearer in the clear", url: "http://mcp.example/mcp", bearerEnv: "TOKEN", secrets: []string{"tok_1"}, err: "plain http"},
		{name: "bearer unset", url: "https://mcp.example/mcp", headers: []string{"X-Key: k1"}, bearerEnv: "UNSET", secrets: []string{"k1"}, err: "--bearer-env UNSET"},
		{name: "a bad header after a good one", url: "https://mcp.example/mcp", headers: []string{"X-Key: k1", "bad"}, secrets: []string{"k1"}, err: "--header"},
		{name: "not a URL", url: "/mcp", err: "--url"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, secrets, err := Endpoint(tt.url, tt.headers, tt.bearerEnv, func(k string) string { return env[k] })
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("error %v, want %q", err, tt.err)
			}
			if !slices.Equal(secrets, tt.secrets) {
				t.Errorf("secrets %q, want %q", secrets, tt.secrets)
			}
			if err == nil && h.Get("Authorization") != tt.auth {
				t.Errorf("Authorization %q, want %q", h.Get("Authorization"), tt.auth)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	if got := Redact("sent tok_1 and k1, not k2", []string{"tok_1", "", "k1"}); got != "sent [redacted] and [redacted], not k2" {
		t.Errorf("Redact = %q", got)
	}
}
