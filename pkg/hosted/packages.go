package hosted

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

// ChildLookup returns the child grants of an mcp_package principal: what the
// host RS knows about the package (its id, and per child the grant id,
// connection, connector key, label, granted streams and the child's own
// client token). A child whose grant is revoked or expired is returned with
// Unusable set, so the model is told rather than silently shown less. An
// *AuthError refuses the package token itself.
type ChildLookup func(ctx context.Context, p *Principal, token string) (packageID string, children []fanout.Child, err error)

// FanoutOptions configures FanoutResolver.
type FanoutOptions struct {
	// ProviderURL is the RS a child reads when its BaseURL is empty.
	ProviderURL string
	// Lookup resolves a package to its children. Required.
	Lookup ChildLookup
	// HTTPClient is shared by every child's RS client; nil uses the rs
	// package's shared client.
	HTTPClient *http.Client
	// RSTimeout and RSMaxBodyBytes bound each child call as for one RS;
	// ChildTimeout bounds a child inside a fan-out (0: fanout's default).
	RSTimeout      time.Duration
	RSMaxBodyBytes int64
	ChildTimeout   time.Duration
	// CursorKey signs search cursors; every handler instance behind one
	// public URL must share it so a cursor made by one is accepted by
	// another. nil: a key per process.
	CursorKey []byte
	Logger    *slog.Logger
}

// FanoutResolver is a PackageResolver that reads a package's children
// through one fan-out client, each child with its own bearer.
func FanoutResolver(o FanoutOptions) (PackageResolver, error) {
	if o.Lookup == nil {
		return nil, errors.New("hosted: FanoutOptions.Lookup is required")
	}
	return func(ctx context.Context, p *Principal, token string) (tools.RS, error) {
		pkgID, children, err := o.Lookup(ctx, p, token)
		if err != nil {
			return nil, err
		}
		if len(children) == 0 {
			return nil, &AuthError{Status: http.StatusForbidden, Code: "package_invalid",
				Message: "This MCP package has no child grants; approve the package again"}
		}
		members := make([]fanout.Member, 0, len(children))
		for _, ch := range children {
			m := fanout.Member{GrantID: ch.GrantID, ConnectionIDs: ch.ConnectionIDs, ConnectorKey: ch.ConnectorKey,
				DisplayName: ch.DisplayName, Streams: ch.Streams, Unusable: ch.Unusable}
			if m.Unusable == "" {
				base := ch.BaseURL
				if base == "" {
					base = o.ProviderURL
				}
				tok := ch.Token
				c, err := rs.New(rs.Options{BaseURL: base, Token: func() string { return tok }, HTTPClient: o.HTTPClient,
					Timeout: o.RSTimeout, MaxBodyBytes: o.RSMaxBodyBytes, Logger: o.Logger, CompatSearchShapes: true})
				if err != nil {
					return nil, fmt.Errorf("hosted: package child %s: %w", ch.GrantID, err)
				}
				m.RS, m.Origin = c, base
			}
			members = append(members, m)
		}
		return fanout.New(fanout.Options{Members: members, ChildTimeout: o.ChildTimeout, CursorKey: o.CursorKey,
			PackageID: pkgID, Principal: cursorPrincipal(p), Logger: o.Logger})
	}, nil
}

// cursorPrincipal is who a package's search cursors are bound to: the client
// and person the bearer was issued to, which outlive one token; the token
// itself when introspection names neither.
func cursorPrincipal(p *Principal) string {
	if p == nil {
		return ""
	}
	if p.ClientID == "" && p.SubjectID == "" {
		return "token:" + p.TokenHash
	}
	return "client:" + p.ClientID + "\x00subject:" + p.SubjectID
}
