package hosted

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/outbound"
)

// maxIntrospectionBytes bounds an introspection answer; a full grant object
// is a few kilobytes.
const maxIntrospectionBytes = 1 << 20

// Introspector is an RFC 7662 token introspection client with the PDPP
// extensions (pdpp_token_kind, grant_id, inactive_reason).
type Introspector struct {
	// URL is the introspection endpoint.
	URL string
	// ClientID and ClientSecret authenticate this resource to the endpoint
	// with HTTP Basic.
	ClientID, ClientSecret string
	// HTTPClient is shared by the process; nil means the process's shared
	// client. Redirects are never followed, whatever its policy: the
	// token and this resource's credentials go to URL and nowhere else.
	HTTPClient *http.Client
	// Timeout bounds one call; 0 means 10 s.
	Timeout time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Verify implements Verifier.
func (in *Introspector) Verify(ctx context.Context, token string) (*Principal, error) {
	timeout := in.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	form := url.Values{"token": {token}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.URL, strings.NewReader(form))
	if err != nil {
		return nil, fmt.Errorf("introspection request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(in.ClientID), url.QueryEscape(in.ClientSecret))
	resp, err := outbound.Wrap(in.HTTPClient).Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the endpoint URL is configuration, not news
		}
		return nil, fmt.Errorf("introspection: %w", err)
	}
	defer resp.Body.Close()
	if err := outbound.Redirect(resp, "the introspection endpoint"); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxIntrospectionBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("introspection: read answer: %w", err)
	case len(body) > maxIntrospectionBytes:
		return nil, fmt.Errorf("introspection: answer larger than %d bytes", maxIntrospectionBytes)
	case resp.StatusCode != http.StatusOK:
		// A refusal of our own credentials is an operator problem, never
		// the caller's token: do not cache it as a verdict.
		return nil, fmt.Errorf("introspection endpoint answered HTTP %d %s", resp.StatusCode, gjson.GetBytes(body, "error.code").Str)
	}
	return in.principal(body)
}

// principal reads an answer. gjson reads malformed JSON leniently (a bare
// t is true), so validity is checked first: a broken answer never grants.
func (in *Introspector) principal(body []byte) (*Principal, error) {
	if !gjson.ValidBytes(body) {
		return nil, errors.New("introspection endpoint answered something that is not JSON")
	}
	r := gjson.ParseBytes(body)
	if active := r.Get("active"); active.Type != gjson.True {
		return nil, Inactive(r.Get("inactive_reason").Str)
	}
	p := &Principal{
		Kind:      Kind(r.Get("pdpp_token_kind").Str),
		GrantID:   r.Get("grant_id").Str,
		PackageID: r.Get("grant_package_id").Str,
		ClientID:  r.Get("client_id").Str,
		SubjectID: r.Get("subject_id").Str,
	}
	for _, field := range []string{"aud", "resource"} {
		// RFC 7662 allows a string or an array of strings.
		v := r.Get(field)
		switch {
		case !v.Exists() || v.Type == gjson.Null:
			continue
		case v.IsArray():
			for _, a := range v.Array() {
				p.Audience = append(p.Audience, audienceEntry(a))
			}
		default:
			p.Audience = append(p.Audience, audienceEntry(v))
		}
		if p.Audience == nil {
			p.Audience = []string{} // present but empty: names nothing
		}
	}
	if exp := r.Get("exp"); exp.Type == gjson.Number {
		p.Expires = time.Unix(exp.Int(), 0)
		now := time.Now
		if in.Now != nil {
			now = in.Now
		}
		if !now().Before(p.Expires) {
			return nil, errInvalidToken
		}
	}
	if p.Kind == "" {
		// Core: an unknown kind is unauthorized.
		return nil, &AuthError{Status: http.StatusUnauthorized, Code: "context.kind_mismatch", Message: "Token introspection failed closed"}
	}
	return p, nil
}

// audienceEntry is one aud or resource value; anything but a string is
// kept as "", which matches no resource.
func audienceEntry(v gjson.Result) string {
	if v.Type != gjson.String {
		return ""
	}
	return v.Str
}
