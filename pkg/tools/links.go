package tools

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/evidence"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/resultid"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/visible"
)

// maxLinks bounds the resource_link blocks of one result; the text handles
// name every record and blob whatever the bound leaves out.
const maxLinks = 5

// linkRevision is the protocol revision that added resource_link content.
const linkRevision = "2025-06-18"

// links collects the resource_link blocks of one result: the records and
// blobs it names, each once, in the order named. Hosts that read resources
// follow them; the text keeps its handles for hosts that do not.
type links struct {
	out  []mcp.Content
	seen map[string]bool
}

// full reports whether the result has all the links it may have.
func (l *links) full() bool { return len(l.out) == maxLinks }

func (l *links) add(rl *mcp.ResourceLink) {
	if l.full() || l.seen[rl.URI] {
		return
	}
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	l.seen[rl.URI] = true
	l.out = append(l.out, rl)
}

// record links the record id (as a tool printed it) to pdpp://record/.
func (l *links) record(id string) {
	if l.full() {
		return // parsing the id would be wasted
	}
	rid, err := resultid.Parse(id)
	if err != nil {
		return
	}
	l.add(&mcp.ResourceLink{URI: rid.Handle(), Name: rid.String(), MIMEType: "application/json"})
}

// blob links a blob handle that names its connection (only those match
// the resource template). mimeType is already under the visible rule.
func (l *links) blob(handle, mimeType string, size *int64) {
	if l.full() {
		return
	}
	h, _, err := resultid.ParseBlobURI(handle)
	if err != nil || h.ConnectionID() == "" {
		return
	}
	l.add(&mcp.ResourceLink{URI: h.ResourceURI(), Name: visible.String(h.BlobID()), MIMEType: mimeType, Size: size})
}

// entry links a ladder entry's record and its blobs.
func (l *links) entry(e *evidence.Entry) {
	l.record(e.ID)
	for _, b := range e.BinaryFields {
		if b.Fetch != "" {
			l.blob(b.Fetch, b.MIMEType, b.SizeBytes)
		}
	}
}

// ladder links every entry of a record_set or search ladder.
func (l *links) ladder(lad *evidence.Ladder) {
	for i := range lad.Records {
		l.entry(&lad.Records[i])
	}
}

// linksAllowed reports whether the caller's revision has resource_link
// content.
func linksAllowed(req *mcp.CallToolRequest) bool { return Protocol(req) >= linkRevision }

// Protocol returns the revision the session of req negotiated: its
// initialize parameters, else the MCP-Protocol-Version header the request
// carries (a request answered without the SDK's session, hosted or over
// stdio, has it there), else "" (treated as the oldest).
func Protocol(req mcp.Request) string {
	if req == nil {
		return ""
	}
	if s, ok := req.GetSession().(*mcp.ServerSession); ok && s != nil {
		if p := s.InitializeParams(); p != nil && p.ProtocolVersion != "" {
			return p.ProtocolVersion
		}
	}
	if e := req.GetExtra(); e != nil && e.Header != nil {
		return e.Header.Get("MCP-Protocol-Version")
	}
	return ""
}

// withoutLinks drops resource_link blocks, for revisions that lack them.
func withoutLinks(cs []mcp.Content) []mcp.Content {
	out := cs[:0:0]
	for _, c := range cs {
		if _, ok := c.(*mcp.ResourceLink); !ok {
			out = append(out, c)
		}
	}
	return out
}
