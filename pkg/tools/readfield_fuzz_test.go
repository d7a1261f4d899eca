package tools

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/pdpp-mcp/pdpp-mcp/pkg/evidence"
	"github.com/pdpp-mcp/pdpp-mcp/pkg/resultid"
)

// Whatever the arguments, read_record_field either refuses them with a
// complete error or names one record, one readable field and one window.
func FuzzReadFieldRequest(f *testing.F) {
	for _, in := range []string{
		`{"id":"cin_a/s:r","field_path":"body"}`,
		`{"id":"s:r","connection_id":"cin_a","field_path":"body","cursor":"12"}`,
		`{"connection_id":"c","stream":"s","record_id":"a/b","field_path":"f","q":"x","before_chars":3}`,
		`{"id":"pdpp://record/c%2Fs%3Ar","field_path":"f","offset_chars":5,"limit_chars":9}`,
		`{"id":"c/s:..","field_path":"f"}`, `{"field_path":"a,b","id":"s:r"}`, `{"id":"s:r","field_path":"f","cursor":"-1"}`,
	} {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var a readFieldArgs
		err := readFieldTool.args.decode(json.RawMessage(in), &a)
		var r *fieldRead
		if err == nil {
			r, err = a.request()
		}
		if err != nil {
			var te *toolError
			if !errors.As(err, &te) || te.Code == "" || te.Message == "" || te.Next == "" {
				t.Fatalf("%s: %v is not a complete *toolError", in, err)
			}
			return
		}
		back, perr := resultid.Parse(r.id.String())
		switch {
		case perr != nil || back != r.id:
			t.Fatalf("%s: id %q does not parse back: %v", in, r.id.String(), perr)
		case !evidence.FieldPathOK(r.field):
			t.Fatalf("%s: field %q accepted", in, r.field)
		case r.q != "" && r.offset != nil:
			t.Fatalf("%s: both q and an offset", in)
		case r.q == "" && (r.before != nil || r.after != nil):
			t.Fatalf("%s: context without q", in)
		case r.offset != nil && *r.offset < 0:
			t.Fatalf("%s: negative offset", in)
		case r.limit != nil && (*r.limit < 1 || *r.limit > evidence.MaxWindowChars):
			t.Fatalf("%s: limit %d", in, *r.limit)
		}
	})
}
