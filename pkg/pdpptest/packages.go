package pdpptest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// Grant packages: an mcp_package token bundles child grants, one per
// connection, each with its own client token. The double keeps the children
// in process (as the reference's RS does) and gives them to a hosted /mcp
// through PackageMembers; introspection describes them without tokens.

// PackageChild describes one child grant to issue.
type PackageChild struct {
	// Grant names the dataset grant the child narrows; "" means "client".
	Grant string
	// ConnectionID is the one connection the child reads.
	ConnectionID string
	// Streams narrows the child to these streams; nil keeps every stream of
	// Grant that the connection's connector holds.
	Streams []string
	// Revoked issues the child already revoked (403 grant_revoked on reads).
	Revoked bool
}

// PackageMember is one child of a package as a host resolves it.
type PackageMember struct {
	GrantID      string
	Token        string // the child's client token
	ConnectionID string
	ConnectorKey string
	DisplayName  string
	Streams      []string
	// Status is "active", or why the child cannot be used (grant_revoked).
	Status string
}

// ErrNotPackage is returned by PackageMembers for a token that is not an
// active mcp_package token.
var ErrNotPackage = errors.New("pdpptest: not an active mcp_package token")

// IssueChild issues a client token for one child grant. It panics on a
// grant or connection the dataset does not have: that is a mistake in the
// calling test.
func (s *Server) IssueChild(ch PackageChild) PackageMember {
	return s.issueChild(ch, newToken(), "")
}

// issueChild registers the child's client token tok, for the audience aud
// ("" for none).
func (s *Server) issueChild(ch PackageChild, tok, aud string) PackageMember {
	in, m, err := s.childIntrospection(ch, aud)
	if err != nil {
		panic(err.Error())
	}
	m.Token = tok
	s.tokens.addAs(tok, in)
	return m
}

// childIntrospection describes the client token of one child grant, for
// the audience aud, and the member it is; an error for a grant or
// connection the dataset does not have.
func (s *Server) childIntrospection(ch PackageChild, aud string) (*introspection, PackageMember, error) {
	name := ch.Grant
	if name == "" {
		name = "client"
	}
	base := s.ds.Grants[name]
	if base == nil {
		return nil, PackageMember{}, fmt.Errorf("pdpptest: dataset %q has no grant %q", s.ds.Name, name)
	}
	cs := s.store.byConn[ch.ConnectionID]
	if cs == nil {
		return nil, PackageMember{}, fmt.Errorf("pdpptest: dataset %q has no connection %q", s.ds.Name, ch.ConnectionID)
	}
	sum := sha256.Sum256([]byte(base.GrantID + "/" + ch.ConnectionID + fmt.Sprint(ch.Streams)))
	g := &dataset.Grant{
		GrantID: "grt_child_" + hex.EncodeToString(sum[:8]), ClientID: base.ClientID,
		SourceID: cs.ds.SourceID, ExpiresAt: base.ExpiresAt, SourceDeclarationVersion: base.SourceDeclarationVersion,
	}
	var streams []string
	for _, gs := range base.Streams {
		if s.connectorForGrantStream(base, &gs) != cs || (ch.Streams != nil && !slices.Contains(ch.Streams, gs.Name)) {
			continue
		}
		if len(gs.InstanceIDs) > 0 && !slices.Contains(gs.InstanceIDs, ch.ConnectionID) {
			continue
		}
		gs.InstanceIDs = []string{ch.ConnectionID}
		g.Streams = append(g.Streams, gs)
		streams = append(streams, gs.Name)
	}
	in := &introspection{kind: TokenClient, grantName: name, grant: g, subjectID: s.ds.SubjectID, clientID: base.ClientID, audience: aud}
	status := "active"
	if ch.Revoked {
		in.inactiveReason, status = "grant_revoked", "grant_revoked"
	}
	m := PackageMember{GrantID: g.GrantID, ConnectionID: ch.ConnectionID,
		ConnectorKey: cs.key(), Streams: streams, Status: status}
	if c := cs.connection(ch.ConnectionID); c != nil {
		m.DisplayName = c.DisplayName
	}
	return in, m, nil
}

// IssuePackage issues an mcp_package token over new child grants.
func (s *Server) IssuePackage(children ...PackageChild) (token string, members []PackageMember) {
	return s.issuePackage("", children...)
}

// issuePackage issues a package for the audience aud ("" for none).
func (s *Server) issuePackage(aud string, children ...PackageChild) (token string, members []PackageMember) {
	for _, ch := range children {
		members = append(members, s.issueChild(ch, newToken(), aud))
	}
	sum := sha256.Sum256([]byte(newToken()))
	in := &introspection{kind: TokenPackage, subjectID: s.ds.SubjectID, clientID: s.ds.Grants["client"].ClientID,
		packageID: "gpk_" + hex.EncodeToString(sum[:8]), members: members, audience: aud}
	return s.tokens.add(in), slices.Clone(members)
}

// PackageMembers resolves an active package token to its children, as the
// host RS of a hosted /mcp does. Children whose grant cannot be used are
// included with their Status.
func (s *Server) PackageMembers(token string) (packageID string, members []PackageMember, err error) {
	in, ok := s.tokens.lookup(token)
	if !ok || in.kind != TokenPackage || in.inactiveReason != "" || (!in.expChecked && !in.exp.IsZero() && !s.now().Before(in.exp)) {
		return "", nil, ErrNotPackage
	}
	out := slices.Clone(in.members)
	for i := range out {
		if child, ok := s.tokens.lookup(out[i].Token); ok && child.inactiveReason != "" {
			out[i].Status = child.inactiveReason
		}
	}
	return in.packageID, out, nil
}

// defaultPackageChildren is one child per connection of the "client" grant.
func (s *Server) defaultPackageChildren() []PackageChild {
	var out []PackageChild
	for _, c := range s.ds.Connectors {
		for _, conn := range c.Connections {
			out = append(out, PackageChild{ConnectionID: conn.ID})
		}
	}
	return out
}

// packageIntrospection describes a package's children without their tokens.
func packageIntrospection(in *introspection, lookup func(string) (introspection, bool)) *object {
	var members []any
	for _, m := range in.members {
		status := m.Status
		if child, ok := lookup(m.Token); ok && child.inactiveReason != "" {
			status = child.inactiveReason
		}
		streams := make([]any, 0, len(m.Streams))
		for _, n := range m.Streams {
			streams = append(streams, obj("name", n, "instance_ids", []any{m.ConnectionID}))
		}
		members = append(members, obj("grant_id", m.GrantID, "grant_status", status, "connection_id", m.ConnectionID,
			"source", obj("id", m.ConnectorKey, "display_name", m.DisplayName), "grant", obj("streams", streams)))
	}
	if members == nil {
		members = []any{}
	}
	return obj("grant_package_id", in.packageID, "members", members)
}
