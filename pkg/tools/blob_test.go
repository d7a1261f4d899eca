package tools_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

// callAny calls a tool and returns the result with every content block,
// failing on a protocol error or a leaked token.
func (h *harness) callAny(t testing.TB, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	if strings.Contains(h.wire.last(), h.token) {
		t.Fatalf("%s: the bearer token appears in the result", name)
	}
	if err := h.outputs[name].Validate(res.StructuredContent); err != nil {
		t.Fatalf("%s: structuredContent does not match the output schema: %v", name, err)
	}
	return res
}

const gmailBlob = "pdpp://blob/cin_gmail_personal/blob_sha256_c514bff25a8680e2bda41ec474006756282def0bcc3690db3cf55dad1c4837e6"

// The handle a record's text prints is what fetch reads: the text
// attachment comes back whole, with its digest checked against the id.
func TestBlobFromRecordText(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	rec := h.call(t, "fetch", map[string]any{"id": "cin_gmail_personal/attachments:p_msg_002_att_1"})
	if !strings.Contains(text(rec), `"fetch":"`+gmailBlob+`"`) {
		t.Fatalf("the record's text prints no blob handle: %s", text(rec))
	}
	h.rs.ResetRequests()
	res := h.call(t, "fetch", map[string]any{"id": gmailBlob})
	t.Log(text(res))
	doc := gjson.Parse(text(res))
	if doc.Get("metadata.kind").Str != "text" || !strings.Contains(doc.Get("text").Str, "itinerary") && doc.Get("text").Str == "" {
		t.Errorf("text blob: %s", text(res))
	}
	if got := doc.Get("metadata.sha256_check").Str; got != "matches the sha256 the record states" {
		t.Errorf("sha256_check %q", got)
	}
	if reqs := h.requests(t); len(reqs) != 1 || reqs[0].String() != "/v1/blobs/blob_sha256_c514bff25a8680e2bda41ec474006756282def0bcc3690db3cf55dad1c4837e6?connection_id=cin_gmail_personal" {
		t.Errorf("requests %v", reqs)
	}
}

// demoBlob is one attachment of the demo dataset: its handle and bytes.
type demoBlob struct {
	handle string
	conn   string
	id     string
	bytes  []byte
}

// demoBlobs picks, per media type, the first attachment blob of the demo's
// mail connections, and a blob referenced under both of them.
func demoBlobs(t *testing.T) (map[string]demoBlob, demoBlob) {
	t.Helper()
	ds := demoDataset(t)
	out := map[string]demoBlob{}
	seen := map[string]string{} // blob id → first connection
	var shared demoBlob
	for _, c := range ds.Connectors {
		if c.Key != "mail" {
			continue
		}
		for _, conn := range c.Connections {
			for _, r := range c.Records[conn.ID]["mail_attachments"] {
				ref := gjson.GetBytes(r.Data, "blob_ref")
				id := ref.Get("blob_id").Str
				if id == "" {
					continue
				}
				b := ds.Blobs[id]
				db := demoBlob{handle: "pdpp://blob/" + conn.ID + "/" + id, conn: conn.ID, id: id, bytes: b.Bytes}
				if _, ok := out[b.MIMEType]; !ok {
					out[b.MIMEType] = db
				}
				if first, ok := seen[id]; ok && first != conn.ID && shared.id == "" {
					shared = db
				}
				seen[id] = conn.ID
			}
		}
	}
	for _, m := range []string{"text/plain", "image/png", "application/pdf", "application/zip"} {
		if _, ok := out[m]; !ok {
			t.Fatalf("the demo has no %s attachment blob", m)
		}
	}
	if shared.id == "" {
		t.Fatal("the demo has no blob shared by two connections")
	}
	return out, shared
}

