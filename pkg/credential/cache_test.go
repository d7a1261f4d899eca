package credential

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const testToken = "4f1c2a9e7b3d5f6a8c0e1b2d3f4a5c6e7f8091a2b3c4d5e6f708192a3b4c5d6e"

func TestFindRoot(t *testing.T) {
	wd := t.TempDir()
	home := t.TempDir()
	withLocal := t.TempDir()
	if err := os.Mkdir(filepath.Join(withLocal, ".pdpp"), 0o700); err != nil {
		t.Fatal(err)
	}
	fileLocal := t.TempDir()
	if err := os.WriteFile(filepath.Join(fileLocal, ".pdpp"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, explicit, wd, home string
		want                     Root
	}{
		{"explicit absolute wins over ./.pdpp", "/srv/pdpp", withLocal, home, Root{"/srv/pdpp", RootExplicit}},
		{"explicit relative is made absolute", "cache", wd, home, Root{filepath.Join(wd, "cache"), RootExplicit}},
		{"./.pdpp when it exists", "", withLocal, home, Root{filepath.Join(withLocal, ".pdpp"), RootWorkDir}},
		{"./.pdpp that is a file is skipped", "", fileLocal, home, Root{filepath.Join(home, ".pdpp"), RootHome}},
		{"home otherwise", "", wd, home, Root{filepath.Join(home, ".pdpp"), RootHome}},
		{"no home falls back to ./.pdpp", "", wd, "", Root{filepath.Join(wd, ".pdpp"), RootWorkDir}},
		{"explicit ~/ is the home directory", "~/.pdpp", wd, home, Root{filepath.Join(home, ".pdpp"), RootExplicit}},
		{"explicit ~ alone is the home directory", "~", wd, home, Root{home, RootExplicit}},
		{"explicit ~/ deeper", "~/a/b/", wd, home, Root{filepath.Join(home, "a", "b"), RootExplicit}},
		{"~user is not expanded", "~other/.pdpp", wd, home, Root{filepath.Join(wd, "~other", ".pdpp"), RootExplicit}},
		{"~ inside a path is not expanded", "a/~/b", wd, home, Root{filepath.Join(wd, "a", "~", "b"), RootExplicit}},
		{"~ without a home stays", "~/.pdpp", wd, "", Root{filepath.Join(wd, "~", ".pdpp"), RootExplicit}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := findRoot(tt.explicit, tt.wd, tt.home); got != tt.want {
				t.Errorf("findRoot = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestOpen(t *testing.T) {
	c, err := Open("/r", "http://LOCALHOST:7662/pdpp/")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Cache{ProviderURL: "http://localhost:7662/pdpp", File: "/r/clients/localhost_7662.json"}); c != want {
		t.Errorf("Open = %+v, want %+v", c, want)
	}
	if _, err := Open("/r", ""); !hasCode(err, CodeNoProviderURL) {
		t.Errorf("Open with no URL: %v", err)
	}
}

func hasCode(err error, code string) bool {
	var ce *Error
	return errors.As(err, &ce) && ce.Code == code
}

// writeCache writes body as the cache file of provider under a fresh root.
func writeCache(t *testing.T, provider, body string) Cache {
	t.Helper()
	c, err := Open(t.TempDir(), provider)
	if err != nil {
		t.Fatal(err)
	}
	if body == "" {
		return c
	}
	if err := os.MkdirAll(filepath.Dir(c.File), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.File, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

// cacheJSON is the file `pdpp connect` writes, with the credential object's
// members replaced by cred.
func cacheJSON(cred string) string {
	return `{"provider_url":"http://localhost:7662","authorization_server":"http://localhost:7662","scope":"pdpp:read",` +
		`"client":{"client_id":"pdpp_cli"},"credential":{` + cred + `},"created_at":"2026-05-01T00:00:00.000Z"}`
}

func TestLoad(t *testing.T) {
	const provider = "http://localhost:7662"
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	tok := `"access_token":"` + testToken + `"`
	for _, tt := range []struct {
		name     string
		body     string // "" means no file
		code     string // "" means success
		exit     int
		msg      string
		grant    string
		scope    string
		expires  time.Time
		noExpiry bool
	}{
		{name: "pdpp connect file", body: cacheJSON(tok + `,"token_type":"Bearer","expires_at":"2026-09-01T00:00:00.000Z","grant_id":"grt_1","scope":"pdpp:read"`),
			grant: "grt_1", scope: "pdpp:read", expires: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)},
		{name: "no expiry", body: cacheJSON(tok), scope: "pdpp:read", noExpiry: true},
		{name: "null expiry", body: cacheJSON(tok + `,"expires_at":null`), scope: "pdpp:read", noExpiry: true},
		{name: "offset expiry", body: cacheJSON(tok + `,"expires_at":"2026-06-01T14:00:01+02:00"`), scope: "pdpp:read",
			expires: time.Date(2026, 6, 1, 12, 0, 1, 0, time.UTC)},
		{name: "grant id from the top level", body: `{"grant_id":"grt_top","credential":{` + tok + `}}`, grant: "grt_top", noExpiry: true},
		{name: "lower-case token type", body: cacheJSON(tok + `,"token_type":"bearer"`), scope: "pdpp:read", noExpiry: true},

		{name: "missing file", code: CodeNotConnected, exit: 78,
			msg: "No scoped PDPP credential cached for http://localhost:7662 (looked for FILE). Run `pdpp connect http://localhost:7662` and try again."},
		{name: "expired", body: cacheJSON(tok + `,"expires_at":"2026-06-01T12:00:00Z"`), code: CodeExpired, exit: 78,
			msg: "Cached PDPP credential for http://localhost:7662 in FILE is expired (expires_at 2026-06-01T12:00:00Z). Run `pdpp connect http://localhost:7662` again."},
		{name: "unparseable expiry", body: cacheJSON(tok + `,"expires_at":"next tuesday"`), code: CodeInvalid, exit: 78,
			msg: "Cached PDPP credential for http://localhost:7662 is malformed (credential.expires_at \"next tuesday\" is not an RFC 3339 time in FILE); re-run `pdpp connect http://localhost:7662`."},
		{name: "numeric expiry", body: cacheJSON(tok + `,"expires_at":1780000000`), code: CodeInvalid, exit: 78, msg: "credential.expires_at is not a string"},
		{name: "not JSON", body: `{"credential": {`, code: CodeInvalid, exit: 78,
			msg: "Cached PDPP credential for http://localhost:7662 is malformed (not valid JSON in FILE); re-run `pdpp connect http://localhost:7662`."},
		{name: "empty file", body: " ", code: CodeInvalid, exit: 78, msg: "not valid JSON"},
		{name: "array", body: `[]`, code: CodeInvalid, exit: 78, msg: "not a JSON object"},
		{name: "no credential", body: `{"provider_url":"http://localhost:7662"}`, code: CodeInvalid, exit: 78, msg: "no credential object"},
		{name: "credential is a string", body: `{"credential":"abc"}`, code: CodeInvalid, exit: 78, msg: "no credential object"},
		{name: "no token", body: cacheJSON(`"token_type":"Bearer"`), code: CodeInvalid, exit: 78, msg: "no credential.access_token"},
		{name: "empty token", body: cacheJSON(`"access_token":""`), code: CodeInvalid, exit: 78, msg: "no credential.access_token"},
		{name: "null token", body: cacheJSON(`"access_token":null`), code: CodeInvalid, exit: 78, msg: "no credential.access_token"},
		{name: "numeric token", body: cacheJSON(`"access_token":42`), code: CodeInvalid, exit: 78, msg: "credential.access_token is not a string"},
		{name: "token with newline", body: cacheJSON(`"access_token":"abc\r\nX-Evil: 1"`), code: CodeInvalid, exit: 78, msg: "spaces or control characters"},
		{name: "DPoP token", body: cacheJSON(tok + `,"token_type":"DPoP"`), code: CodeInvalid, exit: 78, msg: `credential.token_type "DPoP" is not Bearer`},

		{name: "owner pdpp_token_kind", body: cacheJSON(tok + `,"pdpp_token_kind":"owner"`), code: CodeOwnerRefused, exit: 77,
			msg: "Refusing the cached PDPP credential for http://localhost:7662: FILE marks it as an owner credential (credential.pdpp_token_kind says owner), and the MCP adapter serves only grant-scoped client tokens. Run `pdpp connect http://localhost:7662` to cache a client grant."},
		{name: "owner token_kind", body: cacheJSON(tok + `,"token_kind":"Owner"`), code: CodeOwnerRefused, exit: 77, msg: "credential.token_kind says owner"},
		{name: "owner kind", body: cacheJSON(tok + `,"kind":" OWNER "`), code: CodeOwnerRefused, exit: 77, msg: "credential.kind says owner"},
		{name: "owner role", body: cacheJSON(tok + `,"role":"owner"`), code: CodeOwnerRefused, exit: 77, msg: "credential.role says owner"},
		{name: "owner at top level", body: `{"role":"owner","credential":{` + tok + `}}`, code: CodeOwnerRefused, exit: 77, msg: "(role says owner)"},
		{name: "owner beats expiry", body: cacheJSON(tok + `,"kind":"owner","expires_at":"2020-01-01T00:00:00Z"`), code: CodeOwnerRefused, exit: 77},
		{name: "owner hidden behind a first client kind", body: cacheJSON(tok + `,"token_kind":"client","token_kind":"owner"`), code: CodeOwnerRefused, exit: 77, msg: "credential.token_kind says owner"},
		{name: "owner escaped, second", body: cacheJSON(tok + `,"role":"client","r\u006fle":"owner"`), code: CodeOwnerRefused, exit: 77, msg: "credential.role says owner"},
		{name: "owner in a second credential", body: `{"credential":{` + tok + `},"credential":{` + tok + `,"kind":"owner"}}`, code: CodeOwnerRefused, exit: 77, msg: "credential.kind says owner"},
		{name: "owner at top level, second", body: `{"role":"client","credential":{` + tok + `},"role":"owner"}`, code: CodeOwnerRefused, exit: 77, msg: "(role says owner)"},
		{name: "token twice", body: cacheJSON(tok + `,"access_token":"other-token"`), code: CodeInvalid, exit: 78, msg: `the key credential."access_token" appears twice`},
		{name: "credential twice", body: `{"credential":{` + tok + `},"credential":{"access_token":"other-token"}}`, code: CodeInvalid, exit: 78, msg: `the key "credential" appears twice`},
		{name: "expiry twice, escaped", body: cacheJSON(tok + `,"expires_at":"2020-01-01T00:00:00Z","expires\u005fat":"2099-01-01T00:00:00Z"`), code: CodeInvalid, exit: 78, msg: `"expires_at" appears twice`},
		{name: "client kind twice is still one file read two ways", body: cacheJSON(tok + `,"token_kind":"client","token_kind":"client"`), code: CodeInvalid, exit: 78, msg: `"token_kind" appears twice`},
		{name: "repeats in other objects are not read", body: `{"client":{"client_id":"a","client_id":"b"},"credential":{` + tok + `}}`, noExpiry: true},
		{name: "client kind is fine", body: cacheJSON(tok + `,"pdpp_token_kind":"client"`), scope: "pdpp:read", noExpiry: true},
		{name: "owner as a non-string is not a marker", body: cacheJSON(tok + `,"role":{"owner":true}`), scope: "pdpp:read", noExpiry: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := writeCache(t, provider, tt.body)
			cred, err := c.Load(now)
			if tt.code != "" {
				var ce *Error
				if !errors.As(err, &ce) {
					t.Fatalf("Load error = %v, want *Error %s", err, tt.code)
				}
				if ce.Code != tt.code || ce.ErrorCode() != tt.code || ce.ExitCode() != tt.exit {
					t.Errorf("code %q exit %d, want %q %d", ce.Code, ce.ExitCode(), tt.code, tt.exit)
				}
				want := strings.ReplaceAll(tt.msg, "FILE", c.File)
				if !strings.Contains(ce.Error(), want) {
					t.Errorf("message:\n%s\nwant it to contain:\n%s", ce.Error(), want)
				}
				if strings.Contains(ce.Error(), testToken) {
					t.Errorf("message contains the token")
				}
				if ce.ProviderURL != provider || ce.File != c.File {
					t.Errorf("ProviderURL, File = %q, %q", ce.ProviderURL, ce.File)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if cred.Token() != testToken || cred.TokenType != "Bearer" || cred.ProviderURL != provider || cred.File != c.File {
				t.Errorf("credential = %+v (token ok: %v)", cred, cred.Token() == testToken)
			}
			if cred.GrantID != tt.grant || cred.Scope != tt.scope {
				t.Errorf("grant, scope = %q, %q; want %q, %q", cred.GrantID, cred.Scope, tt.grant, tt.scope)
			}
			if tt.noExpiry != cred.ExpiresAt.IsZero() || !tt.noExpiry && !cred.ExpiresAt.Equal(tt.expires) {
				t.Errorf("ExpiresAt = %v, want %v (none: %v)", cred.ExpiresAt, tt.expires, tt.noExpiry)
			}
		})
	}
}

func TestLoadUnreadable(t *testing.T) {
	c := writeCache(t, "http://localhost:7662", "")
	if err := os.MkdirAll(c.File, 0o700); err != nil { // a directory where the file should be
		t.Fatal(err)
	}
	if _, err := c.Load(time.Now()); !hasCode(err, CodeInvalid) {
		t.Errorf("directory: %v, want credential_invalid", err)
	}

	// A FIFO would block the open until a writer comes; it is refused at
	// once, as are sockets and devices.
	if haveFIFO {
		c = writeCache(t, "http://localhost:7663", "")
		if err := os.MkdirAll(filepath.Dir(c.File), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := mkfifo(c.File); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Load(time.Now()); !hasCode(err, CodeInvalid) || !strings.Contains(err.Error(), "not a regular file (a named pipe)") {
			t.Errorf("FIFO: %v, want credential_invalid", err)
		}
	}
	dev := Cache{ProviderURL: "http://localhost:7664", File: os.DevNull}
	if _, err := dev.Load(time.Now()); !hasCode(err, CodeInvalid) || !strings.Contains(err.Error(), "a device") {
		t.Errorf("device: %v, want credential_invalid", err)
	}

	c = writeCache(t, "http://localhost:7662", strings.Repeat(" ", maxCacheFile+1))
	if _, err := c.Load(time.Now()); !hasCode(err, CodeInvalid) || !strings.Contains(err.Error(), "larger than 1 MiB") {
		t.Errorf("huge file: %v", err)
	}

	if os.Geteuid() == 0 {
		return // root reads files whatever their mode
	}
	c = writeCache(t, "http://localhost:7662", cacheJSON(`"access_token":"`+testToken+`"`))
	if err := os.Chmod(c.File, 0); err != nil {
		t.Fatal(err)
	}
	_, err := c.Load(time.Now())
	var ce *Error
	if err == nil || errors.As(err, &ce) || !errors.Is(err, os.ErrPermission) {
		t.Errorf("unreadable file: %v, want a wrapped permission error", err)
	}
}

func TestCredentialNeverPrintsToken(t *testing.T) {
	cred := &Credential{ProviderURL: "http://localhost:7662", File: "/r/clients/localhost_7662.json", GrantID: "grt_1",
		ExpiresAt: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC), token: testToken}
	var b strings.Builder
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		fmt.Fprintf(&b, verb+"\n", cred)
		fmt.Fprintf(&b, verb+"\n", *cred)
	}
	slog.New(slog.NewTextHandler(&b, nil)).Info("x", "credential", cred, "value", *cred)
	slog.New(slog.NewJSONHandler(&b, nil)).Info("x", "credential", cred)
	if strings.Contains(b.String(), testToken) {
		t.Fatalf("token leaked:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "grt_1") || !strings.Contains(b.String(), "localhost_7662.json") {
		t.Errorf("description lacks grant or file:\n%s", b.String())
	}
}

func TestCheckOwnerEnv(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"PDPP_OWNER_TOKEN": ""}, false},
		{map[string]string{"PDPP_OWNER_TOKEN": "x"}, true},
		{map[string]string{"PDPP_OWNER_SESSION_COOKIE": "sid=1"}, true},
		{map[string]string{"PDPP_CLIENT_TOKEN": "x"}, false},
	} {
		err := CheckOwnerEnv(func(k string) string { return tt.env[k] })
		if got := err != nil; got != tt.want {
			t.Errorf("env %v: error %v, want refusal %v", tt.env, err, tt.want)
			continue
		}
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) || ce.ExitCode() != ExitNoPerm || !strings.HasPrefix(err.Error(), "Refusing to start: owner credentials (PDPP_OWNER_TOKEN / PDPP_OWNER_SESSION_COOKIE) are present") {
				t.Errorf("env %v: %v", tt.env, err)
			}
			if strings.Contains(err.Error(), "sid=1") {
				t.Errorf("message repeats the cookie")
			}
		}
	}
}
