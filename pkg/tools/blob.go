package tools

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"mime"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/evidence"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/resultid"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// Blob bounds. The RS serves a blob whole (no Range), so every read of a
// blob, a continuation of its text included, transfers all of it.
const (
	// DefaultBlobMaxBytes bounds the bytes read for one blob when
	// Env.BlobMaxBytes is 0. A larger blob is a blob_too_large error.
	DefaultBlobMaxBytes int64 = 8 << 20
	// BlobImageBytes bounds an image fetch returns as image content; a
	// larger one is described like any other binary.
	BlobImageBytes = 1 << 20
)

// CodeBlobTooLarge: the blob is over the bytes pdpp-mcp reads for one blob.
const CodeBlobTooLarge = "blob_too_large"

// blobKind is how a blob's bytes reach the model.
type blobKind int

const (
	blobBinary blobKind = iota // metadata only
	blobText                   // bounded text, continued to the end
	blobImage                  // an image type: image content when evidence.IsImage, else metadata
)

// textualTypes are media types outside text/* whose bytes are text.
var textualTypes = map[string]bool{
	"application/json": true, "application/xml": true, "application/csv": true, "application/javascript": true,
	"application/ecmascript": true, "application/x-ndjson": true, "application/ndjson": true, "application/jsonl": true,
	"application/yaml": true, "application/x-yaml": true, "application/toml": true, "application/sql": true,
	"application/graphql": true, "application/x-sh": true, "application/x-httpd-php": true, "application/rtf": true,
	"application/x-tex": true, "application/x-subrip": true, "message/rfc822": true, "message/global": true,
}

// blobKindOf decides the blob kind from its media type (no parameters).
// An image type is never text, SVG included: an image is shown as one or
// described, and which images are shown is evidence.IsImage's decision alone.
func blobKindOf(mediaType string) blobKind {
	switch {
	case strings.HasPrefix(mediaType, "image/"):
		return blobImage
	case strings.HasPrefix(mediaType, "text/"), textualTypes[mediaType],
		strings.HasSuffix(mediaType, "+json"), strings.HasSuffix(mediaType, "+xml"):
		return blobText
	}
	return blobBinary
}

// blobBytes is one blob as the RS served it.
type blobBytes struct {
	// contentType is the RS's Content-Type, parameters included;
	// mediaType is its lower-cased type/subtype.
	contentType, mediaType string
	body                   []byte
	// sha256 is the digest of body; expected is the digest the record's
	// blob_ref stated, carried by the handle or named by the blob id (""
	// when neither says).
	sha256, expected string
	// base is the provider that answered.
	base string
}

func (b *blobBytes) kind() blobKind { return blobKindOf(b.mediaType) }

// mislabelled reports an image type hosts show whose bytes are not that
// format: the stated type is not passed on as what the bytes are.
func (b *blobBytes) mislabelled() bool {
	return evidence.ImageFormat(b.mediaType) != "" && !evidence.IsImage(b.mediaType, b.body)
}

// resourceType is the media type the blob's resource is served with: the
// RS's, or application/octet-stream for a mislabelled image.
func (b *blobBytes) resourceType() string {
	if b.mislabelled() {
		return "application/octet-stream"
	}
	return b.mediaType
}

// imageWithheld says why an image blob is described rather than shown.
func (b *blobBytes) imageWithheld() string {
	format := evidence.ImageFormat(b.mediaType)
	switch {
	case format == "":
		return "metadata only: " + b.mediaType + " is not an image type MCP hosts show as image content (" + evidence.ImageFormats + ")"
	case b.mislabelled():
		return "metadata only: the resource server labels these bytes " + b.mediaType + ", but they are not a " + format +
			" image (they do not start as one does), so they are not shown as an image"
	}
	return "metadata only: the image is over the " + strconv.Itoa(BlobImageBytes) + " bytes fetch shows as image content"
}

// mismatch reports whether the bytes differ from the digest stated.
func (b *blobBytes) mismatch() bool { return b.expected != "" && b.expected != b.sha256 }

// blobMax is the byte bound of one blob read.
func blobMax(env *Env) int64 { return cmp.Or(env.BlobMaxBytes, DefaultBlobMaxBytes) }

