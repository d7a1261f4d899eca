// Package credential reads the grant-scoped client credential that
// `pdpp connect` caches, refuses owner credentials, and keeps the token used
// for resource-server calls current when the cache changes.
//
// # Where the cache lives
//
// The cache file for a provider is <root>/clients/<host>.json, where <host> is
// the provider URL's host and port with characters outside [A-Za-z0-9.-]
// replaced by '_' (see HostKey). The root is the first of:
//
//  1. --cache-root or PDPP_CACHE_ROOT, when set (a leading "~/" is the
//     home directory: hosts pass arguments without a shell to expand it);
//  2. ./.pdpp, when that directory exists in the working directory (where
//     `pdpp connect` writes by default);
//  3. $HOME/.pdpp.
//
// Desktop MCP hosts start servers in arbitrary directories, so a credential
// cached in a project folder is found only with rule 1 or 3.
//
// # What is refused
//
// Owner credentials are never used: not when PDPP_OWNER_TOKEN or
// PDPP_OWNER_SESSION_COOKIE is set (CheckOwnerEnv), not when the cache marks
// the credential as an owner one (Load), and not when the resource server says
// so (Guard). There is no fallback to any other credential.
package credential

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonkeys"
)

// Root is the directory holding the credential cache and the rule that chose it.
type Root struct {
	Dir string
	// From names the rule, for diagnostics: "explicit" (the caller named
	// the root), "./.pdpp" or "$HOME/.pdpp".
	From string
}

// Rule names reported in Root.From.
const (
	RootExplicit = "explicit"
	RootWorkDir  = "./.pdpp"
	RootHome     = "$HOME/.pdpp"
)

// FindRoot applies the search order of the package documentation. explicit is
// the --cache-root/PDPP_CACHE_ROOT value ("" when unset).
func FindRoot(explicit string) Root {
	wd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	return findRoot(explicit, wd, home)
}

func findRoot(explicit, wd, home string) Root {
	abs := func(p string) string {
		if filepath.IsAbs(p) || wd == "" {
			return filepath.Clean(p)
		}
		return filepath.Join(wd, p)
	}
	if explicit != "" {
		return Root{Dir: abs(expandHome(explicit, home)), From: RootExplicit}
	}
	local := abs(".pdpp")
	if fi, err := os.Stat(local); err == nil && fi.IsDir() {
		return Root{Dir: local, From: RootWorkDir}
	}
	if home == "" {
		// Without a home directory the working directory is the only candidate
		// left; the not_connected message names the path that was tried.
		return Root{Dir: local, From: RootWorkDir}
	}
	return Root{Dir: filepath.Join(home, ".pdpp"), From: RootHome}
}

// expandHome replaces a leading "~" or "~/" with home. Hosts' JSON and TOML
// configurations pass arguments and environment values without a shell,
// so a "~/.pdpp" written there arrives literally. "~user" forms are left
// alone (they name another account), and so is everything when home is
// unknown.
func expandHome(p, home string) string {
	if home == "" || !strings.HasPrefix(p, "~") {
		return p
	}
	rest := p[1:]
	if rest == "" {
		return home
	}
	if rest[0] == '/' || rest[0] == filepath.Separator {
		return filepath.Join(home, rest[1:])
	}
	return p
}

// Cache is the credential cache entry of one provider.
type Cache struct {
	// ProviderURL is the normalised provider URL.
	ProviderURL string
	// File is <root>/clients/<HostKey>.json.
	File string
}

// Open locates the cache entry for a provider URL under root. It fails with
// no_provider_url or invalid_provider_url.
func Open(root, providerURL string) (Cache, error) {
	u, err := NormalizeProviderURL(providerURL)
	if err != nil {
		return Cache{}, err
	}
	return Cache{ProviderURL: u, File: filepath.Join(root, "clients", HostKey(u)+".json")}, nil
}

// maxCacheFile bounds what Load reads; `pdpp connect` writes well under 4 KiB.
const maxCacheFile = 1 << 20

// Load reads and validates the cached credential as of now. Failures are
// *Error values (not_connected, credential_invalid, credential_expired,
// owner_token_refused), except an unreadable file (permissions, I/O), which
// is returned wrapped as is.
func (c Cache) Load(now time.Time) (*Credential, error) {
	// O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
	// writer, and start-up would hang. Only a regular file is read.
	f, err := os.OpenFile(c.File, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNotConnected(c.ProviderURL, c.File)
	}
	if err != nil {
		return nil, fmt.Errorf("read credential cache: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, fmt.Errorf("read credential cache: %w", err)
	case fi.IsDir():
		return nil, errInvalid(c.ProviderURL, c.File, "a directory, not a file", nil)
	case !fi.Mode().IsRegular():
		return nil, errInvalid(c.ProviderURL, c.File, "not a regular file ("+fileKind(fi.Mode())+")", nil)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxCacheFile+1))
	if err != nil {
		return nil, fmt.Errorf("read credential cache %s: %w", c.File, err)
	}
	if len(b) > maxCacheFile {
		return nil, errInvalid(c.ProviderURL, c.File, "larger than 1 MiB", nil)
	}
	return c.parse(b, now)
}

// fileKind names a non-regular file type for the error message.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// ownerKeys are the metadata keys that mark an owner credential.
var ownerKeys = []string{"pdpp_token_kind", "token_kind", "kind", "role"}

