package pdpptest

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

const (
	gmailPersonalBlob = "blob_sha256_c514bff25a8680e2bda41ec474006756282def0bcc3690db3cf55dad1c4837e6"
	gmailWorkBlob     = "blob_sha256_96d47e0fa0b3b651095acba03018ee9faffcdfd61f19ed4b5f1f214377300621"
)

func TestBlobRead(t *testing.T) {
	srv := New(t, Options{})
	for _, tc := range []struct {
		name, token, target string
	}{
		{"client", srv.Token(TokenClient), "/v1/blobs/" + gmailPersonalBlob},
		{"client naming the connection", srv.Token(TokenClient), "/v1/blobs/" + gmailPersonalBlob + "?connection_id=cin_gmail_personal"},
		{"owner", srv.Token(TokenOwner), "/v1/blobs/" + gmailPersonalBlob},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := get(t, srv, tc.token, tc.target)
			wantOK(t, a)
			want := srv.Dataset().Blobs[gmailPersonalBlob].Bytes
			if string(a.body) != string(want) {
				t.Errorf("body = %q, want %q", a.body, want)
			}
			for h, v := range map[string]string{
				"Content-Type": "text/plain", "Content-Length": "108", "Cache-Control": "private, no-store",
				"X-Content-Type-Options": "nosniff", "Content-Disposition": "attachment", "PDPP-Version": pdppVersion,
			} {
				if got := a.header.Get(h); got != v {
					t.Errorf("%s = %q, want %q", h, got, v)
				}
			}
			if a.header.Get("Request-Id") == "" || a.header.Get("PDPP-Warning") != "" {
				t.Errorf("headers = %v", a.header)
			}
		})
	}
	// The bytes are the ones the reference served.
	want, err := os.ReadFile(filepath.Join(fixturesDir, "blob-read.raw"))
	if err != nil {
		t.Fatal(err)
	}
	if a := get(t, srv, srv.Token(TokenClient), "/v1/blobs/"+gmailPersonalBlob); string(a.body) != string(want) {
		t.Errorf("body differs from the capture")
	}
	// The fetch_url injected on record reads leads here.
	rec := get(t, srv, srv.Token(TokenClient), "/v1/streams/attachments/records/w_msg_002_att_1?connection_id=cin_gmail_work")
	wantOK(t, rec)
	wantOK(t, get(t, srv, srv.Token(TokenClient), rec.j("data.blob_ref.fetch_url").String()))
}

func TestBlobVisibility(t *testing.T) {
	srv := New(t, Options{Dataset: fwDataset(t)})
	client, owner := srv.Token(TokenClient), srv.Token(TokenOwner)
	windowed, noblob := srv.IssueClientToken("window"), srv.IssueClientToken("noblob")
	for _, tc := range []struct {
		name, token, target string
		status              int
		code, param         string
	}{
		{"referenced by a readable record", client, "/v1/blobs/blob_one", 200, "", ""},
		{"unknown id", client, "/v1/blobs/blob_nope", 404, "blob_not_found", ""},
		{"stored but referenced by no record", client, "/v1/blobs/blob_orphan", 404, "blob_not_found", ""},
		{"stored but referenced by no record, owner", owner, "/v1/blobs/blob_orphan", 404, "blob_not_found", ""},
		{"referencing record outside the time window", windowed, "/v1/blobs/blob_old", 404, "blob_not_found", ""},
		{"same record, broader grant", client, "/v1/blobs/blob_old", 200, "", ""},
		{"blob_ref not granted", noblob, "/v1/blobs/blob_one", 404, "blob_not_found", ""},
		{"referenced under a connection outside the grant", windowed, "/v1/blobs/blob_shared", 200, "", ""},
		{"referenced under two connections", client, "/v1/blobs/blob_shared", 409, "ambiguous_connection", ""},
		{"referenced under two connections, owner", owner, "/v1/blobs/blob_shared", 409, "ambiguous_connection", ""},
		{"two connections, one named", client, "/v1/blobs/blob_shared?connection_id=cin_b", 200, "", ""},
		{"named connection without a reference", client, "/v1/blobs/blob_one?connection_id=cin_b", 404, "blob_not_found", ""},
		{"client connection outside the grant", windowed, "/v1/blobs/blob_one?connection_id=cin_b", 401, "context.instance_mismatch", ""},
		{"owner unknown connection", owner, "/v1/blobs/blob_one?connection_id=cin_zzz", 404, "connection_not_found", "connection_id"},
		{"alias conflict", client, "/v1/blobs/blob_one?connection_id=cin_a&connector_instance_id=cin_b", 400, "invalid_argument", "connector_instance_id"},
		{"no bearer", "", "/v1/blobs/blob_one", 401, "authentication_error", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := get(t, srv, tc.token, tc.target)
			if tc.status == http.StatusOK {
				wantOK(t, a)
				return
			}
			wantError(t, a, tc.status, tc.code, tc.param)
		})
	}
	a := get(t, srv, client, "/v1/blobs/blob_shared")
	if a.j("error.available_connections").Raw != `[{"connection_id":"cin_a","display_name":"Alpha"},{"connection_id":"cin_b"}]` ||
		a.j("error.retry_with").String() != "connection_id" || a.j("error.type").String() != "api_error" {
		t.Errorf("ambiguity = %s", a.body)
	}
}

func TestBlobHeaders(t *testing.T) {
	srv := New(t, Options{Dataset: fwDataset(t)})
	client, owner := srv.Token(TokenClient), srv.Token(TokenOwner)
	for _, tc := range []struct {
		name, target, ctype, disposition, warning string
	}{
		{"text is an attachment", "/v1/blobs/blob_one", "text/plain; charset=utf-8", "attachment", ""},
		{"png renders inline", "/v1/blobs/blob_shared?connection_id=cin_a", "image/png", "", ""},
		{"pdf renders inline", "/v1/blobs/blob_old", "application/pdf", "", ""},
		{"deprecated alias", "/v1/blobs/blob_shared?connector_instance_id=cin_b", "image/png", "", "deprecated_alias_used: connector_instance_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := get(t, srv, owner, tc.target)
			wantOK(t, a)
			if a.header.Get("Content-Type") != tc.ctype || a.header.Get("Content-Disposition") != tc.disposition ||
				a.header.Get("PDPP-Warning") != tc.warning || a.header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("headers = %v", a.header)
			}
		})
	}
	// HEAD answers the headers without the bytes.
	req, err := http.NewRequest(http.MethodHead, srv.URL()+"/v1/blobs/blob_one", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+client)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || len(body) != 0 || resp.Header.Get("Content-Length") != "23" {
		t.Errorf("HEAD: %d, %d body bytes, Content-Length %q", resp.StatusCode, len(body), resp.Header.Get("Content-Length"))
	}
}

// TestBlobGmailGrantWithoutAttachments: a grant that withholds the stream
// holding the blob_ref cannot fetch the blob, even knowing its id.
func TestBlobGmailGrantWithoutAttachments(t *testing.T) {
	srv := New(t, Options{Dataset: gmailWith(t, map[string]string{"narrow": narrowGrant})})
	wantError(t, get(t, srv, srv.IssueClientToken("narrow"), "/v1/blobs/"+gmailPersonalBlob), http.StatusNotFound, "blob_not_found", "")
	wantOK(t, get(t, srv, srv.Token(TokenClient), "/v1/blobs/"+gmailWorkBlob))
}
