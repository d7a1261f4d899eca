package fanout_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

func TestReadCursorKey(t *testing.T) {
	good := "Zk3q9VwXnR2b7LpT0aYcE5uJ8mHsD4gK6fN1oQiW\n"
	for _, tc := range []struct {
		name, body string
		mode       os.FileMode
		err        string // "" accepts
	}{
		{"random, owner only", good, 0o600, ""},
		{"group readable, as a Kubernetes Secret mount", good, 0o440, ""},
		{"world readable", good, 0o644, "other users may read"},
		{"world writable", good, 0o602, "other users may read or change"},
		{"31 bytes", good[:31], 0o600, "too weak"},
		{"exactly 32 bytes", good[:32], 0o600, ""},
		{"placeholder", "REPLACE_ME", 0o600, "too weak"},
		{"one repeated byte", strings.Repeat("a", 64), 0o600, "too weak"},
		{"white space only", strings.Repeat(" \n", 40), 0o600, "too weak"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "key")
			if err := os.WriteFile(f, []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(f, tc.mode); err != nil {
				t.Fatal(err)
			}
			key, err := fanout.ReadCursorKey(f)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.err == "" && string(key) != strings.TrimSpace(tc.body):
				t.Errorf("key %q, want the file without surrounding white space", key)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want one saying %q", err, tc.err)
			}
		})
	}
	if _, err := fanout.ReadCursorKey(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing file was accepted")
	}
}

// Replicas that share a key continue each other's cursors; a replica with
// another key refuses them.
func TestReplicasSharingTheKeyAcceptEachOthersCursors(t *testing.T) {
	a := newScripted(t, "cin_a", hits("a", 5, -3))
	b := newScripted(t, "cin_b", hits("b", 5, -3))
	members := []fanout.Member{a.member(t, "ga"), b.member(t, "gb")}
	replica := func(key string) *fanout.Client {
		c, err := fanout.New(fanout.Options{Members: members, CursorKey: []byte(key)})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	shared := strings.Repeat("0123456789abcdef", 2)
	q := rs.Query{{Key: "q", Value: "x"}, {Key: "limit", Value: "2"}}
	next := get(t, replica(shared), searchPath, q).Get("next_cursor").Str
	withCursor := append(slices.Clone(q), rs.Param{Key: "cursor", Value: next})
	if got := keys(get(t, replica(shared), searchPath, withCursor)); len(got) != 2 {
		t.Errorf("second replica's page: %v", got)
	}
	_, err := replica(strings.Repeat("fedcba9876543210", 2)).Get(context.Background(), searchPath, withCursor)
	if err == nil {
		t.Fatal("a replica with another key accepted the cursor")
	}
	if re := rsErr(t, err); re.Code != "invalid_cursor" {
		t.Errorf("other key: %+v", re)
	}
}