// readBlob reads one blob through GET /v1/blobs/{blob_id} with the grant's
// token, bounded by blobMax.
func readBlob(ctx context.Context, env *Env, h resultid.Blob) (*blobBytes, error) {
	path := rs.Path("v1", "blobs", h.BlobID())
	var q rs.Query
	if c := h.ConnectionID(); c != "" {
		q.Add("connection_id", c)
	}
	limit := blobMax(env)
	resp, err := env.RS.Get(rs.WithBodyLimit(ctx, limit), path, q)
	if err != nil {
		return nil, blobFailure(env, h, limit, err)
	}
	b := &blobBytes{body: resp.Body, base: resp.BaseURL}
	if int64(len(b.body)) > limit {
		// A reader that ignores the context's bound (a test double, a
		// wrapper) is held to it here.
		return nil, blobFailure(env, h, limit, &rs.TransportError{Code: rs.CodeTooLarge, Limit: limit, Size: int64(len(b.body))})
	}
	// The RS's type, re-formatted from its parsed parts so nothing odd it
	// sent reaches a result; unusable or absent means octet-stream.
	ct := resp.Header.Get("Content-Type")
	mt, params, perr := mime.ParseMediaType(ct)
	if perr == nil && len(ct) <= 200 {
		ct = mime.FormatMediaType(mt, params)
	}
	if perr != nil || ct == "" || len(ct) > 200 || !utf8.ValidString(ct) {
		ct, mt = "application/octet-stream", "application/octet-stream"
	}
	b.contentType, b.mediaType = ct, strings.ToLower(mt)
	sum := sha256.Sum256(b.body)
	b.sha256 = hex.EncodeToString(sum[:])
	b.expected = h.SHA256()
	return b, nil
}

// advisedError is an error whose next step the tool knows better than the
// generic classification.
type advisedError struct {
	err  error
	next string
}

func (e *advisedError) Error() string { return e.err.Error() }
func (e *advisedError) Unwrap() error { return e.err }

// blobFailure gives a failed blob read its meaning: an unreadable id, the
// handles of the connections that hold it, or its size over the bound.
func blobFailure(env *Env, h resultid.Blob, limit int64, err error) error {
	var re *rs.Error
	var te *rs.TransportError
	switch {
	case errors.As(err, &te) && te.Code == rs.CodeTooLarge:
		size := "more than " + strconv.FormatInt(limit, 10) + " bytes"
		if te.Size > 0 {
			size = strconv.FormatInt(te.Size, 10) + " bytes"
		}
		return &toolError{Code: CodeBlobTooLarge, Param: "id",
			Message: "the blob " + h.URI() + " is " + size + ", over the " + strconv.FormatInt(limit, 10) +
				" bytes pdpp-mcp reads for one blob; nothing of it is shown",
			Next: "do not retry: the resource server serves it at " + blobURL(env, h, "") +
				" only to a bearer of this grant's token, which pdpp-mcp never hands out; tell the user its size and ask them " +
				"to open the attachment with the provider, or the operator to raise --blob-max-bytes"}
	case errors.As(err, &re) && len(re.AvailableConnections) > 0:
		var hs []string
		for i, c := range re.AvailableConnections {
			if i == maxListedConnections {
				break
			}
			if b, err := resultid.NewBlob(c.ConnectionID, h.BlobID()); err == nil {
				hs = append(hs, b.URI())
			}
		}
		if len(hs) > 0 {
			return &advisedError{err: err, next: "call fetch again with id set to one of " + strings.Join(hs, ", ")}
		}
	case errors.As(err, &re) && re.Status == 404:
		return &advisedError{err: err, next: "a blob id grants nothing by itself: pass a pdpp://blob/ handle exactly as " +
			"fetch or query_records printed it in a record this grant reads"}
	}
	return err
}

// blobURL is the RS address of a blob on the citation origin, or its
// handle when there is none.
func blobURL(env *Env, h resultid.Blob, base string) string {
	base = citationBase(env, base)
	if base == "" {
		return h.URI()
	}
	path := rs.Path("v1", "blobs", h.BlobID())
	if c := h.ConnectionID(); c != "" {
		path += "?connection_id=" + url.QueryEscape(c)
	}
	return strings.TrimSuffix(base, "/") + path
}

