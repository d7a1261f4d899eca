package fanout_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/credential"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// cachedProvider is one --provider-url of a stdio server: a double with a
// credential cached for it, connected as the command connects it.
type cachedProvider struct {
	srv   *pdpptest.Server
	root  string
	conn  string
	token string
	cache credential.Cache
}

func newCachedProvider(t *testing.T, root, conn string) *cachedProvider {
	t.Helper()
	p := &cachedProvider{srv: demoServer(t), root: root, conn: conn}
	c, err := credential.Open(root, p.srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	p.cache = c
	p.reconnect(t)
	return p
}

// reconnect issues a new grant token and caches it, as `pdpp connect` would.
func (p *cachedProvider) reconnect(t *testing.T) {
	t.Helper()
	p.token = p.srv.IssueChild(pdpptest.PackageChild{ConnectionID: p.conn}).Token
	if err := os.MkdirAll(filepath.Dir(p.cache.File), 0o700); err != nil {
		t.Fatal(err)
	}
	body := `{"provider_url":"` + p.cache.ProviderURL + `","scope":"pdpp:read","client":{"client_id":"pdpp_cli"},` +
		`"credential":{"access_token":"` + p.token + `","token_type":"Bearer"}}`
	if err := os.WriteFile(p.cache.File, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (p *cachedProvider) member(t *testing.T) fanout.Member {
	t.Helper()
	c, err := credential.Connect(context.Background(), credential.ConnectOptions{ProviderURL: p.srv.URL(), CacheRoot: p.root,
		Timeout: 10 * time.Second, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	return fanout.Member{GrantID: p.srv.URL(), RS: c.RS}
}

// Over stdio with several providers, a provider whose token is refused is
// asked again on the next call, as one provider alone is: once its cache
// holds a new token, its hits come back.
func TestRefusedProviderRecoversAfterReconnect(t *testing.T) {
	root := t.TempDir()
	personal := newCachedProvider(t, root, dataset.DemoPersonalMailConnection)
	work := newCachedProvider(t, root, dataset.DemoWorkMailConnection)
	ms := fanout.Discover(context.Background(), []fanout.Member{personal.member(t), work.member(t)}, 10*time.Second)
	c, err := fanout.New(fanout.Options{Members: ms, ChildTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	q := rs.Query{{Key: "q", Value: "the"}, {Key: "limit", Value: "100"}}
	sources := func() string {
		doc := get(t, c, searchPath, q)
		var conns []string
		for _, k := range keys(doc) {
			conn, _, _ := strings.Cut(k, "/")
			if len(conns) == 0 || conns[len(conns)-1] != conn {
				conns = append(conns, conn)
			}
		}
		return strings.Join(conns, ",") + " warnings=" + doc.Get("meta.warnings.#.code").Raw
	}
	if got := sources(); !strings.Contains(got, dataset.DemoWorkMailConnection) || !strings.Contains(got, dataset.DemoPersonalMailConnection) {
		t.Fatalf("before: %s", got)
	}
	work.srv.RevokeToken(work.token)
	if got := sources(); strings.Contains(got, dataset.DemoWorkMailConnection) || !strings.Contains(got, "source_unavailable") {
		t.Fatalf("with the work token refused: %s", got)
	}
	work.reconnect(t)
	if got := sources(); !strings.Contains(got, dataset.DemoWorkMailConnection) {
		t.Errorf("after reconnecting the work provider its hits are still missing: %s\nmembers %+v", got, c.Members())
	}
}
