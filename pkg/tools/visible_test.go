package tools

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pdpp-mcp/pdpp-mcp/internal/hiddenrs"
	"github.com/pdpp-mcp/pdpp-mcp/internal/jsonw"
)

// The nets behind the rendering of each string: a hidden character that
// reaches a result's text or a document without having been rendered (raw,
// or as an escape encoding/json writes) is marked all the same, in the text
// and in the structured copy, and the result counts its marks.
func TestHiddenCharactersNets(t *testing.T) {
	doc := &blobDoc{ID: "pdpp://blob/b", Title: "bell\x07 zw\u200b", Text: "esc\x1b[0m " + hiddenrs.Tags}
	res := shown(documentResult(doc, nil))
	text := res.Content[0].(*mcp.TextContent).Text
	enc, ok := res.StructuredContent.(jsonw.Encoded)
	if !ok {
		t.Fatalf("structuredContent is %T", res.StructuredContent)
	}
	structured := string(enc)
	for _, s := range []string{text, structured} {
		for _, p := range hiddenrs.Problems(s) {
			t.Errorf("%s in %s", p, s)
		}
		if !strings.Contains(s, "⟦hidden U+0007⟧") || !strings.Contains(s, "⟦hidden tags “"+hiddenrs.Sentence+"”⟧") ||
			!strings.Contains(s, `"hidden_marks":"hidden_marks=4 `) {
			t.Errorf("not marked and counted: %s", s)
		}
	}

	res = shown(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "line " + hiddenrs.ANSI + " and ⟦hidden U+200B⟧"}}})
	text = res.Content[0].(*mcp.TextContent).Text
	if want := "line ⟦hidden U+001B⟧[31mred⟦hidden U+001B⟧[0m and ⟦hidden U+200B⟧\nhidden_marks=3 "; !strings.HasPrefix(text, want) {
		t.Errorf("net:\n got %s\nwant %s…", text, want)
	}
}
