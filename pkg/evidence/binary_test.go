package evidence

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestBlobRef(t *testing.T) {
	fixtureBlob := gjson.GetBytes(fixture(t, "record-attachments-with-blob"), "data.blob_ref")
	tests := []struct {
		name string
		json string
		want Blob
		ok   bool
	}{
		{"RS blob_ref with fetch_url", fixtureBlob.Raw, Blob{
			BlobID:    "blob_sha256_c514bff25a8680e2bda41ec474006756282def0bcc3690db3cf55dad1c4837e6",
			MIMEType:  "text/plain",
			SizeBytes: 108, HasSize: true,
			SHA256:   "c514bff25a8680e2bda41ec474006756282def0bcc3690db3cf55dad1c4837e6",
			FetchURL: "/v1/blobs/blob_sha256_c514bff25a8680e2bda41ec474006756282def0bcc3690db3cf55dad1c4837e6",
		}, true},
		{"blob_id and size only", `{"blob_id":"b1","size_bytes":20003}`, Blob{BlobID: "b1", SizeBytes: 20003, HasSize: true}, true},
		{"blob_id and mime only", `{"blob_id":"b1","mime_type":"image/png"}`, Blob{BlobID: "b1", MIMEType: "image/png"}, true},
		// anchor bug 9.1.1: ordinary nested objects are data, not blobs
		{"author object", `{"id":"u1","name":"Maya","email":"maya@x.example"}`, Blob{}, false},
		{"link object", `{"url":"https://x.example","title":"X"}`, Blob{}, false},
		{"id plus mime type", `{"id":"f1","mime_type":"image/png","url":"https://x.example/f1"}`, Blob{}, false},
		{"content_type attachment metadata", `{"filename":"a.pdf","content_type":"application/pdf","size_bytes":10}`, Blob{}, false},
		{"blob_id alone", `{"blob_id":"b1"}`, Blob{}, false},
		{"empty blob_id", `{"blob_id":"","mime_type":"text/plain"}`, Blob{}, false},
		{"numeric blob_id", `{"blob_id":7,"mime_type":"text/plain"}`, Blob{}, false},
		{"fractional size", `{"blob_id":"b1","size_bytes":1.5}`, Blob{}, false},
		{"negative size", `{"blob_id":"b1","size_bytes":-1}`, Blob{}, false},
		{"null", `null`, Blob{}, false},
		{"array", `[{"blob_id":"b1","mime_type":"x"}]`, Blob{}, false},
		{"string", `"blob_id"`, Blob{}, false},
	}
	for _, tt := range tests {
		got, ok := BlobRef(gjson.Parse(tt.json))
		if ok != tt.ok || got != tt.want {
			t.Errorf("%s: BlobRef = %+v, %v; want %+v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestIsBase64Blob(t *testing.T) {
	bin := make([]byte, 300)
	for i := range bin {
		bin[i] = byte(i * 7)
	}
	enc := base64.StdEncoding.EncodeToString(bin) // 400 chars, no padding
	padded := base64.StdEncoding.EncodeToString(bin[:299])
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"encoded bytes", enc, true},
		{"encoded with padding", padded, true},
		{"exactly 256", enc[:256], true},
		{"252 chars", enc[:252], false},
		{"not a multiple of 4", enc[:258], false},
		{"three padding chars", enc[:253] + "===", false},
		{"padding in the middle", enc[:100] + "=" + enc[101:], false},
		{"url-safe alphabet", strings.ReplaceAll(strings.ReplaceAll(enc, "+", "-"), "/", "_") + strings.Repeat("-_", 2), false},
		{"four distinct chars", strings.Repeat("ABCD", 64), true},
		{"three distinct chars", strings.Repeat("ABCA", 64), false},
		{"one letter", strings.Repeat("A", 400), false},
		{"prose", strings.Repeat("The quick brown fox ", 20), false},
		{"a long word with spaces removed is still text", strings.Repeat("Lorem", 60) + "ipsu", true},
		{"empty", "", false},
	}
	for _, tt := range tests {
		if got := IsBase64Blob(tt.in); got != tt.want {
			t.Errorf("%s: IsBase64Blob = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// FuzzIsBase64Blob checks the detector against its definition.
func FuzzIsBase64Blob(f *testing.F) {
	f.Add(strings.Repeat("ABCD", 64))
	f.Add(strings.Repeat("AB=D", 64))
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		got := IsBase64Blob(s)
		body := strings.TrimRight(s, "=")
		padOK := len(s)-len(body) <= 2
		alphabet := strings.Trim(body, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") == ""
		distinct := map[rune]bool{}
		for _, r := range body {
			distinct[r] = true
		}
		want := len(s) >= Base64MinLen && len(s)%4 == 0 && padOK && alphabet && len(distinct) >= 4
		if got != want {
			t.Fatalf("IsBase64Blob(%q) = %v, want %v", s, got, want)
		}
	})
}

// Real files of each format hosts show are images of their own type and
// of no other; bytes that only carry a label are not; no other image type
// is ever one.
func TestIsImage(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	var pngFile, jpegFile, gifFile bytes.Buffer
	if err := png.Encode(&pngFile, img); err != nil {
		t.Fatal(err)
	}
	if err := jpeg.Encode(&jpegFile, img, nil); err != nil {
		t.Fatal(err)
	}
	if err := gif.Encode(&gifFile, img, nil); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"image/png": pngFile.Bytes(), "image/jpeg": jpegFile.Bytes(), "image/gif": gifFile.Bytes(),
		// The smallest lossless WebP header: RIFF size WEBP VP8L.
		"image/webp": []byte("RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00"),
	}
	for typ, b := range files {
		for other := range files {
			if got := IsImage(other, b); got != (other == typ) {
				t.Errorf("IsImage(%s, a %s file) = %v", other, typ, got)
			}
		}
		if IsImage(typ, []byte("not an image at all, only a label")) || IsImage(typ, nil) {
			t.Errorf("%s: bytes that are not one pass", typ)
		}
		if name := ImageFormat(typ); name == "" || !strings.Contains(ImageFormats, name) {
			t.Errorf("%s: format %q not listed in %q", typ, name, ImageFormats)
		}
	}
	if strings.Count(ImageFormats, ",")+1 != len(imageFormats) {
		t.Errorf("ImageFormats %q does not list the %d formats", ImageFormats, len(imageFormats))
	}
	for _, typ := range []string{"image/tiff", "image/svg+xml", "image/bmp", "image/x-icon", "image/avif", "image/heic", "IMAGE/PNG", "image/png; x=y"} {
		for _, b := range files {
			if IsImage(typ, b) || ImageFormat(typ) != "" {
				t.Errorf("%s is shown as an image", typ)
			}
		}
	}
}
