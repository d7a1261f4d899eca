package resultid

import (
	"strings"
	"testing"
)

func TestParseBlobURI(t *testing.T) {
	for _, tc := range []struct {
		in           string
		conn, blob   string
		offset       int
		wantErr      string
		roundTripURI string // "" means in itself
	}{
		{in: "pdpp://blob/cin_a/blob_sha256_ab", conn: "cin_a", blob: "blob_sha256_ab"},
		{in: "pdpp://blob/blob_1", blob: "blob_1"},
		{in: "pdpp://blob/cin_a/a%2Fb%20c?offset_chars=12", conn: "cin_a", blob: "a/b c", offset: 12},
		{in: "pdpp://blob/cin_a/x:y", conn: "cin_a", blob: "x:y", roundTripURI: "pdpp://blob/cin_a/x%3Ay"},
		{in: "pdpp://blob/c/b?sha256=" + strings.Repeat("a", 64) + "&offset_chars=5", conn: "c", blob: "b", offset: 5},
		{in: "pdpp://blob/c/blob_sha256_" + strings.Repeat("a", 64) + "?sha256=" + strings.Repeat("a", 64), conn: "c",
			blob: "blob_sha256_" + strings.Repeat("a", 64), roundTripURI: "pdpp://blob/c/blob_sha256_" + strings.Repeat("a", 64)},
		{in: "pdpp://blob/c/b?sha256=ABC", wantErr: "sha256="},
		{in: "pdpp://blob/c/b?offset_chars=1&offset_chars=2", wantErr: "repeats"},
		{in: "pdpp://blob/", wantErr: "does not match"},
		{in: "pdpp://record/cin_a/b", wantErr: "does not match"},
		{in: "pdpp://blob/a/b/c", wantErr: "more than two segments"},
		{in: "pdpp://blob/cin_a/..", wantErr: "path traversal"},
		{in: "pdpp://blob/cin_a/%zz", wantErr: "URI-encoded"},
		{in: "pdpp://blob/cin_a/b?offset_chars=-1", wantErr: "offset_chars="},
		{in: "pdpp://blob/cin_a/b?limit=3", wantErr: "offset_chars="},
		{in: "pdpp://blob/cin_a/b#frag", wantErr: "fragment"},
		{in: "pdpp://blob/cin_a/%00", wantErr: "control character"},
	} {
		b, off, err := ParseBlobURI(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || err.(*Error).Code != CodeInvalidResourceURI {
				t.Errorf("%s: err %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || b.ConnectionID() != tc.conn || b.BlobID() != tc.blob || off != tc.offset {
			t.Errorf("%s: %q %q %d %v", tc.in, b.ConnectionID(), b.BlobID(), off, err)
			continue
		}
		want := tc.roundTripURI
		if want == "" {
			want = tc.in
		}
		if got := b.At(off); got != want {
			t.Errorf("%s: formats as %s, want %s", tc.in, got, want)
		}
	}
}

func TestParseStreamRefURI(t *testing.T) {
	for _, tc := range []struct{ in, conn, name, wantErr string }{
		{in: "pdpp://stream/messages", name: "messages"},
		{in: "pdpp://stream/cin_a%2Fmessages", conn: "cin_a", name: "messages"},
		{in: "pdpp://stream/" + StreamRef("cin_a", "m"), wantErr: "does not match"}, // unescaped "/"
		{in: "pdpp://stream/%2Fmessages", wantErr: "connection_id"},
		{in: "pdpp://stream/cin_a%2F", wantErr: "stream name"},
	} {
		c, n, err := ParseStreamRefURI(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || c != tc.conn || n != tc.name {
			t.Errorf("%s: %q %q %v", tc.in, c, n, err)
		}
	}
}

// Whatever a blob handle holds, its formatted form parses back to it.
func FuzzParseBlobURI(f *testing.F) {
	for _, s := range []string{"pdpp://blob/cin_a/blob_1", "pdpp://blob/b", "pdpp://blob/c/a%2Fb?offset_chars=3", "pdpp://blob/%C3%A9/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, off, err := ParseBlobURI(s)
		if err != nil {
			return
		}
		back, off2, err := ParseBlobURI(b.At(off))
		if err != nil || back != b || off2 != off {
			t.Fatalf("%q formats as %q, which parses to %+v %d %v", s, b.At(off), back, off2, err)
		}
	})
}