// Each media class reaches the model its own way, through fetch alone.
func TestBlobFetchKinds(t *testing.T) {
	blobs, _ := demoBlobs(t)
	h := newHarness(t, harnessOptions{demo: true, fetchTextChars: 200})

	t.Run("text read to its end from text handles", func(t *testing.T) {
		want := string(blobs["text/plain"].bytes)
		var got strings.Builder
		id, calls := blobs["text/plain"].handle, 0
		for id != "" {
			if calls++; calls > 100 {
				t.Fatal("the continuation never ends")
			}
			res := h.call(t, "fetch", map[string]any{"id": id})
			doc := gjson.Parse(text(res))
			if doc.Get("metadata.kind").Str != "text" {
				t.Fatalf("kind: %s", text(res))
			}
			got.WriteString(doc.Get("text").Str)
			id = doc.Get("metadata.next.args.id").Str
			if id != "" && doc.Get("metadata.next.tool").Str != "fetch" {
				t.Fatalf("the continuation is not a fetch call: %s", text(res))
			}
		}
		if calls < 2 {
			t.Errorf("a %d-byte text was not continued at 200 characters", len(want))
		}
		if got.String() != want {
			t.Errorf("reassembled text differs:\n%q\nwant\n%q", got.String(), want)
		}
	})

	t.Run("image as image content", func(t *testing.T) {
		b := blobs["image/png"]
		res := h.callAny(t, "fetch", map[string]any{"id": b.handle})
		if res.IsError || len(res.Content) != 3 {
			t.Fatalf("image: isError=%v %d blocks", res.IsError, len(res.Content))
		}
		img, ok := res.Content[1].(*mcp.ImageContent)
		if !ok || img.MIMEType != "image/png" || string(img.Data) != string(b.bytes) {
			t.Errorf("content[1] is %T, not the PNG", res.Content[1])
		}
		if doc := gjson.Parse(text(res)); doc.Get("metadata.kind").Str != "image" || doc.Get("metadata.size_bytes").Int() != int64(len(b.bytes)) {
			t.Errorf("image document: %s", text(res))
		}
	})

	t.Run("other binary as metadata and the resource", func(t *testing.T) {
		b := blobs["application/pdf"]
		res := h.call(t, "fetch", map[string]any{"id": b.handle})
		doc := gjson.Parse(text(res))
		sum := sha256.Sum256(b.bytes)
		if doc.Get("metadata.kind").Str != "binary" || doc.Get("metadata.resource").Str != b.handle ||
			doc.Get("metadata.sha256").Str != hex.EncodeToString(sum[:]) || doc.Get("text").Str != "" ||
			doc.Get("metadata.mime_type").Str != "application/pdf" {
			t.Errorf("binary document: %s", text(res))
		}
		if strings.Contains(text(res), base64.StdEncoding.EncodeToString(b.bytes[:30])) || strings.Contains(text(res), "%PDF") {
			t.Error("the PDF's bytes reached the text")
		}
	})

	t.Run("over the bound: an error that says the size", func(t *testing.T) {
		b := blobs["application/zip"]
		h.rs.ResetRequests()
		res := h.call(t, "fetch", map[string]any{"id": b.handle})
		sc := structured(t, res)["error"].(map[string]any)
		if !res.IsError || sc["code"] != "blob_too_large" ||
			!strings.Contains(sc["message"].(string), strconv.Itoa(len(b.bytes))+" bytes") ||
			!strings.Contains(sc["next"].(string), "bearer") {
			t.Errorf("oversize: %s", text(res))
		}
	})

	t.Run("offset past the end of the text", func(t *testing.T) {
		res := h.call(t, "fetch", map[string]any{"id": blobs["text/plain"].handle + "?offset_chars=99999"})
		if !res.IsError || !strings.Contains(text(res), "past the end") {
			t.Errorf("offset past the end: %s", text(res))
		}
	})

	t.Run("offset on a non-text blob", func(t *testing.T) {
		res := h.call(t, "fetch", map[string]any{"id": blobs["image/png"].handle + "?offset_chars=10"})
		if !res.IsError || !strings.Contains(text(res), "invalid_arguments") {
			t.Errorf("offset on an image: %s", text(res))
		}
	})
}

// The resource serves each blob with the RS's media type: text as text,
// the rest as bytes, oversize as an error.
func TestBlobResource(t *testing.T) {
	blobs, shared := demoBlobs(t)
	h := newHarness(t, harnessOptions{demo: true})
	for _, m := range []string{"text/plain", "image/png", "application/pdf"} {
		b := blobs[m]
		res, err := h.read(t, b.handle)
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		c := res.Contents[0]
		got := c.Text
		if m != "text/plain" {
			got = string(c.Blob)
		}
		if c.MIMEType != m || got != string(b.bytes) || c.URI != b.handle {
			t.Errorf("%s: resource %s %q (%d bytes)", m, c.MIMEType, c.URI, len(got))
		}
	}
	_, err := h.read(t, blobs["application/zip"].handle)
	if err == nil || !strings.Contains(err.Error(), "blob_too_large") || !strings.Contains(err.Error(), strconv.Itoa(len(blobs["application/zip"].bytes))) {
		t.Errorf("oversize resource: %v", err)
	}
	// A bare blob id under two connections: the RS's 409 names them, and
	// the advice is the handles that read it.
	res := h.call(t, "fetch", map[string]any{"id": "pdpp://blob/" + shared.id})
	if !res.IsError || !strings.Contains(text(res), "ambiguous_connection") || !strings.Contains(text(res), "pdpp://blob/"+shared.conn+"/"+shared.id) {
		t.Errorf("ambiguous blob: %s", text(res))
	}
	res = h.call(t, "fetch", map[string]any{"id": "pdpp://blob/" + shared.conn + "/blob_sha256_" + strings.Repeat("0", 64)})
	if !res.IsError || !strings.Contains(text(res), "blob_not_found") || !strings.Contains(text(res), "grants nothing by itself") {
		t.Errorf("unknown blob: %s", text(res))
	}
}

