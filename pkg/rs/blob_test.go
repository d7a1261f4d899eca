package rs_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
)

// A blob's bytes are its answer: no UTF-8 repair, no JSON checks, the
// per-call bound honoured before the body is read, and bytes that hold the
// bearer refused rather than altered.
func TestBlobBodies(t *testing.T) {
	path := rs.Path("v1", "blobs", "blob_1")
	raw := []byte("\x89PNG\r\n\x1a\n\xff\xfe{\"not\":json")
	for _, tc := range []struct {
		name  string
		h     http.HandlerFunc
		limit int64
		check func(t *testing.T, resp *rs.Response, err error)
	}{
		{"raw bytes kept", answer(200, raw, "Content-Type", "image/png"), 0, func(t *testing.T, resp *rs.Response, err error) {
			if err != nil || string(resp.Body) != string(raw) || resp.ContentType() != "image/png" {
				t.Errorf("%v %+v", err, resp)
			}
		}},
		{"a JSON-looking blob is not an envelope", answer(200, []byte(`[1,2]`), "Content-Type", "application/json"), 0, func(t *testing.T, resp *rs.Response, err error) {
			if err != nil || string(resp.Body) != "[1,2]" {
				t.Errorf("%v", err)
			}
		}},
		{"over the per-call bound, size from Content-Length", answer(200, make([]byte, 2048), "Content-Type", "application/zip"), 1024, func(t *testing.T, _ *rs.Response, err error) {
			var te *rs.TransportError
			if !errors.As(err, &te) || te.Code != rs.CodeTooLarge || te.Limit != 1024 || te.Size != 2048 {
				t.Errorf("%#v", err)
			}
		}},
		{"bearer inside the bytes", answer(200, []byte("x "+url.QueryEscape(hostileToken)+" y"), "Content-Type", "text/plain"), 0, func(t *testing.T, _ *rs.Response, err error) {
			var te *rs.TransportError
			if !errors.As(err, &te) || te.Code != rs.CodeInvalidResponse {
				t.Errorf("%v", err)
			}
		}},
		{"errors are still JSON envelopes", answer(404, []byte(`{"error":{"code":"blob_not_found","message":"Blob not found"}}`)), 0, func(t *testing.T, _ *rs.Response, err error) {
			var re *rs.Error
			if !errors.As(err, &re) || re.Code != "blob_not_found" || re.Status != 404 {
				t.Errorf("%v", err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := hostile(t, tc.h, nil)
			ctx := context.Background()
			if tc.limit > 0 {
				ctx = rs.WithBodyLimit(ctx, tc.limit)
			}
			resp, err := c.Get(ctx, path, nil)
			tc.check(t, resp, err)
		})
	}
	// The bound never raises the client's own cap.
	c := hostile(t, answer(200, make([]byte, 4096), "Content-Type", "application/zip"), func(o *rs.Options) { o.MaxBodyBytes = 1000 })
	_, err := c.Get(rs.WithBodyLimit(context.Background(), 1<<20), path, nil)
	var te *rs.TransportError
	if !errors.As(err, &te) || te.Limit != 1000 {
		t.Errorf("a larger per-call bound raised the cap: %v", err)
	}
	if rs.RouteOf(path) != rs.RouteBlob || rs.RouteBlob.String() != "/v1/blobs/{blob_id}" {
		t.Errorf("route %v", rs.RouteOf(path))
	}
}
