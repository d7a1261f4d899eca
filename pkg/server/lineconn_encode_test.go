package server

import (
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestEncodeAnswerFraming: an answer whose result the SDK has encoded is
// framed without encoding it again, and the frame is byte for byte what the
// SDK's own encoder gives (with the client's id swapped in); a result that is
// not valid UTF-8 still becomes an internal error.
func TestEncodeAnswerFraming(t *testing.T) {
	c := &lineConn{log: slog.New(slog.DiscardHandler)}
	for _, result := range []string{
		`{}`,
		`{"content":[{"type":"text","text":"<b>&amp;</b> é \u2028 \"q\""}],"structuredContent":{"data":{"a":[1,2.5,null,true]}}}`,
		`{"tools":[],"nextCursor":"x"}`,
	} {
		resp := &jsonrpc.Response{ID: intID(9), Result: json.RawMessage(result)}
		sdk, err := jsonrpc.EncodeMessage(resp)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{`9`, `"a<b>"`, `-3`} {
			want := string(withClientID(sdk, 9, []byte(id)))
			if got := string(c.encodeAnswer(resp, 9, []byte(id))); got != want {
				t.Errorf("framed:\n%s\nSDK:\n%s", got, want)
			}
		}
	}
	bad := &jsonrpc.Response{ID: intID(2), Result: json.RawMessage("{\"text\":\"\xff\"}")}
	if got := string(c.encodeAnswer(bad, 2, []byte(`"x"`))); !strings.Contains(got, `"id":"x","error":{"code":-32603`) {
		t.Errorf("invalid UTF-8 result: %s", got)
	}
}

// TestWriteLineOneWrite: a line and its newline go out in one write.
func TestWriteLineOneWrite(t *testing.T) {
	var w countingWriter
	c := &lineConn{out: &w}
	if err := c.writeLine([]byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if w.writes != 1 || w.data != "{\"a\":1}\n" {
		t.Errorf("%d writes of %q", w.writes, w.data)
	}
}

type countingWriter struct {
	writes int
	data   string
}

func (w *countingWriter) Write(b []byte) (int, error) {
	w.writes++
	w.data += string(b)
	return len(b), nil
}

var _ io.Writer = (*countingWriter)(nil)
