package tools_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/fanout"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/resultid"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/rs"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/tools"
)

func TestResourceTemplatesList(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	var got []string
	for rt, err := range h.cs.ResourceTemplates(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rt.Name+" "+rt.URITemplate+" "+rt.MIMEType)
		if rt.Title == "" || rt.Description == "" {
			t.Errorf("%s has no title or description", rt.Name)
		}
	}
	// The SDK lists templates sorted by URI template.
	want := []string{
		"pdpp-blob pdpp://blob/{connection_id}/{blob_id} ",
		"pdpp-field-window pdpp://field-window/{handle} text/plain",
		"pdpp-record pdpp://record/{handle} application/json",
		"pdpp-stream pdpp://stream/{name} application/json",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("templates\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func (h *harness) read(t *testing.T, uri string) (*mcp.ReadResourceResult, error) {
	t.Helper()
	res, err := h.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err == nil && strings.Contains(res.Contents[0].Text, h.token) {
		t.Fatal("the bearer token appears in a resource")
	}
	return res, err
}

// Each resource returns what a tool returns, so no content is reachable only
// through resources/read.
func TestResourceReads(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	rec, _ := resultid.New("cin_gmail_personal", "message_bodies", "p_msg_002_body")
	fw := resultid.FieldWindow{Record: rec, FieldPath: "body_text", OffsetChars: ptr(20), LimitChars: ptr(40)}
	fwURI, err := fw.URI()
	if err != nil {
		t.Fatal(err)
	}

	// The field window is read_record_field's text, byte for byte.
	res, err := h.read(t, fwURI)
	if err != nil {
		t.Fatal(err)
	}
	tool := h.call(t, "read_record_field", map[string]any{"id": rec.String(), "field_path": "body_text", "offset_chars": 20, "limit_chars": 40})
	if c := res.Contents[0]; c.Text != text(tool) || c.MIMEType != "text/plain" || c.URI != fwURI {
		t.Errorf("field window resource %+v\nwant text %q", c, text(tool))
	}

	// The record: the RS record with binary values as metadata; fetch reads
	// the same fields.
	for _, uri := range []string{rec.Handle(), "pdpp://record/cin_gmail_personal%2Fmessage_bodies%3Ap_msg_002_body"} {
		res, err = h.read(t, uri)
		if err != nil {
			t.Fatal(err)
		}
		doc := gjson.Parse(res.Contents[0].Text)
		if res.Contents[0].MIMEType != "application/json" || doc.Get("id").Str != "p_msg_002_body" || doc.Get("connection_id").Str != "cin_gmail_personal" ||
			!strings.HasPrefix(doc.Get("data.body_text").Str, "Booking confirmation LX-4821") {
			t.Errorf("record resource %s: %.300s", uri, res.Contents[0].Text)
		}
	}
	h.rs.ResetRequests()
	res, err = h.read(t, "pdpp://record/cin_gmail_personal%2Fattachments%3Ap_msg_002_att_1")
	if err != nil || !strings.Contains(res.Contents[0].Text, `"blob_ref":{"binary":"blob_ref","blob_id":"blob_sha256_`) {
		t.Errorf("blob record resource: %v %.300s", err, res.Contents[0].Text)
	}
	if reqs := h.requests(t); len(reqs) != 1 || reqs[0].String() != "/v1/streams/attachments/records/p_msg_002_att_1?connection_id=cin_gmail_personal" {
		t.Errorf("requests %v", reqs)
	}

	// The stream: GET /v1/streams/{name} as the RS sent it.
	res, err = h.read(t, resultid.StreamURI("messages"))
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(t, res.Contents[0].Text, h.direct(t, "/v1/streams/messages", nil)) {
		t.Errorf("stream resource %.300s", res.Contents[0].Text)
	}
}

func ptr(n int) *int { return &n }

// A failed read is a JSON-RPC error with the tools' error text, never a
// successful read of an error document.
func TestResourceErrors(t *testing.T) {
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, tc := range []struct {
		name     string
		uri      string
		code     int64
		pdpp     string
		text     string
		requests int
	}{
		{"traversal record", "pdpp://record/cin%2Fmessages%3A..", jsonrpc.CodeInvalidParams, "invalid_id", "path traversal", 0},
		{"malformed record handle", "pdpp://record/" + b64(`{"v":2,"kind":"record","stream":"s","record_id":"r"}`), jsonrpc.CodeInvalidParams, "invalid_id", "wrong version", 0},
		{"field window with the wrong kind", "pdpp://field-window/" + b64(`{"v":1,"kind":"record","stream":"s","record_id":"r"}`), jsonrpc.CodeInvalidParams, "invalid_resource_uri", "wrong kind", 0},
		{"field window selector", "pdpp://field-window/" + b64(`{"v":1,"kind":"field-window","connection_id":"cin_gmail_work","stream":"s","record_id":"r","field_path":"f","cursor":"1","offset_chars":2}`),
			jsonrpc.CodeInvalidParams, "invalid_field_window_selector", "`cursor` is exclusive with `offset_chars`", 0},
		{"stream traversal", "pdpp://stream/%2E%2E", jsonrpc.CodeInvalidParams, "invalid_resource_uri", "path traversal", 0},
		{"record not found", "pdpp://record/cin_gmail_work%2Fmessages%3Anope", jsonrpc.CodeInvalidParams, "not_found", "http_status=404", 1},
		{"ambiguous record", "pdpp://record/labels%3AINBOX", jsonrpc.CodeInvalidParams, "ambiguous_connection", `call again with connection_id set to one of "cin_gmail_personal"`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{})
			_, err := h.read(t, tc.uri)
			var je *jsonrpc.Error
			if !errors.As(err, &je) {
				t.Fatalf("error %v (%T), want a JSON-RPC error", err, err)
			}
			if je.Code != tc.code || gjson.GetBytes(je.Data, "code").Str != tc.pdpp || gjson.GetBytes(je.Data, "uri").Str != tc.uri ||
				!strings.Contains(je.Message, tc.text) || !strings.HasPrefix(je.Message, "error code="+tc.pdpp) {
				t.Errorf("code %d data %s message:\n%s", je.Code, je.Data, je.Message)
			}
			if n := len(h.rs.Requests()); n != tc.requests {
				t.Errorf("%d RS requests, want %d", n, tc.requests)
			}
		})
	}

	// An RS failure (5xx) is an internal error.
	h := newHarness(t, harnessOptions{})
	h.rs.Fault(pdpptest.Fault{Path: "/v1/streams/messages", Status: 503})
	_, err := h.read(t, "pdpp://stream/messages")
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInternalError || gjson.GetBytes(je.Data, "http_status").Int() != 503 {
		t.Errorf("RS failure: %v", err)
	}
}

