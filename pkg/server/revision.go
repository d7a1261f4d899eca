package server

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

// cacheRevision is the protocol revision that added ttlMs and cacheScope to
// list and read results.
const cacheRevision = "2026-07-28"

// revisionFields sends each revision only the result members it defines:
// the SDK fills ttlMs and cacheScope on list and read results whatever the
// session negotiated, and a strict client of an older revision rejects
// members its schema does not know.
func revisionFields(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || res == nil || tools.Protocol(req) >= cacheRevision {
			return res, err
		}
		if _, ok := res.(mcp.CacheableResult); !ok {
			return res, nil
		}
		return uncached{res}, nil
	}
}

// uncached is a result encoded without its cache-control members.
type uncached struct{ mcp.Result }

// cacheKeys are the members cacheRevision added to results.
var cacheKeys = map[string]bool{"ttlMs": true, "cacheScope": true}

func (u uncached) MarshalJSON() ([]byte, error) {
	raw, err := json.Marshal(u.Result)
	if err != nil {
		return nil, err
	}
	root := gjson.ParseBytes(raw)
	if !root.IsObject() {
		return raw, nil
	}
	var b bytes.Buffer
	b.Grow(len(raw))
	b.WriteByte('{')
	first := true
	root.ForEach(func(k, v gjson.Result) bool {
		if cacheKeys[k.Str] {
			return true
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(k.Raw)
		b.WriteByte(':')
		b.WriteString(v.Raw)
		return true
	})
	b.WriteByte('}')
	return b.Bytes(), nil
}
