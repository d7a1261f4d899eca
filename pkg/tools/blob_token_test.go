package tools_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

// blobToken holds a '/' and a '+', so its JSON, query and path spellings
// all differ from it.
const blobToken = "tok_Blob/Secret+9f3e1c7a5b2d"

// blobPaths are the two ways a blob read reaches an RS: one grant's client,
// and a package whose fan-out routes the read to the member holding the
// blob's connection (cin_a); the other member (cin_b) serves a clean blob, so
// a refusal is the hostile member's answer, not a routing failure.
var blobPaths = []struct {
	name string
	rs   func(t *testing.T, hostile, clean string) tools.RS
}{
	{"single grant", func(t *testing.T, hostile, _ string) tools.RS { return blobClient(t, hostile) }},
	{"fan-out", func(t *testing.T, hostile, clean string) tools.RS {
		fc, err := fanout.New(fanout.Options{Members: []fanout.Member{
			{GrantID: "grt_a", ConnectionIDs: []string{"cin_a"}, ConnectorKey: "mail", RS: blobClient(t, hostile)},
			{GrantID: "grt_b", ConnectionIDs: []string{"cin_b"}, ConnectorKey: "mail", RS: blobClient(t, clean)},
		}})
		if err != nil {
			t.Fatal(err)
		}
		return fc
	}},
}

func blobClient(t *testing.T, base string) *rs.Client {
	t.Helper()
	c, err := rs.New(rs.Options{BaseURL: base, Token: func() string { return blobToken }, CompatSearchShapes: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// serveBlob answers every request with one blob.
func serveBlob(t *testing.T, contentType string, body []byte) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/v1/blobs/") {
			t.Errorf("request %s", r.URL.Path)
		}
		w.Header()["Content-Type"] = []string{contentType}
		_, _ = w.Write(body)
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// blobHarness is a harness whose RS is rs over the two blob servers.
func blobHarness(t *testing.T, rsOf func(*testing.T) tools.RS) *harness {
	return newHarness(t, harnessOptions{rs: func(*pdpptest.Server) tools.RS { return rsOf(t) }})
}

// pctAll percent-encodes every byte of s, in lower-case hex.
func pctAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteString("%" + strings.ToLower(strconv.FormatUint(uint64(s[i])|0x100, 16)[1:]))
	}
	return b.String()
}

// uAll spells every character of s as a JSON \u escape.
func uAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteString(`\u00` + strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
	}
	return b.String()
}

// quotedPairs spells s as an HTTP quoted-string with every character
// backslash-escaped.
func quotedPairs(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		b.WriteByte('\\')
		b.WriteByte(s[i])
	}
	return b.String() + `"`
}

// spelledIn reports whether s holds tok as it is or in a spelling a reader
// undoes: the strings of JSON (a tool's text is JSON inside JSON), JSON
// escapes left in a text, percent-encoding, base64 (a blob's bytes).
func spelledIn(s, tok string) bool {
	var check func(s string, depth int) bool
	check = func(s string, depth int) bool {
		if strings.Contains(s, tok) {
			return true
		}
		if depth == 4 {
			return false
		}
		var next []string
		if gjson.Valid(s) {
			next = append(next, gjsonStrings(s)...)
		}
		if u, err := url.PathUnescape(s); err == nil && u != s {
			next = append(next, u)
		}
		if u := jsonEscapes.ReplaceAllStringFunc(s, func(e string) string {
			if e == `\/` {
				return "/"
			}
			n, _ := strconv.ParseUint(e[2:], 16, 32)
			return string(rune(n))
		}); u != s {
			next = append(next, u)
		}
		if d, err := base64.StdEncoding.DecodeString(s); err == nil {
			next = append(next, string(d))
		}
		for _, n := range next {
			if check(n, depth+1) {
				return true
			}
		}
		return false
	}
	return check(s, 0)
}

var jsonEscapes = regexp.MustCompile(`\\u[0-9a-fA-F]{4}|\\/`)

// gjsonStrings lists every string of the JSON text s, keys included.
func gjsonStrings(s string) []string {
	var out []string
	var walk func(v gjson.Result)
	walk = func(v gjson.Result) {
		switch {
		case v.Type == gjson.String:
			out = append(out, v.Str)
		case v.IsObject() || v.IsArray():
			v.ForEach(func(k, e gjson.Result) bool {
				if k.Type == gjson.String {
					out = append(out, k.Str)
				}
				walk(e)
				return true
			})
		}
	}
	walk(gjson.Parse(s))
	return out
}