// hostileBlobs is an RS whose blob route answers whatever a case asks.
func hostileBlobs(t *testing.T, serve func(w http.ResponseWriter, r *http.Request)) *harness {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(serve))
	t.Cleanup(hs.Close)
	return newHarness(t, harnessOptions{blobMax: 1 << 10, rs: func(*pdpptest.Server) tools.RS {
		c, err := rs.New(rs.Options{BaseURL: hs.URL, Token: func() string { return "tok_hostile_blob_secret" }})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}})
}

// An image over the image bound is described, never sent.
func TestBlobLargeImageIsMetadata(t *testing.T) {
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR"), make([]byte, tools.BlobImageBytes)...)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(png)
	}))
	t.Cleanup(hs.Close)
	h := newHarness(t, harnessOptions{rs: func(*pdpptest.Server) tools.RS {
		c, err := rs.New(rs.Options{BaseURL: hs.URL, Token: func() string { return "tok_large_image" }})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}})
	res := h.call(t, "fetch", map[string]any{"id": "pdpp://blob/cin_a/big_png"})
	doc := gjson.Parse(text(res))
	if res.IsError || doc.Get("metadata.kind").Str != "binary" || doc.Get("metadata.resource").Str != "pdpp://blob/cin_a/big_png" ||
		!strings.Contains(doc.Get("metadata.shown").Str, "over the 1048576 bytes") {
		t.Errorf("large image: %s", text(res))
	}
	for _, c := range res.Content {
		if _, ok := c.(*mcp.ImageContent); ok {
			t.Error("an image over the bound was sent as image content")
		}
	}
}

