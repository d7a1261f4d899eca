package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"},
		{Key: "vcs.time", Value: "2026-11-25T10:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	for _, tc := range []struct {
		name       string
		v, c, d    string
		bi         *debug.BuildInfo
		want       Info
		wantString string
	}{
		{name: "stamped release", v: "v1.4.0", c: "abcdefabcdefabcdef", d: "2026-11-25T12:00:00Z",
			bi:         &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs},
			want:       Info{Version: "v1.4.0", Commit: "abcdefabcdefabcdef", Date: "2026-11-25T12:00:00Z"},
			wantString: "v1.4.0 (commit abcdefabcdef, built 2026-11-25T12:00:00Z)"},
		{name: "stamped snapshot", v: "1.4.1-SNAPSHOT-abcdef", c: "abcdef", d: "2026-11-25T12:00:00Z",
			want:       Info{Version: "1.4.1-SNAPSHOT-abcdef", Commit: "abcdef", Date: "2026-11-25T12:00:00Z", Dev: true},
			wantString: "1.4.1-SNAPSHOT-abcdef (development build, commit abcdef, built 2026-11-25T12:00:00Z)"},
		{name: "go install of a tag", bi: &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}},
			want: Info{Version: "v1.4.0"}, wantString: "v1.4.0"},
		{name: "pseudo-version", bi: &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261122120000-0123456789ab"}},
			want: Info{Version: "v0.0.0-20261122120000-0123456789ab", Dev: true}, wantString: "v0.0.0-20261122120000-0123456789ab (development build)"},
		{name: "go build in a modified checkout", bi: &debug.BuildInfo{Main: debug.Module{Version: "v1.4.1-0.20261122120000-0123456789ab+dirty"}},
			want: Info{Version: "v1.4.1-0.20261122120000-0123456789ab+dirty", Dev: true}, wantString: "v1.4.1-0.20261122120000-0123456789ab+dirty (development build)"},
		{name: "devel with revision", bi: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs},
			want:       Info{Version: "0.0.0-devel+0123456789ab.dirty", Commit: "0123456789abcdef0123", Date: "2026-11-25T10:00:00Z", Dev: true},
			wantString: "0.0.0-devel+0123456789ab.dirty (development build, commit 0123456789ab, built 2026-11-25T10:00:00Z)"},
		{name: "devel without VCS", bi: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			want: Info{Version: "0.0.0-devel", Dev: true}, wantString: "0.0.0-devel (development build)"},
		{name: "no build info", want: Info{Version: "0.0.0-devel", Dev: true}, wantString: "0.0.0-devel (development build)"},
	} {
		got := resolve(tc.v, tc.c, tc.d, tc.bi)
		if got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
		if s := got.String(); s != tc.wantString {
			t.Errorf("%s: String() = %q, want %q", tc.name, s, tc.wantString)
		}
	}
}

func TestTestBinaryIsDevelopment(t *testing.T) {
	// go test never stamps, so this binary must call itself a development build.
	if !Get().Dev || !strings.Contains(String(), "development build") {
		t.Errorf("test binary: %+v", Get())
	}
}
