package evidence

import (
	"encoding/json"
	"testing"
)

// ladderFrom builds a ladder that uses every field, with s and t as the
// strings, n as the numbers and the bits of flags choosing which optional
// parts are present.
func ladderFrom(s, t string, n int, flags uint16) Ladder {
	bit := func(i uint) bool { return flags&(1<<i) != 0 }
	str := func(i uint, v string) string {
		if bit(i) {
			return v
		}
		return ""
	}
	ptr := func(i uint, v int) *int {
		if bit(i) {
			return &v
		}
		return nil
	}
	size := int64(n) * 1000
	var sizeBytes *int64
	if bit(3) {
		sizeBytes = &size
	}
	read := Read{Tool: s, Args: ReadArgs{ID: t, FieldPath: str(4, s), OffsetChars: ptr(5, n), LimitChars: n * int(flags&1),
		Q: str(6, t), BeforeChars: ptr(7, -n), AfterChars: ptr(8, n+1)}}
	if bit(9) {
		read.Args.Fields = []string{s, t}
	} else if bit(10) {
		read.Args.Fields = []string{}
	}
	e := Entry{Kind: str(0, s), ReadTool: str(1, t), ID: s + t, ConnectionID: NullString(str(2, t)), Stream: s, RecordID: t,
		HandleSemantics: LiveLookup, MoreFields: n * int(flags>>15), ShownWhole: n, Notes: []string{t}}
	if bit(11) {
		e.FieldWindows = []TextField{{FieldPath: s, TextLike: bit(12), HandleSemantics: t, PreviewStatus: StatusTruncated, SizeChars: ptr(13, n), PreviewText: str(14, t), Read: read}}
		e.JSONFields = []JSONField{{FieldPath: t, JSONField: true, TextLike: bit(12), HandleSemantics: s, PreviewStatus: s, SizeChars: n, PreviewText: str(14, s), Read: read}}
		e.BinaryFields = []BinaryField{{FieldPath: s, BinaryField: true, HandleSemantics: t, PreviewStatus: StatusBinaryOnly, BlobID: str(0, s), MIMEType: str(1, t),
			SizeBytes: sizeBytes, SHA256: str(2, s), FetchURL: str(4, t), Fetch: str(6, s), Encoding: str(13, t), SizeChars: ptr(14, n)}}
	} else if bit(12) {
		e.FieldWindows, e.JSONFields, e.BinaryFields = []TextField{}, []JSONField{}, []BinaryField{}
	}
	l := Ladder{Kind: s, ReadTool: t, MoreRecords: n * int(flags&2), WithoutID: n * int(flags&4)}
	if bit(15) {
		l.Notes = []string{s, t, ""}
	}
	if bit(13) || bit(11) {
		l.Records = []Entry{e, {ID: t}}
	} else if bit(14) {
		l.Records = []Entry{}
	}
	return l
}

var ladderSeeds = []struct {
	s, t  string
	n     int
	flags uint16
}{
	{"record_set", "read_record_field", 25, 0xffff},
	{"", "", 0, 0},
	{"<b>&amp;</b>", "\u2028\u2029\b\f\x00\x7f\xff", -3, 0xaaaa},
	{"é😀\"\\/", "tab\tnl\n", 1 << 40, 0x5555},
}

func FuzzLadderJSON(f *testing.F) {
	for _, s := range ladderSeeds {
		f.Add(s.s, s.t, s.n, s.flags)
	}
	f.Fuzz(func(t *testing.T, s, u string, n int, flags uint16) {
		l := ladderFrom(s, u, n, flags)
		want, err := json.Marshal(&l)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.AppendJSON(nil); string(got) != string(want) {
			t.Fatalf("ladder:\n got %s\nwant %s", got, want)
		}
		for i := range l.Records {
			want, _ := json.Marshal(&l.Records[i])
			if got := l.Records[i].AppendJSON([]byte("x")); string(got) != "x"+string(want) {
				t.Fatalf("entry:\n got %s\nwant x%s", got, want)
			}
		}
	})
}
