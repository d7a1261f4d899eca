package evidence

import (
	"github.com/tidwall/gjson"
)

// Base64MinLen is the shortest string treated as an inline base64 body.
const Base64MinLen = 256

// Blob is the metadata of a blob_ref: everything a model may see of a stored
// binary. The bytes are served by GET /v1/blobs/{blob_id}, which the RS names
// in FetchURL.
type Blob struct {
	BlobID    string
	MIMEType  string
	SizeBytes int64
	HasSize   bool
	SHA256    string
	FetchURL  string
}

// BlobRef reports whether v is a blob_ref-shaped object and returns its
// metadata. The signal is a non-empty string blob_id plus a mime_type string or
// a numeric size_bytes. An ordinary object that merely has an id or a url
// (author:{id,name,email}, link:{url,title}) is not a blob.
func BlobRef(v gjson.Result) (Blob, bool) {
	if !v.IsObject() {
		return Blob{}, false
	}
	var b Blob
	v.ForEach(func(k, f gjson.Result) bool {
		b.take(k.Str, f)
		return true
	})
	if !b.valid() {
		return Blob{}, false
	}
	return b, true
}

// take records one member of a candidate blob_ref object.
func (b *Blob) take(key string, f gjson.Result) {
	switch key {
	case "blob_id":
		if f.Type == gjson.String {
			b.BlobID = f.Str
		}
	case "mime_type":
		if f.Type == gjson.String {
			b.MIMEType = f.Str
		}
	case "size_bytes":
		if f.Type == gjson.Number && f.Num >= 0 && f.Num == float64(int64(f.Num)) {
			b.SizeBytes, b.HasSize = int64(f.Num), true
		}
	case "sha256":
		if f.Type == gjson.String {
			b.SHA256 = f.Str
		}
	case "fetch_url":
		if f.Type == gjson.String {
			b.FetchURL = f.Str
		}
	}
}

// valid reports whether the members taken carry a real blob signal.
func (b *Blob) valid() bool { return b.BlobID != "" && (b.MIMEType != "" || b.HasSize) }

// IsBase64Blob reports whether s looks like an inline base64 body: at least
// Base64MinLen bytes, a multiple of 4, only the standard base64 alphabet with at
// most two trailing "=", and at least 4 distinct characters (so "AAAA…" filler
// and long runs of one letter stay text).
func IsBase64Blob(s string) bool {
	if len(s) < Base64MinLen || len(s)%4 != 0 {
		return false
	}
	body := s
	for i := 0; i < 2 && len(body) > 0 && body[len(body)-1] == '='; i++ {
		body = body[:len(body)-1]
	}
	var seen [256]bool
	distinct := 0
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/') {
			return false
		}
		if !seen[c] {
			seen[c] = true
			distinct++
		}
	}
	return distinct >= 4
}

// imageFormats are the image types MCP hosts show as image content, each
// with its format's name and the test its bytes must pass: the signature
// every file of the format starts with. A host hands image content to a
// decoder (a model's API refuses the whole request when one does not
// decode), so the stated type is not enough.
var imageFormats = map[string]struct {
	name  string
	magic func([]byte) bool
}{
	// A PNG signature, then the IHDR chunk every PNG starts with.
	"image/png": {"PNG", func(b []byte) bool {
		return len(b) >= 16 && string(b[:8]) == "\x89PNG\r\n\x1a\n" && string(b[12:16]) == "IHDR"
	}},
	// SOI, then the first marker.
	"image/jpeg": {"JPEG", func(b []byte) bool { return len(b) >= 3 && string(b[:3]) == "\xff\xd8\xff" }},
	"image/gif": {"GIF", func(b []byte) bool {
		return len(b) >= 6 && (string(b[:6]) == "GIF87a" || string(b[:6]) == "GIF89a")
	}},
	// A RIFF container whose form type is WEBP.
	"image/webp": {"WebP", func(b []byte) bool {
		return len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP"
	}},
}

// ImageFormat names the image format of mediaType (lower-case
// type/subtype) when it is one MCP hosts show as image content ("PNG"), or
// returns "".
func ImageFormat(mediaType string) string { return imageFormats[mediaType].name }

// IsImage reports whether b may be sent as image content of mediaType: the
// type is one hosts show (ImageFormat) and b starts as that format does.
func IsImage(mediaType string, b []byte) bool {
	f, ok := imageFormats[mediaType]
	return ok && f.magic(b)
}

// ImageFormats lists the names of the formats IsImage accepts, for a
// message that says which ones are shown.
const ImageFormats = "PNG, JPEG, GIF, WebP"
