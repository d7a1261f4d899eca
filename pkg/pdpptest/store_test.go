package pdpptest

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/pdpptest/dataset"
)

// FuzzCompactLen checks the counting shortcut against encoding/json.
func FuzzCompactLen(f *testing.F) {
	for _, seed := range []string{`{}`, `{ "a" : [ 1 , 2 ] }`, `{"s":"a \" b \\\\ c"}`, "{\n\t\"k\": \"v w\"\r\n}", `{"e":"\u00e9"}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			t.Fatal(err)
		}
		if got := compactLen(raw); got != buf.Len() {
			t.Fatalf("compactLen(%q) = %d, want %d", raw, got, buf.Len())
		}
	})
}

func TestStoredRecord(t *testing.T) {
	r, err := newStoredRecord(dataset.Record{Key: "k", EmittedAt: "2026-01-01T00:00:00.000Z", Data: json.RawMessage(`{
		"s": "plain", "e": "caf\u00e9 \"q\"", "n": -12.5, "i": 3, "t": true, "f": false, "z": null,
		"a": [1, "x"], "o": {"p": 1},
		"blob_ref": {"blob_id": "b1", "mime_type": "text/plain", "fetch_url": "/v1/blobs/b1"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]any{
		"s": "plain", "e": `café "q"`, "n": json.Number("-12.5"), "i": json.Number("3"), "t": true, "f": false, "z": nil,
	} {
		if got := r.value(field); got != want {
			t.Errorf("value(%s) = %#v, want %#v", field, got, want)
		}
	}
	if got, ok := r.value("a").(json.RawMessage); !ok || string(got) != `[1, "x"]` {
		t.Errorf("value(a) = %#v", r.value("a"))
	}
	// The stored size leaves out the fetch_url the server injects.
	stored := `{"s":"plain","e":"caf\u00e9 \"q\"","n":-12.5,"i":3,"t":true,"f":false,"z":null,"a":[1,"x"],"o":{"p":1},` +
		`"blob_ref":{"blob_id":"b1","mime_type":"text/plain"}}`
	if r.jsonBytes != len(stored) {
		t.Errorf("jsonBytes = %d, want %d", r.jsonBytes, len(stored))
	}
	if ref, _ := r.raw("blob_ref"); bytes.Contains(ref, []byte("fetch_url")) {
		t.Errorf("stored blob_ref keeps fetch_url: %s", ref)
	}
	if _, err := newStoredRecord(dataset.Record{Key: "bad", Data: json.RawMessage(`[1]`)}); err == nil {
		t.Error("a non-object record was accepted")
	}
}