// A blob answer that carries the grant's bearer, in its bytes or in its
// Content-Type, in any spelling a reader undoes, is refused as
// rs_invalid_response by fetch and by resources/read, on one grant and
// through a package: the token never reaches the model.
func TestBlobCarryingTheBearerIsRefused(t *testing.T) {
	half := len(blobToken) / 2
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR"
	cases := []struct {
		name, contentType, body string
	}{
		{"Content-Type parameter", `text/plain; note="` + blobToken + `"`, "hello"},
		{"quoted-string parameter, every character escaped", "text/plain; note=" + quotedPairs(blobToken), "hello"},
		{"RFC 2231 parameter", "text/plain; note*=utf-8''" + pctAll(blobToken), "hello"},
		{"RFC 2231 continuation", "text/plain; note*0*=utf-8''" + pctAll(blobToken[:half]) + "; note*1*=" + pctAll(blobToken[half:]), "hello"},
		{"JSON escapes in a parameter", `text/plain; note="` + uAll(blobToken) + `"`, "hello"},
		{"JSON blob, every character \\u-escaped", "application/json", `{"echo":"` + uAll(blobToken) + `"}`},
		{"JSON blob, \\/ escape", "application/json", `{"echo":"` + strings.ReplaceAll(blobToken, "/", `\/`) + `"}`},
		{"text blob, \\u escapes", "text/plain", "you sent " + uAll(blobToken)},
		{"text blob, percent-encoded", "text/plain", "https://x.example/?t=" + pctAll(blobToken)},
		{"text blob, query-escaped", "text/csv", "a," + url.QueryEscape(blobToken)},
		{"binary blob, raw (resources/read would send it base64)", "application/octet-stream", "\x00\x01" + blobToken},
		{"image blob, raw", "image/png", png + blobToken},
	}
	for _, path := range blobPaths {
		for _, tc := range cases {
			t.Run(path.name+"/"+tc.name, func(t *testing.T) {
				hostile := serveBlob(t, tc.contentType, []byte(tc.body))
				clean := serveBlob(t, "text/plain", []byte("clean"))
				h := blobHarness(t, func(t *testing.T) tools.RS { return path.rs(t, hostile, clean) })
				res := h.callAny(t, "fetch", map[string]any{"id": "pdpp://blob/cin_a/blob_x"})
				if !res.IsError || !strings.Contains(text(res), rs.CodeInvalidResponse) {
					t.Errorf("fetch: isError %v: %s", res.IsError, text(res))
				}
				if spelledIn(h.wire.last(), blobToken) {
					t.Errorf("fetch: the token reached the client: %.400s", h.wire.last())
				}
				rr, err := h.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "pdpp://blob/cin_a/blob_x"})
				if err == nil || !strings.Contains(err.Error(), rs.CodeInvalidResponse) {
					t.Errorf("resources/read: %v %+v", err, rr)
				}
				if spelledIn(h.wire.last(), blobToken) {
					t.Errorf("resources/read: the token reached the client: %.400s", h.wire.last())
				}
				// The member that holds no token answers.
				if res := h.callAny(t, "fetch", map[string]any{"id": "pdpp://blob/cin_b/blob_x"}); path.name == "fan-out" &&
					(res.IsError || gjson.Get(text(res), "text").Str != "clean") {
					t.Errorf("the clean member: %s", text(res))
				}
			})
		}
	}
}

// The same answers without the token pass: the rule refuses the token, not
// the encodings.
func TestBlobEncodingsWithoutTheBearerPass(t *testing.T) {
	other := "tok_Other/Value+0000000000"
	for _, ct := range []string{`text/plain; note="` + other + `"`, "text/plain; note*=utf-8''" + pctAll(other), "text/plain; note=" + quotedPairs(other)} {
		body := `{"echo":"` + uAll(other) + `","p":"` + pctAll(other) + `"}`
		h := blobHarness(t, func(t *testing.T) tools.RS { return blobClient(t, serveBlob(t, ct, []byte(body))) })
		res := h.call(t, "fetch", map[string]any{"id": "pdpp://blob/cin_a/blob_x"})
		if res.IsError || gjson.Get(text(res), "text").Str != body || !strings.Contains(gjson.Get(text(res), "metadata.mime_type").Str, "note") {
			t.Errorf("%s: %s", ct, text(res))
		}
	}
}

