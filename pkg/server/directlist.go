package server

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
)

// Direct answers tools/list too: the list never changes while a server
// lives, so its wire form is encoded once per form (before and at
// cacheRevision) and reused. The request still runs through the receiving
// middleware; only a result the middleware handed back unchanged is
// answered from the stored bytes, anything else is encoded as the SDK
// encodes it.

// listForms holds the stored wire forms of a server's tools/list result.
type listForms struct {
	once sync.Once
	// old is the result at a revision before cacheRevision (the SDK's
	// encoding of uncached{result}); current is the result of a stateless
	// request (resultType and the server's identity added, as the SDK adds
	// them).
	old, current []byte
	err          error
}

// ListTools runs the tools/list req (Params set, nothing in them but
// _meta) through the receiving middleware and returns the result's wire
// form, as the SDK would put it in the response. The error is a
// JSON-RPC-level failure, as the SDK would send it.
func (d *Direct) ListTools(ctx context.Context, req *mcp.ListToolsRequest) ([]byte, error) {
	res, err := d.handle(ctx, "tools/list", req)
	if err != nil {
		return nil, err
	}
	if res == nil {
		// What the SDK sends for a nil result from its middleware.
		return []byte("null"), nil
	}
	_, stateless := req.Params.Meta[mcp.MetaKeyProtocolVersion]
	u, wrapped := res.(uncached)
	if wrapped {
		res = u.Result
	}
	if d.unchangedList(ctx, req, res) {
		f := d.listForms()
		switch {
		case f.err != nil:
		case wrapped && !stateless:
			return f.old, nil
		case !wrapped && stateless:
			return f.current, nil
		}
	}
	if wrapped {
		res = u
	}
	if stateless {
		annotateResult(res, d.impl)
	}
	return jsonw.MarshalNoEscape(res)
}

// listTools is what the SDK's tools/list does inside the middleware for a
// request without a cursor: every tool, ordered by name, and the cache
// fields the server's options set.
func (d *Direct) listTools(ctx context.Context, req mcp.Request) *mcp.ListToolsResult {
	res := &mcp.ListToolsResult{Tools: slices.Clone(d.tools)}
	setCacheable(ctx, req, &res.Cacheable)
	if res.CacheScope == "" {
		res.CacheScope = "public"
	}
	return res
}

// unchangedList reports whether res is a list result exactly as listTools
// made it, so that its stored wire form is its encoding.
func (d *Direct) unchangedList(ctx context.Context, req mcp.Request, res mcp.Result) bool {
	l, ok := res.(*mcp.ListToolsResult)
	if !ok || l == nil || l.Meta != nil || l.NextCursor != "" || l.ResultType != "" || !slices.Equal(l.Tools, d.tools) {
		return false
	}
	return l.Cacheable == d.listTools(ctx, req).Cacheable
}

func (d *Direct) listForms() *listForms {
	f := &d.lists
	f.once.Do(func() {
		ctx := context.Background()
		req := &mcp.ListToolsRequest{Params: &mcp.ListToolsParams{}}
		if f.old, f.err = jsonw.MarshalNoEscape(uncached{d.listTools(ctx, req)}); f.err != nil {
			return
		}
		cur := d.listTools(ctx, req)
		annotateResult(cur, d.impl)
		f.current, f.err = jsonw.MarshalNoEscape(cur)
	})
	return f
}

// annotateResult adds to res what the SDK adds to every result of a
// stateless request after the middleware: resultType "complete" on results
// that have the field, and the server's identity in _meta unless the
// result names one.
func annotateResult(res mcp.Result, impl *mcp.Implementation) {
	if v := reflect.ValueOf(res); v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().Kind() == reflect.Struct {
		// The SDK sets the field on the results that embed its
		// completeResultWithType, and on no others.
		t := v.Elem().Type()
		if f, ok := t.FieldByName("ResultType"); ok && len(f.Index) == 2 && f.Type.Kind() == reflect.String &&
			t.Field(f.Index[0]).Type.Name() == "completeResultWithType" {
			if fv := v.Elem().FieldByIndex(f.Index); fv.CanSet() {
				fv.SetString("complete")
			}
		}
	}
	m := res.GetMeta()
	if _, ok := m[mcp.MetaKeyServerInfo]; ok {
		return
	}
	m = maps.Clone(m)
	if m == nil {
		m = map[string]any{}
	}
	m[mcp.MetaKeyServerInfo] = impl
	res.SetMeta(m)
}