func (c Cache) parse(b []byte, now time.Time) (*Credential, error) {
	invalid := func(what string) error { return errInvalid(c.ProviderURL, c.File, what, nil) }
	if !gjson.ValidBytes(b) {
		return nil, invalid("not valid JSON")
	}
	doc := gjson.ParseBytes(b)
	if !doc.IsObject() {
		return nil, invalid("not a JSON object")
	}
	// Owner metadata is checked first: an owner credential is refused whatever
	// else is wrong with it, and the fix differs from an expired grant. Every
	// occurrence of a key counts, credential included, so a key written twice
	// cannot hide the marker from this check.
	type marked struct {
		r      gjson.Result
		prefix string
	}
	var objs []marked
	doc.ForEach(func(k, v gjson.Result) bool {
		if k.Str == "credential" {
			objs = append(objs, marked{v, "credential."})
		}
		return true
	})
	owner := ""
	for _, obj := range append(objs, marked{doc, ""}) {
		obj.r.ForEach(func(k, v gjson.Result) bool {
			owner = ownerMarker(k.Str, v, obj.prefix)
			return owner == ""
		})
		if owner != "" {
			break
		}
	}
	if owner != "" {
		return nil, errOwnerMetadata(c.ProviderURL, c.File, owner)
	}
	// Readers disagree on which of two values of one key counts (this one
	// would take the first), so a file that repeats a key it is read by is
	// not used at all.
	var cred gjson.Result
	if dup, repeated := jsonkeys.Each(doc, func(k string, v gjson.Result) {
		if k == "credential" {
			cred = v
		}
	}); repeated {
		return nil, invalid(fmt.Sprintf("the key %s appears twice", quoteKey(dup)))
	}
	if !cred.IsObject() {
		return nil, invalid("no credential object")
	}
	if dup, repeated := jsonkeys.Each(cred, nil); repeated {
		return nil, invalid(fmt.Sprintf("the key credential.%s appears twice", quoteKey(dup)))
	}
	tok := cred.Get("access_token")
	switch {
	case !tok.Exists() || tok.Type == gjson.Null || tok.Type == gjson.String && tok.Str == "":
		return nil, invalid("no credential.access_token")
	case tok.Type != gjson.String:
		return nil, invalid("credential.access_token is not a string")
	case strings.IndexFunc(tok.Str, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0:
		return nil, invalid("credential.access_token contains spaces or control characters")
	}
	tt := cred.Get("token_type")
	if tt.Exists() && tt.Type != gjson.Null {
		if tt.Type != gjson.String || tt.Str != "" && !strings.EqualFold(tt.Str, "bearer") {
			return nil, invalid(fmt.Sprintf("credential.token_type %s is not Bearer", tt.Raw))
		}
	}
	out := &Credential{
		ProviderURL: c.ProviderURL,
		File:        c.File,
		TokenType:   "Bearer",
		Scope:       firstString(cred.Get("scope"), doc.Get("scope")),
		GrantID:     firstString(cred.Get("grant_id"), doc.Get("grant_id")),
		token:       tok.Str,
	}
	exp := cred.Get("expires_at")
	switch {
	case !exp.Exists() || exp.Type == gjson.Null:
	case exp.Type != gjson.String:
		return nil, invalid("credential.expires_at is not a string")
	default:
		t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(exp.Str))
		if err != nil {
			return nil, errInvalid(c.ProviderURL, c.File,
				fmt.Sprintf("credential.expires_at %q is not an RFC 3339 time", exp.Str), err)
		}
		if !t.After(now) {
			return nil, errExpired(c.ProviderURL, c.File, exp.Str)
		}
		out.ExpiresAt = t
	}
	return out, nil
}

// ownerMarker is the name of key, under prefix, when it is an owner
// metadata key whose value says owner; "" otherwise.
func ownerMarker(key string, v gjson.Result, prefix string) string {
	if slices.Contains(ownerKeys, key) && v.Type == gjson.String && strings.EqualFold(strings.TrimSpace(v.Str), "owner") {
		return prefix + key
	}
	return ""
}

func firstString(rs ...gjson.Result) string {
	for _, r := range rs {
		if r.Type == gjson.String && r.Str != "" {
			return r.Str
		}
	}
	return ""
}

// Credential is a usable grant-scoped client credential. Formatting it with
// fmt or slog never shows the token.
type Credential struct {
	ProviderURL string
	File        string
	TokenType   string
	Scope       string
	GrantID     string
	// ExpiresAt is zero when the credential does not expire.
	ExpiresAt time.Time
	token     string
}

// Token returns the bearer token. Call it only to build the Authorization
// header.
func (c *Credential) Token() string { return c.token }

// String describes the credential without its token.
func (c Credential) String() string {
	s := "scoped credential for " + c.ProviderURL + " at " + c.File
	if c.GrantID != "" {
		s += " (grant " + c.GrantID + ")"
	}
	return s
}

// Format makes every fmt verb, %#v and %+v included, print String, so a stray
// debug print cannot leak the token.
func (c Credential) Format(f fmt.State, _ rune) { io.WriteString(f, c.String()) }

// LogValue keeps the token out of slog output.
func (c Credential) LogValue() slog.Value {
	attrs := []slog.Attr{slog.String("provider_url", c.ProviderURL), slog.String("file", c.File)}
	if c.GrantID != "" {
		attrs = append(attrs, slog.String("grant_id", c.GrantID))
	}
	if !c.ExpiresAt.IsZero() {
		attrs = append(attrs, slog.Time("expires_at", c.ExpiresAt))
	}
	return slog.GroupValue(attrs...)
}
