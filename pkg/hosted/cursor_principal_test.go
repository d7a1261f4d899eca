package hosted

import (
	"context"
	"errors"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// A package's search cursor is bound to the principal it was made for: the
// same package read for another client or person refuses it.
func TestFanoutResolverBindsCursorsToThePrincipal(t *testing.T) {
	d := demoDouble(t)
	pkgToken := mailPackage(d)
	resolver := packageResolver(t, d, FanoutOptions{CursorKey: []byte("0123456789abcdef0123456789abcdef")})
	read := func(p *Principal, q rs.Query) (*rs.Response, error) {
		t.Helper()
		c, err := resolver(context.Background(), p, pkgToken)
		if err != nil {
			t.Fatal(err)
		}
		return c.Get(context.Background(), rs.Path("v1", "search"), q)
	}
	alice := &Principal{Kind: KindPackage, ClientID: "app", SubjectID: "alice", TokenHash: "aa"}
	q := rs.Query{{Key: "q", Value: "the"}, {Key: "limit", Value: "2"}}
	resp, err := read(alice, q)
	if err != nil {
		t.Fatal(err)
	}
	next := gjson.GetBytes(resp.Body, "next_cursor").Str
	if next == "" {
		t.Fatal("no next_cursor to follow")
	}
	withCursor := append(q, rs.Param{Key: "cursor", Value: next})
	// The same principal with a refreshed token continues the search.
	if _, err := read(&Principal{Kind: KindPackage, ClientID: "app", SubjectID: "alice", TokenHash: "bb"}, withCursor); err != nil {
		t.Errorf("alice with a new token: %v", err)
	}
	for name, p := range map[string]*Principal{
		"another person": {Kind: KindPackage, ClientID: "app", SubjectID: "bob", TokenHash: "aa"},
		"another client": {Kind: KindPackage, ClientID: "other-app", SubjectID: "alice", TokenHash: "aa"},
	} {
		_, err := read(p, withCursor)
		var re *rs.Error
		if !errors.As(err, &re) || re.Code != "invalid_cursor" {
			t.Errorf("%s: %v, want invalid_cursor", name, err)
		}
	}
}
