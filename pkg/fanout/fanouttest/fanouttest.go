// Package fanouttest connects the RS double's grant packages to the fan-out
// client, for the demo and for tests. It lives apart from both: pkg/pdpptest
// must not import pkg/fanout (the credential package's own tests import the
// double, and fan-out imports credential). Like the double, it ships in the
// binary: `pdpp-mcp --demo --http` resolves its package token through it.
package fanouttest

import (
	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
)

// PackageChildren resolves a package token of d to its package id and
// children, as a fan-out ChildLookup answers: every child with its token,
// revoked ones marked Unusable and without a token.
func PackageChildren(d *pdpptest.Server, token string) (string, []fanout.Child, error) {
	id, members, err := d.PackageMembers(token)
	if err != nil {
		return "", nil, err
	}
	children := make([]fanout.Child, 0, len(members))
	for _, m := range members {
		ch := fanout.Child{GrantID: m.GrantID, ConnectionIDs: []string{m.ConnectionID}, ConnectorKey: m.ConnectorKey,
			DisplayName: m.DisplayName, Streams: m.Streams, Token: m.Token}
		if m.Status != "active" {
			ch.Unusable, ch.Token = m.Status, ""
		}
		children = append(children, ch)
	}
	return id, children, nil
}
