package server

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

func readRequest(rev, uri string) *mcp.ReadResourceRequest {
	h := http.Header{}
	var meta mcp.Meta
	if rev != "" {
		h.Set("MCP-Protocol-Version", rev)
	}
	if rev >= cacheRevision {
		meta = mcp.Meta{mcp.MetaKeyProtocolVersion: rev, mcp.MetaKeyClientCapabilities: map[string]any{}}
	}
	return &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{Meta: meta, URI: uri}, Extra: &mcp.RequestExtra{Header: h}}
}

// TestDirectReadRunsReceivingMiddleware: a resources/read answered by
// Direct runs the server's middleware once, what the middleware changes
// reaches the answer, and a result the middleware replaced is not marked
// complete (the SDK marks only the result its own read made).
func TestDirectReadRunsReceivingMiddleware(t *testing.T) {
	c, d := newTestRS(t, rs.Options{})
	for _, replace := range []bool{false, true} {
		for _, rev := range []string{"2025-11-25", "2026-07-28"} {
			var runs atomic.Int32
			mark := func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					if method != "resources/read" {
						return next(ctx, method, req)
					}
					runs.Add(1)
					res, err := next(ctx, method, req)
					r, ok := res.(*mcp.ReadResourceResult)
					if !ok || err != nil {
						return res, err
					}
					if replace {
						r = &mcp.ReadResourceResult{Contents: r.Contents}
					}
					r.Contents = append(r.Contents, &mcp.ResourceContents{URI: "pdpp://marked", Text: "marked"})
					return r, nil
				}
			}
			_, direct := NewWithDirect(Options{RS: c, ProviderURL: d.URL(), Middleware: []mcp.Middleware{mark}})
			got, err := direct.ReadResource(context.Background(), readRequest(rev, "pdpp://stream/messages"))
			if err != nil {
				t.Fatal(err)
			}
			if n := runs.Load(); n != 1 {
				t.Fatalf("the middleware ran %d times, want 1", n)
			}
			s := string(got)
			if !strings.Contains(s, `"uri":"pdpp://marked"`) || !strings.Contains(s, `"uri":"pdpp://stream/messages"`) {
				t.Errorf("%s: the middleware's change is not in the answer:\n%.300s", rev, s)
			}
			stateless := rev >= cacheRevision
			if strings.Contains(s, `"resultType":"complete"`) != (stateless && !replace) || strings.Contains(s, "serverInfo") != stateless {
				t.Errorf("%s, replaced %v: wrong stateless fields in\n%.300s", rev, replace, s)
			}
		}
	}
}

// TestDirectReadGuardsPanics: a panic under a direct read is a JSON-RPC
// error, as on the SDK's path, because Direct runs the same guard.
func TestDirectReadGuardsPanics(t *testing.T) {
	boom := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) { panic("boom") }
	}
	_, direct := NewWithDirect(Options{Middleware: []mcp.Middleware{boom}})
	if _, err := direct.ReadResource(context.Background(), readRequest("", "pdpp://stream/messages")); err == nil || !strings.Contains(err.Error(), "inside pdpp-mcp") {
		t.Fatalf("got %v", err)
	}
}

// TestReadResultEncodingMatchesSDK holds the hand-written wire form of a
// read result to the SDK's encoding of it, at every revision's form, for
// text that encoding/json escapes, blobs, and _meta.
func TestReadResultEncodingMatchesSDK(t *testing.T) {
	_, d := NewWithDirect(Options{})
	texts := []string{"", "plain", `{"a":"<b>&amp;</b>"}`, "line\u2028sep\u2029x\x00\x1f\"\\\t", "bad \xff utf-8", strings.Repeat("é", 300)}
	var results []*mcp.ReadResourceResult
	for _, text := range texts {
		results = append(results,
			&mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "pdpp://stream/<x>&", MIMEType: "application/json", Text: text}}},
			&mcp.ReadResourceResult{Meta: mcp.Meta{mcp.MetaKeyServerInfo: d.impl}, Cacheable: mcp.Cacheable{TTLMs: 0, CacheScope: "private"},
				Contents: []*mcp.ResourceContents{{URI: "pdpp://blob/c/b", Text: text, Meta: mcp.Meta{"k": text}}, {URI: "u2", Blob: []byte(text)}}},
		)
	}
	results = append(results,
		&mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{}},
		&mcp.ReadResourceResult{Meta: mcp.Meta{"other": 1, mcp.MetaKeyServerInfo: d.impl}, Cacheable: mcp.Cacheable{TTLMs: 300000, CacheScope: "public"},
			Contents: []*mcp.ResourceContents{{URI: "u", Blob: []byte{}}, {URI: "v", Blob: []byte{0, 1, 2, 0xff}}}},
	)
	for i, r := range results {
		for _, cache := range []bool{true, false} {
			var want []byte
			var err error
			if cache {
				want, err = jsonw.MarshalNoEscape(r)
			} else {
				want, err = jsonw.MarshalNoEscape(uncached{r})
			}
			if err != nil {
				t.Fatal(err)
			}
			got, ok := d.appendReadResult(nil, r, cache)
			if !ok || string(got) != string(want) {
				t.Errorf("result %d, cache fields %v (hand-written: %v):\ngot  %s\nwant %s", i, cache, ok, got, want)
			}
		}
	}
}