// On a package of two mail grants (one connection each) the fan-out cannot
// read a stream's metadata without a connection: completion offers only
// values that say which, and every value it offers reads.
func TestEveryCompletionValueReads(t *testing.T) {
	ds := demoDataset(t)
	srv := pdpptest.New(t, pdpptest.Options{Dataset: ds, Now: dataset.DemoTime})
	_, pms := srv.IssuePackage(pdpptest.PackageChild{ConnectionID: dataset.DemoPersonalMailConnection},
		pdpptest.PackageChild{ConnectionID: dataset.DemoWorkMailConnection})
	var ms []fanout.Member
	for _, pm := range pms {
		c, err := rs.New(rs.Options{BaseURL: srv.URL(), Token: func() string { return pm.Token }, CompatSearchShapes: true})
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, fanout.Member{GrantID: pm.GrantID, ConnectionIDs: []string{pm.ConnectionID}, ConnectorKey: pm.ConnectorKey,
			DisplayName: pm.DisplayName, Streams: pm.Streams, RS: c})
	}
	fc, err := fanout.New(fanout.Options{Members: ms})
	if err != nil {
		t.Fatal(err)
	}
	env := &tools.Env{RS: fc, ProviderURL: srv.URL()}
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "v0"}, &mcp.ServerOptions{CompletionHandler: tools.Completion(env)})
	tools.Register(s, env)
	cs := connect(t, s)
	ctx := context.Background()
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "pdpp://stream/mail_messages"}); err == nil {
		t.Fatal("the fan-out read a stream two members hold without a connection; the test no longer shows the problem")
	}
	// Templates with nothing to complete offer nothing; the stream template
	// offers values, each of which reads.
	read := 0
	for rt, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(rt.URITemplate[strings.LastIndex(rt.URITemplate, "{")+1:], "}")
		res, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: rt.URITemplate},
			Argument: mcp.CompleteParamsArgument{Name: name, Value: ""}})
		if err != nil {
			t.Fatalf("%s: %v", rt.URITemplate, err)
		}
		for _, v := range res.Completion.Values {
			uri := strings.Replace(rt.URITemplate, "{"+name+"}", url.PathEscape(v), 1)
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err != nil {
				t.Errorf("completion offered %q, and %s does not read: %v", v, uri, err)
			}
			read++
		}
	}
	if read == 0 {
		t.Error("no completion value was read")
	}
}
