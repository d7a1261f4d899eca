package tools_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"
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
	if got := doc.Get("metadata.sha256_check").Str; got != "matches the sha256 the blob id names" {
		t.Errorf("sha256_check %q", got)
	}
	if reqs := h.requests(t); len(reqs) != 1 || reqs[0].String() != "/v1/blobs/blob_sha256_c514bff25a8680e2bda41ec474006756282def0bcc3690db3cf55dad1c4837e6?connection_id=cin_gmail_personal" {
		t.Errorf("requests %v", reqs)
	}
}
