package rs_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
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

// spellBlob spells tok as the fuzz choices say, each byte one of: as it
// is, a JSON \u escape, a percent escape (either case), a percent escape
// whose % is \u0025, \/ for a slash.
func spellBlob(tok string, choice []byte) string {
	var b strings.Builder
	for i := 0; i < len(tok); i++ {
		c, hex := tok[i], strconv.FormatUint(uint64(tok[i])|0x100, 16)[1:]
		pick := byte(0)
		if len(choice) > 0 {
			pick = choice[i%len(choice)] % 6
		}
		switch {
		case pick == 1:
			b.WriteString(`\u00` + hex)
		case pick == 2:
			b.WriteString("%" + hex)
		case pick == 3:
			b.WriteString("%" + strings.ToUpper(hex))
		case pick == 4:
			b.WriteString(`\u0025` + hex)
		case pick == 5 && c == '/':
			b.WriteString(`\/`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// blobPlaces are where an answer can carry a spelled token: the bytes of a
// blob of each kind (text is shown, JSON decoded by its reader, anything
// else sent base64 by resources/read, which the host decodes), and
// the Content-Type's parameters as a quoted-string, quoted-pairs, and RFC
// 2231 values whole and continued.
var blobPlaces = []struct {
	name  string
	serve func(spelled, tok string) (contentType, body string)
}{
	{"text/plain bytes", func(s, _ string) (string, string) { return "text/plain; charset=utf-8", "you sent " + s + "\n" }},
	{"application/json bytes", func(s, _ string) (string, string) { return "application/json", `{"echo":"` + s + `"}` }},
	{"octet-stream bytes", func(s, _ string) (string, string) { return "application/octet-stream", "\x00\xff " + s + " \x01" }},
	{"image/png bytes", func(s, _ string) (string, string) {
		return "image/png", "\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR " + s
	}},
	{"quoted-string parameter", func(s, _ string) (string, string) { return `text/plain; note="` + s + `"`, "x" }},
	{"quoted-pairs parameter", func(_, tok string) (string, string) {
		var b strings.Builder
		for i := 0; i < len(tok); i++ {
			if i%2 == 0 {
				b.WriteByte('\\')
			}
			b.WriteByte(tok[i])
		}
		return `text/plain; note="` + b.String() + `"`, "x"
	}},
	{"RFC 2231 parameter", func(_, tok string) (string, string) {
		return "text/plain; note*=utf-8''" + spellBlob(tok, []byte{2, 3}), "x"
	}},
	{"RFC 2231 continuation", func(_, tok string) (string, string) {
		h := len(tok) / 2
		return "text/plain; note*0*=utf-8''" + spellBlob(tok[:h], []byte{2}) + "; note*1*=" + spellBlob(tok[h:], []byte{3}), "x"
	}},
}

// Whatever the spelling and wherever it sits, a blob answer that carries
// the bearer is rs_invalid_response; other headers that carry it are
// dropped; the same answer with another token passes.
func FuzzBlobBearerSpellings(f *testing.F) {
	for i := range blobPlaces {
		for _, choice := range [][]byte{{0}, {1}, {2}, {3}, {4}, {5}, {1, 2, 5, 4, 3, 0}} {
			f.Add(uint8(i), hostileToken, choice)
		}
	}
	f.Add(uint8(1), "ab+cd=EF~12/x", []byte{1, 3})
	var current atomic.Pointer[[2]string] // Content-Type and body
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := current.Load()
		w.Header()["Content-Type"] = []string{c[0]}
		_, _ = w.Write([]byte(c[1]))
	}))
	f.Cleanup(srv.Close)
	path := rs.Path("v1", "blobs", "blob_1")
	f.Fuzz(func(t *testing.T, place uint8, tok string, choice []byte) {
		if !bearerLike(tok) {
			return
		}
		p := blobPlaces[int(place)%len(blobPlaces)]
		ct, body := p.serve(spellBlob(tok, choice), tok)
		current.Store(&[2]string{ct, body})
		for _, sent := range []string{tok, tok + "Z"} {
			c, err := rs.New(rs.Options{BaseURL: srv.URL, Token: func() string { return sent }})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Get(context.Background(), path, nil)
			c.CloseIdleConnections()
			var te *rs.TransportError
			switch {
			case sent == tok && (!errors.As(err, &te) || te.Code != rs.CodeInvalidResponse):
				t.Fatalf("%s %q: Get = %+v, %v; want %s", p.name, ct+" | "+body, resp, err, rs.CodeInvalidResponse)
			case sent == tok && strings.Contains(err.Error(), tok):
				t.Fatalf("the error repeats the token: %v", err)
			case sent != tok && (err != nil || string(resp.Body) != body || resp.Header.Get("Content-Type") != ct):
				t.Fatalf("%s with another token: %+v, %v", p.name, resp, err)
			}
		}
	})
}

// Headers of a blob answer that carry the bearer are dropped; the blob,
// whose Content-Type and bytes do not, is passed on.
func TestBlobOtherHeadersSpellingTheBearer(t *testing.T) {
	c := hostile(t, answer(200, []byte("%PDF-1.4"), "Content-Type", "application/pdf",
		"Content-Disposition", `attachment; filename="`+hostileToken+`.pdf"`, "Etag", `"`+spellBlob(hostileToken, []byte{1})+`"`,
		"X-Echo", spellBlob(hostileToken, []byte{2})), nil)
	resp, err := c.Get(context.Background(), rs.Path("v1", "blobs", "blob_1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"Content-Disposition", "Etag", "X-Echo"} {
		if v := resp.Header.Values(h); v != nil {
			t.Errorf("%s kept: %q", h, v)
		}
	}
	if resp.ContentType() != "application/pdf" || string(resp.Body) != "%PDF-1.4" {
		t.Errorf("the blob: %s %q", resp.ContentType(), resp.Body)
	}
}

// bearerLike reports whether tok is made of bearer-token characters
// (RFC 6750 b64token) and is between 8 and 200 bytes long.
func bearerLike(tok string) bool {
	if len(tok) < 8 || len(tok) > 200 {
		return false
	}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~+/=", c) >= 0) {
			return false
		}
	}
	return true
}
