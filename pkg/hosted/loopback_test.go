package hosted

import (
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/internal/loopback"
)

// The direct path keeps the SDK's loopback rule, which is narrower than the
// project's: these rows pin both, so neither drifts into the other.
func TestLoopbackRules(t *testing.T) {
	for _, tc := range []struct {
		host         string
		sdk, project bool
	}{
		{"localhost", true, true},
		{"localhost:8080", true, false}, // the SDK's rule strips a port itself
		{"127.0.0.1:8080", true, false},
		{"[::1]:8080", true, false},
		{"::1", true, true},
		{"LOCALHOST", false, true},
		{"mcp.localhost", false, true},
		{"::ffff:127.0.0.1", true, true},
		{"example.com:443", false, false},
		{"10.0.0.1", false, false},
	} {
		if got := isLoopback(tc.host); got != tc.sdk {
			t.Errorf("isLoopback(%q) = %v, want %v (the SDK's rule)", tc.host, got, tc.sdk)
		}
		if got := loopback.Host(tc.host); got != tc.project {
			t.Errorf("loopback.Host(%q) = %v, want %v", tc.host, got, tc.project)
		}
	}
}