// decodeBlobText is the blob's bytes as text: valid UTF-8, the byte order mark
// dropped. repaired counts the invalid sequences replaced.
func decodeBlobText(body []byte) (text string, repaired bool) {
	s := strings.TrimPrefix(string(body), "\uFEFF")
	if utf8.ValidString(s) {
		return s, false
	}
	return strings.ToValidUTF8(s, "\uFFFD"), true
}

// blobDoc is fetch's document for a blob: the search/fetch contract's
// members, with blob metadata.
type blobDoc struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Text     string   `json:"text"`
	URL      string   `json:"url"`
	Metadata blobMeta `json:"metadata"`
}

// blobMeta is the blob document's metadata. The id already names the blob
// and its connection.
type blobMeta struct {
	Kind      string `json:"kind"`
	MIMEType  string `json:"mime_type"`
	SizeBytes int    `json:"size_bytes"`
	SHA256    string `json:"sha256"`
	// SHA256Check says how the digest compares with the one the record
	// states; a mismatch is never called verified.
	SHA256Check string `json:"sha256_check"`
	// Shown says what of the blob the result holds.
	Shown         string         `json:"shown"`
	TextChars     *int           `json:"text_chars,omitempty"`
	TextTruncated bool           `json:"text_truncated,omitempty"`
	StartChars    *int           `json:"start_chars,omitempty"`
	Next          *evidence.Read `json:"next,omitempty"`
	// Resource is the resource a host that reads resources can read.
	Resource string `json:"resource,omitempty"`
	Note     string `json:"note,omitempty"`
	// HiddenMarks is fetchMeta.HiddenMarks.
	HiddenMarks string `json:"hidden_marks,omitempty"`
}

func (d *blobDoc) noteHidden(note string) { d.Metadata.HiddenMarks = note }

// runBlobFetch is fetch of a pdpp://blob/ handle: text blobs as bounded text
// continued by metadata.next, images up to BlobImageBytes as image content,
// other binaries as metadata and the resource URI.
func runBlobFetch(ctx context.Context, env *Env, a *fetchArgs) (*mcp.CallToolResult, error) {
	h, offset, err := a.blob()
	if err != nil {
		return nil, err
	}
	b, err := readBlob(ctx, env, h)
	if err != nil {
		return nil, err
	}
	// The media type and the digest the record states are the RS's words.
	m := blobMeta{MIMEType: visible.String(b.contentType), SizeBytes: len(b.body), SHA256: b.sha256, SHA256Check: visible.String(b.check())}
	doc := &blobDoc{ID: a.ID, URL: blobURL(env, h, b.base)}
	var extra []mcp.Content
	kind := b.kind()
	if offset > 0 && kind != blobText {
		return nil, &toolError{Code: CodeInvalidArguments, Param: "id",
			Message: "offset_chars continues a text blob, and this blob is " + b.mediaType,
			Next:    "call fetch with the handle without ?offset_chars"}
	}
	switch {
	case kind == blobText:
		text, repaired := decodeBlobText(b.body)
		if total := evidence.Len(text); offset > total {
			return nil, &toolError{Code: CodeInvalidArguments, Param: "id",
				Message: "offset_chars " + strconv.Itoa(offset) + " is past the end of the text, which has " + strconv.Itoa(total) + " characters",
				Next:    "call fetch with the handle as metadata.next printed it, or without offset_chars to start again"}
		}
		w, _ := evidence.WindowOf(text, evidence.WindowSelector{Offset: offset,
			Limit: min(cmp.Or(env.FetchTextChars, DefaultFetchTextChars), evidence.MaxWindowChars)})
		shown, n, whole := shownText(w.Text, w.LimitChars)
		if !whole {
			// Marks took the room of the window's end, which the next
			// read starts with.
			end := w.StartChars + n
			w.EndChars, w.NextOffset, w.Complete, w.HasMore = end, &end, false, true
		}
		m.Kind, doc.Text = "text", shown
		m.TextChars, m.StartChars = &w.TotalChars, &w.StartChars
		switch {
		case w.Complete:
			m.Shown = "the whole text"
		case w.NextOffset != nil:
			m.TextTruncated = true
			m.Shown = "characters " + strconv.Itoa(w.StartChars) + ".." + strconv.Itoa(w.EndChars) + " of " + strconv.Itoa(w.TotalChars)
			m.Next = &evidence.Read{Tool: "fetch", Args: evidence.ReadArgs{ID: h.At(*w.NextOffset)}}
		default:
			m.Shown = "characters " + strconv.Itoa(w.StartChars) + ".." + strconv.Itoa(w.EndChars) + " of " +
				strconv.Itoa(w.TotalChars) + ": the end of the text"
		}
		if repaired {
			m.Note = "the bytes are not valid UTF-8; invalid sequences are shown as U+FFFD"
		}
	case kind == blobImage && evidence.IsImage(b.mediaType, b.body) && len(b.body) <= BlobImageBytes:
		m.Kind, m.Shown = "image", "the image, as image content after this document"
		extra = append(extra, &mcp.ImageContent{Data: b.body, MIMEType: b.mediaType})
	default:
		m.Kind = "binary"
		m.Shown = "metadata only: binary bytes are never shown as text"
		if kind == blobImage {
			m.Shown = b.imageWithheld()
		}
		if h.ConnectionID() != "" {
			m.Resource = h.ResourceURI()
			m.Note = "a host that reads MCP resources can read the bytes from the resource"
		}
	}
	var l links
	size := int64(len(b.body))
	l.blob(h.URI(), visible.String(b.resourceType()), &size)
	extra = append(extra, l.out...)
	doc.Title = blobTitle(b, m.Kind)
	doc.Metadata = m
	return documentResult(doc, extra), nil
}