func TestBlobHostileRS(t *testing.T) {
	addressed := "blob_sha256_" + strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name  string
		serve func(w http.ResponseWriter, r *http.Request)
		id    string
		want  []string // in the text
		isErr bool
	}{
		{"sha256 mismatch is said, never verified", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = w.Write([]byte("not the bytes the id names"))
		}, addressed, []string{"MISMATCH", "unverified", "not the bytes the id names"}, false},
		{"the record's digest, carried by the handle, is checked", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/pdf")
			_, _ = w.Write([]byte("%PDF-1.4 not what the record says"))
		}, "blob_x?sha256=" + strings.Repeat("0", 64), []string{"MISMATCH", "states sha256 " + strings.Repeat("0", 64), "unverified"}, false},
		{"invalid UTF-8 text is repaired and said", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/csv")
			_, _ = w.Write([]byte("a,b\n\xff\xfe,c\n"))
		}, "blob_x", []string{"a,b\\n\ufffd", "not valid UTF-8"}, false},
		{"no content type is octet-stream metadata", func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Content-Type"] = nil
			_, _ = w.Write([]byte{0, 1, 2, 3})
		}, "blob_x", []string{`"kind":"binary"`, "application/octet-stream"}, false},
		{"oversize without Content-Length", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			for i := 0; i < 8; i++ {
				_, _ = w.Write([]byte(strings.Repeat("x", 512)))
				w.(http.Flusher).Flush()
			}
		}, "blob_x", []string{"blob_too_large", "more than 1024 bytes", "bearer"}, true},
		{"404 blob_not_found", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"error":{"code":"blob_not_found","message":"Blob not found"}}`))
		}, "blob_x", []string{"blob_not_found", "http_status=404", "grants nothing by itself"}, true},
		{"409 names the connections", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(409)
			_, _ = w.Write([]byte(`{"error":{"code":"ambiguous_connection","message":"Blob is exposed under more than one connection",` +
				`"retry_with":"connection_id","available_connections":[{"connection_id":"cin_a"},{"connection_id":"cin_b"}]}}`))
		}, "blob_x", []string{"ambiguous_connection", "pdpp://blob/cin_a/blob_x, pdpp://blob/cin_b/blob_x"}, true},
		{"redirect is not followed", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "https://elsewhere.example/blob", http.StatusFound)
		}, "blob_x", []string{"rs_redirect"}, true},
		{"bytes holding the bearer are refused", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("echo tok_hostile_blob_secret"))
		}, "blob_x", []string{"holds the bearer token"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := hostileBlobs(t, func(w http.ResponseWriter, r *http.Request) {
				if id, _, _ := strings.Cut(tc.id, "?"); r.URL.Path != "/v1/blobs/"+id || r.URL.RawQuery != "" {
					t.Errorf("request %s", r.URL.Path)
				}
				tc.serve(w, r)
			})
			res := h.call(t, "fetch", map[string]any{"id": "pdpp://blob/" + tc.id})
			if res.IsError != tc.isErr {
				t.Errorf("isError %v: %s", res.IsError, text(res))
			}
			for _, w := range tc.want {
				if !strings.Contains(text(res), w) {
					t.Errorf("%q missing from %s", w, text(res))
				}
			}
			if strings.Contains(text(res), "verified") && !strings.Contains(text(res), "unverified") {
				t.Errorf("a blob is called verified: %s", text(res))
			}
		})
	}
}

// resource_link blocks name the records and blobs of a result, only for
// revisions that have them (2025-06-18 on), and each link reads.
func TestResourceLinks(t *testing.T) {
	srv := pdpptest.New(t, pdpptest.Options{})
	c, err := rs.New(rs.Options{BaseURL: srv.URL(), Token: func() string { return srv.Token(pdpptest.TokenClient) }})
	if err != nil {
		t.Fatal(err)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "v0"}, nil)
	tools.Register(s, &tools.Env{RS: c, ProviderURL: srv.URL()})
	calls := []struct {
		tool string
		args map[string]any
		want []string // link URIs that must be among the links
	}{
		{"fetch", map[string]any{"id": "cin_gmail_personal/attachments:p_msg_002_att_1"}, []string{gmailBlob}},
		{"fetch", map[string]any{"id": gmailBlob}, []string{gmailBlob}},
		{"search", map[string]any{"q": "Lisbon"}, nil},
		{"query_records", map[string]any{"stream": "attachments", "connection_id": "cin_gmail_personal", "limit": 3}, []string{gmailBlob}},
		{"read_record_field", map[string]any{"id": "cin_gmail_personal/message_bodies:p_msg_002_body", "field_path": "body_text"}, nil},
	}
	for _, version := range []string{"2025-03-26", "2025-06-18", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			ctx := context.Background()
			st, ct := mcp.NewInMemoryTransports()
			ss, err := s.Connect(ctx, st, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ss.Close()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			for _, call := range calls {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: call.tool, Arguments: call.args})
				if err != nil || res.IsError {
					t.Fatalf("%s %v: %v %v", call.tool, call.args, err, res)
				}
				var uris []string
				for _, c := range res.Content {
					if l, ok := c.(*mcp.ResourceLink); ok {
						uris = append(uris, l.URI)
						if l.Name == "" {
							t.Errorf("%s: a link without a name", call.tool)
						}
						if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: l.URI}); err != nil {
							t.Errorf("%s: link %s does not read: %v", call.tool, l.URI, err)
						}
					}
				}
				switch {
				case version < "2025-06-18" && len(uris) > 0:
					t.Errorf("%s: %d resource_link blocks on %s", call.tool, len(uris), version)
				case version >= "2025-06-18" && len(uris) == 0:
					t.Errorf("%s: no resource_link on %s", call.tool, version)
				case len(uris) > 5:
					t.Errorf("%s: %d links, over the bound", call.tool, len(uris))
				}
				for _, w := range call.want {
					if version >= "2025-06-18" && !slices.Contains(uris, w) {
						t.Errorf("%s: no link to %s in %v", call.tool, w, uris)
					}
				}
			}
		})
	}
}

// Every text that shows a blob_ref prints a handle naming the connection,
// and the handle reads: read_record_field's window of the binary field and
// query_records previews included, with or without connection_id.
func TestBlobHandlesInEveryText(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	for _, c := range []struct {
		tool string
		args map[string]any
		// shows: the text shows this blob (a bounded preview may leave
		// the member out, and then only what it shows is checked).
		shows bool
	}{
		{"read_record_field", map[string]any{"id": "attachments:p_msg_002_att_1", "connection_id": "cin_gmail_personal", "field_path": "blob_ref"}, true},
		{"read_record_field", map[string]any{"id": "cin_gmail_personal/attachments:p_msg_002_att_1", "field_path": "blob_ref"}, true},
		{"query_records", map[string]any{"stream": "attachments", "connection_id": "cin_gmail_personal"}, true},
		{"query_records", map[string]any{"stream": "attachments", "fields": []string{"filename", "blob_ref"}}, true},
		{"fetch", map[string]any{"id": "cin_gmail_personal/attachments:p_msg_002_att_1"}, true},
	} {
		res := h.call(t, c.tool, c.args)
		txt := text(res)
		if res.IsError || c.shows && !strings.Contains(txt, gmailBlob) {
			t.Errorf("%s %v: no connection-scoped blob handle in %s", c.tool, c.args, txt)
		}
		if n, scoped := strings.Count(txt, "pdpp://blob/"), strings.Count(txt, "pdpp://blob/cin_"); n != scoped {
			t.Errorf("%s %v: %d of %d blob handles name no connection: %s", c.tool, c.args, n-scoped, n, txt)
		}
	}
	if res := h.call(t, "fetch", map[string]any{"id": gmailBlob}); res.IsError {
		t.Errorf("the printed handle does not read: %s", text(res))
	}
}
