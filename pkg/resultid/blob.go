package resultid

import (
	"net/url"
	"strconv"
	"strings"
)

// BlobScheme prefixes blob handles.
const BlobScheme = "pdpp://blob/"

// PartBlob is the blob id of a blob handle.
const PartBlob Part = "blob_id"

// blobExpected is what a blob handle looks like, for errors.
const blobExpected = "pdpp://blob/<connection_id>/<blob_id> exactly as a tool printed it"

// Blob names one blob the grant can read: the connection whose record
// references it and the RS's blob id. The connection is part of the name
// because the same bytes may be referenced under several connections, and
// the RS refuses a read that does not say which (409 ambiguous_connection).
type Blob struct {
	connection string
	blob       string
	// sha256 is the digest the referencing record's blob_ref states, kept
	// only when the blob id does not already name it.
	sha256 string
}

// NewBlob builds a blob handle. connectionID may be empty when the record
// that references the blob carried none; such a handle reads without
// connection_id and the RS decides.
func NewBlob(connectionID, blobID string) (Blob, error) {
	return newBlob(BlobScheme+connectionID+"/"+blobID, connectionID, blobID)
}

// newBlob checks the parts; in is the input errors quote.
func newBlob(in, connectionID, blobID string) (Blob, error) {
	if connectionID != "" {
		if p := checkSegment(connectionID, false); p != "" {
			return Blob{}, invalidURI(in, PartConnection, "the connection_id "+p, blobExpected)
		}
	}
	if p := checkSegment(blobID, true); p != "" {
		return Blob{}, invalidURI(in, PartBlob, "the blob_id "+p, blobExpected)
	}
	return Blob{connection: connectionID, blob: blobID}, nil
}

// WithSHA256 returns b carrying the digest a record's blob_ref states for
// it, so a read can check the bytes. A digest that is not 64 hex digits, or
// the one the id itself names, is not carried.
func (b Blob) WithSHA256(h string) Blob {
	h = strings.ToLower(h)
	if !isSHA256(h) || h == b.NamedSHA256() {
		return b
	}
	b.sha256 = h
	return b
}

// SHA256 is the digest the bytes should have: the one the handle carries,
// else the one the id names ("" when neither says).
func (b Blob) SHA256() string {
	if b.sha256 != "" {
		return b.sha256
	}
	return b.NamedSHA256()
}

// NamedSHA256 is the digest a content-addressed blob id names: the
// reference RS calls the blob with sha256 h "blob_sha256_<h>".
func (b Blob) NamedSHA256() string {
	for _, p := range []string{"blob_sha256_", "sha256:", "sha256-"} {
		if h, ok := strings.CutPrefix(b.blob, p); ok && isSHA256(strings.ToLower(h)) {
			return strings.ToLower(h)
		}
	}
	return ""
}

func isSHA256(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// ConnectionID is the connection the blob is read under ("" when unknown).
func (b Blob) ConnectionID() string { return b.connection }

// BlobID is the RS's blob id.
func (b Blob) BlobID() string { return b.blob }

// URI is pdpp://blob/{connection_id}/{blob_id}, each segment escaped; pdpp://blob/{blob_id} when the connection is unknown.
func (b Blob) URI() string {
	u := BlobScheme + escapeStrict(b.blob)
	if b.connection != "" {
		u = BlobScheme + escapeStrict(b.connection) + "/" + escapeStrict(b.blob)
	}
	if b.sha256 != "" {
		u += "?sha256=" + b.sha256
	}
	return u
}

// escapeStrict percent-encodes every byte but RFC 3986's unreserved ones, so
// a segment matches a URI template's simple {variable} whatever it holds.
func escapeStrict(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// ResourceURI is the URI of the blob resource: URI without the sha256
// query, since a resource template cannot carry one.
func (b Blob) ResourceURI() string {
	b.sha256 = ""
	return b.URI()
}

// At is the handle of the text that starts offset characters into the blob:
// the URI with ?offset_chars=N (the URI itself for 0). Tools print it as the
// continuation of a bounded text blob.
func (b Blob) At(offset int) string {
	if offset <= 0 {
		return b.URI()
	}
	sep := "?"
	if b.sha256 != "" {
		sep = "&"
	}
	return b.URI() + sep + "offset_chars=" + strconv.Itoa(offset)
}

// IsBlobURI reports whether s is meant as a blob handle.
func IsBlobURI(s string) bool { return strings.HasPrefix(s, BlobScheme) }

// ParseBlobURI reads a blob handle, with the offset its offset_chars query
// member names (0 without one) and the sha256 member a record's blob_ref
// stated. Every rejection is a *Error with CodeInvalidResourceURI.
func ParseBlobURI(s string) (Blob, int, error) {
	rest, ok := strings.CutPrefix(s, BlobScheme)
	if !ok || rest == "" {
		return Blob{}, 0, invalidURI(s, PartNone, "it does not match pdpp://blob/{connection_id}/{blob_id}", blobExpected)
	}
	offset, sha := 0, ""
	if path, query, found := strings.Cut(rest, "?"); found {
		seen := map[string]bool{}
		for _, kv := range strings.Split(query, "&") {
			k, v, _ := strings.Cut(kv, "=")
			if seen[k] {
				return Blob{}, 0, invalidURI(s, PartNone, "its query repeats "+k, blobExpected)
			}
			seen[k] = true
			switch k {
			case "offset_chars":
				n, err := strconv.Atoi(v)
				if !isDigits(v) || err != nil {
					return Blob{}, 0, invalidURI(s, PartNone, "its offset_chars= is not a non-negative integer", blobExpected)
				}
				offset = n
			case "sha256":
				if !isSHA256(v) {
					return Blob{}, 0, invalidURI(s, PartNone, "its sha256= is not 64 lower-case hex digits", blobExpected)
				}
				sha = v
			default:
				return Blob{}, 0, invalidURI(s, PartNone, "its query has "+quote(k)+"; only sha256= and offset_chars= are known", blobExpected)
			}
		}
		rest = path
	}
	if strings.Contains(rest, "#") {
		return Blob{}, 0, invalidURI(s, PartNone, "it carries a fragment", blobExpected)
	}
	segs := strings.Split(rest, "/")
	if len(segs) > 2 {
		return Blob{}, 0, invalidURI(s, PartNone, "it has more than two segments; a \"/\" inside an id is written %2F", blobExpected)
	}
	var parts [2]string
	for i, seg := range segs {
		u, err := url.PathUnescape(seg)
		if err != nil {
			return Blob{}, 0, invalidURI(s, PartNone, "a segment is not validly URI-encoded", blobExpected)
		}
		parts[i] = u
	}
	if len(segs) == 1 {
		parts[0], parts[1] = "", parts[0]
	}
	b, err := newBlob(s, parts[0], parts[1])
	if err != nil {
		return Blob{}, 0, err
	}
	b.sha256 = sha
	if sha == b.NamedSHA256() {
		b.sha256 = ""
	}
	return b, offset, nil
}
