package hosted

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonkeys"
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
// A key the answer holds twice is refused too: decoders disagree on which
// one counts (gjson takes the first, encoding/json the last), so an
// answer that repeats aud, active or the token kind says two things.
func (in *Introspector) principal(body []byte) (*Principal, error) {
	if !gjson.ValidBytes(body) {
		return nil, errors.New("introspection endpoint answered something that is not JSON")
	}
	r := gjson.ParseBytes(body)
	var active, reason, kind, grant, pkg, client, subject, exp gjson.Result
	var audience [2]gjson.Result // aud, resource
	if dup, repeated := jsonkeys.Each(r, func(k string, v gjson.Result) {
		switch k {
		case "active":
			active = v
		case "inactive_reason":
			reason = v
		case "pdpp_token_kind":
			kind = v
		case "grant_id":
			grant = v
		case "grant_package_id":
			pkg = v
		case "client_id":
			client = v
		case "subject_id":
			subject = v
		case "exp":
			exp = v
		case "aud":
			audience[0] = v
		case "resource":
			audience[1] = v
		}
	}); repeated {
		return nil, fmt.Errorf("introspection endpoint answered with the key %s twice", boundedKey(dup))
	}
	if active.Type != gjson.True {
		return nil, Inactive(reason.Str)
	}
	p := &Principal{
		Kind:      Kind(kind.Str),
		GrantID:   grant.Str,
		PackageID: pkg.Str,
		ClientID:  client.Str,
		SubjectID: subject.Str,
	}
	for _, v := range audience {
		// RFC 7662 allows a string or an array of strings.
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
	if exp.Type == gjson.Number {
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

// boundedKey quotes a key of the verifier's answer for a log line: at
// most 64 bytes of it, escaped.
func boundedKey(k string) string {
	if len(k) > 64 {
		k = k[:64] + "…"
	}
	return strconv.Quote(k)
}

// audienceEntry is one aud or resource value; anything but a string is
// kept as "", which matches no resource.
func audienceEntry(v gjson.Result) string {
	if v.Type != gjson.String {
		return ""
	}
	return v.Str
}