// Image content is sent only for the image types hosts show, and only when
// the bytes start as that format does; any other image is described as a
// binary that names the type the resource server stated.
func TestBlobImageContentOnlyForRealImages(t *testing.T) {
	pngBytes := "\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
	cases := []struct {
		name, contentType, body string
		image                   bool
		shown                   string // in metadata.shown when not an image
	}{
		{"png", "image/png", pngBytes, true, ""},
		{"jpeg", "image/jpeg", "\xff\xd8\xff\xe0\x00\x10JFIF\x00", true, ""},
		{"gif", "image/gif", "GIF89a\x01\x00\x01\x00\x00\x00\x00;", true, ""},
		{"webp", "image/webp", "RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00", true, ""},
		{"png label on text bytes", "image/png", "this is not a picture at all", false, "not a PNG image"},
		{"png label on a GIF", "image/png", "GIF89a\x01\x00\x01\x00\x00\x00\x00;", false, "not a PNG image"},
		{"jpeg label on a PNG", "image/jpeg", pngBytes, false, "not a JPEG image"},
		{"png signature without its header chunk", "image/png", "\x89PNG\r\n\x1a\nnot really", false, "not a PNG image"},
		{"tiff", "image/tiff", "II*\x00\x08\x00\x00\x00\x00\x00", false, "image/tiff is not"},
		{"svg", "image/svg+xml", `<svg xmlns="http://www.w3.org/2000/svg"/>`, false, "image/svg+xml is not"},
		{"bmp", "image/bmp", "BM\x1e\x00\x00\x00\x00\x00\x00\x00", false, "image/bmp is not"},
	}
	for _, path := range blobPaths {
		for _, tc := range cases {
			t.Run(path.name+"/"+tc.name, func(t *testing.T) {
				hostile := serveBlob(t, tc.contentType, []byte(tc.body))
				h := blobHarness(t, func(t *testing.T) tools.RS { return path.rs(t, hostile, hostile) })
				res := h.callAny(t, "fetch", map[string]any{"id": "pdpp://blob/cin_a/blob_x"})
				doc := gjson.Parse(text(res))
				var images []*mcp.ImageContent
				for _, c := range res.Content {
					if img, ok := c.(*mcp.ImageContent); ok {
						images = append(images, img)
					}
				}
				switch {
				case res.IsError:
					t.Fatalf("fetch: %s", text(res))
				case tc.image && (len(images) != 1 || images[0].MIMEType != tc.contentType || string(images[0].Data) != tc.body ||
					doc.Get("metadata.kind").Str != "image"):
					t.Errorf("not sent as image content: %d images, %s", len(images), text(res))
				case !tc.image && len(images) > 0:
					t.Errorf("sent as image content: %s", text(res))
				case !tc.image && (doc.Get("metadata.kind").Str != "binary" || doc.Get("metadata.mime_type").Str != tc.contentType ||
					!strings.Contains(doc.Get("metadata.shown").Str, tc.shown) || doc.Get("text").Str != "" ||
					doc.Get("metadata.resource").Str != "pdpp://blob/cin_a/blob_x"):
					t.Errorf("not described as a %s binary: %s", tc.contentType, text(res))
				}
				// resources/read sends the bytes, typed as what they are
				// known to be: a mislabelled image is an octet-stream naming
				// the stated type.
				rr, err := h.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "pdpp://blob/cin_a/blob_x"})
				if err != nil {
					t.Fatalf("resources/read: %v", err)
				}
				c := rr.Contents[0]
				wantType := tc.contentType
				if !tc.image && strings.HasPrefix(tc.shown, "not a") {
					wantType = "application/octet-stream"
					if c.Meta["stated_mime_type"] != tc.contentType {
						t.Errorf("resources/read does not name the stated type: %v", c.Meta)
					}
				}
				if c.MIMEType != wantType || string(c.Blob) != tc.body || c.Text != "" {
					t.Errorf("resources/read: %s, %q, text %q", c.MIMEType, c.Blob, c.Text)
				}
			})
		}
	}
}