// check is sha256_check: how the bytes compare with the digest stated.
func (b *blobBytes) check() string {
	switch {
	case b.expected == "":
		return "computed here; neither the record nor the blob id states a digest to compare with"
	case b.mismatch():
		return "MISMATCH: the record states sha256 " + b.expected + " but the bytes the resource server sent hash to " +
			b.sha256 + "; they are its answer, unverified"
	}
	return "matches the sha256 the record states"
}

func blobTitle(b *blobBytes, kind string) string {
	return kind + " blob " + visible.String(b.mediaType) + " (" + strconv.Itoa(len(b.body)) + " bytes)"
}

// readBlobResource serves pdpp://blob/{connection_id}/{blob_id}: text types
// as text contents, everything else as base64 blob contents, with the RS's
// media type (an image whose bytes are not its format as
// application/octet-stream, the stated type in _meta.stated_mime_type);
// over the bound, an error that says the size.
func readBlobResource(ctx context.Context, env *Env, uri string) (*mcp.ResourceContents, error) {
	h, offset, err := resultid.ParseBlobURI(uri)
	if err != nil {
		return nil, idError("uri", err)
	}
	if offset != 0 || strings.Contains(uri, "?") {
		return nil, &toolError{Code: resultid.CodeInvalidResourceURI, Param: "uri",
			Message: "a blob resource is pdpp://blob/{connection_id}/{blob_id} read whole; a ?query belongs to the fetch tool's handles",
			Next:    "read the URI without its query, or pass the handle to fetch"}
	}
	b, err := readBlob(ctx, env, h)
	if err != nil {
		return nil, err
	}
	c := &mcp.ResourceContents{MIMEType: b.contentType,
		Meta: mcp.Meta{"sha256": b.sha256, "sha256_check": b.check(), "size_bytes": len(b.body)}}
	if b.mislabelled() {
		c.MIMEType = b.resourceType()
		c.Meta["stated_mime_type"] = b.contentType
	}
	if b.kind() == blobText {
		c.Text, _ = decodeBlobText(b.body)
		if c.Text == "" {
			// An empty text would be indistinguishable from a missing one.
			c.Blob = []byte{}
		}
	} else {
		c.Blob = b.body
	}
	return c, nil
}

// citationBase is the provider origin results show (document urls,
// provider_url): the public origin when one is known, else the provider
// that answered. A hosted server without a public origin shows none: its
// provider URL is an address the gateway reaches, not one a remote client
// can open (often an internal one), so documents cite their pdpp:// handle.
func citationBase(env *Env, base string) string {
	switch {
	case env.CitationURL != "":
		return env.CitationURL
	case env.Mode == ModeHosted:
		return ""
	}
	return cmp.Or(base, env.ProviderURL)
}
