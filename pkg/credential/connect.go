package credential

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/internal/loopback"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// DefaultProbeBudget caps how long Connect waits for the start-up owner-token
// check, so a hung resource server cannot stall start-up; when it runs out,
// every read checks first instead.
const DefaultProbeBudget = 10 * time.Second

// ConnectOptions configures Connect.
type ConnectOptions struct {
	// ProviderURL is the resource server base URL given to `pdpp connect`.
	ProviderURL string
	// CacheRoot is --cache-root/PDPP_CACHE_ROOT; "" applies FindRoot's
	// search order.
	CacheRoot string
	// Timeout and MaxBodyBytes configure the RS client (see rs.Options).
	Timeout      time.Duration
	MaxBodyBytes int64
	// Logger receives the RS client's and the guard's diagnostics; nil
	// discards.
	Logger *slog.Logger
	// ProbeBudget bounds the start-up check; 0 means DefaultProbeBudget (or
	// Timeout when that is shorter).
	ProbeBudget time.Duration
	// Getenv reads the owner-credential variables; nil means os.Getenv.
	Getenv func(string) string
	// Now is the clock for expiry; nil means time.Now.
	Now func() time.Time
	// DeferProbe skips the resource server's word on the token kind: the
	// caller runs Connection.CheckKind itself (concurrently with serving,
	// holding data until it returns). The guard still checks before the
	// first read either way.
	DeferProbe bool
}

// Connection is a cached scoped credential ready to serve: the resource
// server client behind the owner guard.
type Connection struct {
	// RS is the guarded client every tool read must go through.
	RS         *Guard
	Root       Root
	Cache      Cache
	Credential *Credential
	// ProviderURL is the normalised provider URL.
	ProviderURL string

	log    *slog.Logger
	budget time.Duration
}

// Connect applies every rule a process serving a grant follows before it
// serves, in the anchor adapter's order: the provider URL must be usable
// (no_provider_url, invalid_provider_url), no owner credential may be in the
// environment (owner_token_refused), the cache must hold a usable scoped
// credential (not_connected, credential_invalid, credential_expired, or
// owner_token_refused for owner metadata), and the resource server must not
// report the token as an owner token (owner_token_refused,
// credential_rejected). Those failures are *Error values.
//
// When the resource server cannot be asked within the probe budget, Connect
// logs a warning and succeeds: the guard then checks before the first read.
// It also warns when the bearer would travel over plain http to a host that
// is not loopback. It returns ctx's error if ctx ends first.
func Connect(ctx context.Context, o ConnectOptions) (*Connection, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	getenv, now := o.Getenv, o.Now
	if getenv == nil {
		getenv = os.Getenv
	}
	if now == nil {
		now = time.Now
	}
	root := FindRoot(o.CacheRoot)
	cache, err := Open(root.Dir, o.ProviderURL)
	if err != nil {
		return nil, err
	}
	if err := CheckOwnerEnv(getenv); err != nil {
		return nil, err
	}
	log.Debug("credential cache", "root", root.Dir, "rule", root.From, "file", cache.File)
	cred, err := cache.Load(now())
	if err != nil {
		return nil, err
	}
	holder := NewHolder(cache, cred)
	client, err := rs.New(rs.Options{
		BaseURL:      cache.ProviderURL,
		Token:        holder.Token,
		Timeout:      o.Timeout,
		MaxBodyBytes: o.MaxBodyBytes,
		Logger:       log,
	})
	if err != nil {
		return nil, err
	}
	guard := NewGuard(client, holder, log)
	budget := o.ProbeBudget
	if budget <= 0 {
		budget = DefaultProbeBudget
		if o.Timeout > 0 {
			budget = min(o.Timeout, budget)
		}
	}
	if Cleartext(cache.ProviderURL) {
		log.Warn("the provider URL uses plain http to a non-loopback host: the bearer token travels unencrypted",
			"provider_url", cache.ProviderURL)
	}
	conn := &Connection{RS: guard, Root: root, Cache: cache, Credential: cred, ProviderURL: cache.ProviderURL, log: log, budget: budget}
	if !o.DeferProbe {
		if err := conn.CheckKind(ctx); err != nil {
			return nil, err
		}
	}
	return conn, nil
}

// CheckKind asks the resource server, within the probe budget, whether the
// cached token is an owner token. It returns an *Error for an owner token
// (owner_token_refused) or a token the RS refuses (credential_rejected),
// ctx's error if ctx ends first, and nil otherwise: when the RS cannot be
// asked it logs a warning, and the guard checks before the first read.
func (c *Connection) CheckKind(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, c.budget)
	err := c.RS.Probe(pctx)
	cancel()
	if errors.As(err, new(*Error)) {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("check token kind: %w", context.Cause(ctx))
	}
	if err != nil {
		c.log.Warn("could not confirm with the resource server that the token is not an owner token; every tool call checks first",
			"provider_url", c.ProviderURL, "error", err)
	}
	return nil
}

// Cleartext reports an http:// URL whose host is not a loopback address: a
// bearer sent there travels unencrypted.
func Cleartext(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "http" {
		return false
	}
	return !loopback.Host(u.Hostname())
}
