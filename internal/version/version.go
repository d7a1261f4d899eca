// Package version reports what a binary was built from. Release builds stamp
// it with the linker:
//
//	go build -ldflags "-X github.com/pdpp-mcp/pdpp-mcp/internal/version.version=v1.2.3
//	  -X github.com/pdpp-mcp/pdpp-mcp/internal/version.commit=<sha>
//	  -X github.com/pdpp-mcp/pdpp-mcp/internal/version.date=<RFC 3339>"
//
// An unstamped build falls back to the module build information: the tag of
// `go install …@vX.Y.Z`, else a development version naming the VCS revision.
package version

import (
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
)

// Set by -ldflags -X; empty in a development build.
var (
	version string
	commit  string
	date    string
)

// Info is what one build knows about itself.
type Info struct {
	Version string // "v1.2.3", or "0.0.0-devel[+rev[.dirty]]"
	Commit  string // full VCS revision, "" when unknown
	Date    string // build or commit time, RFC 3339, "" when unknown
	Dev     bool   // not a stamped release nor a tagged module build
}

// Get returns the build's Info, computed once.
func Get() Info { return infoOnce() }

// Version is Get().Version.
func Version() string { return Get().Version }

// String is the one line --version prints after the command name.
func String() string { return Get().String() }

func (i Info) String() string {
	var extra []string
	if i.Dev {
		extra = append(extra, "development build")
	}
	if i.Commit != "" {
		c := i.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		extra = append(extra, "commit "+c)
	}
	if i.Date != "" {
		extra = append(extra, "built "+i.Date)
	}
	if len(extra) == 0 {
		return i.Version
	}
	return i.Version + " (" + strings.Join(extra, ", ") + ")"
}

// pseudo matches a module pseudo-version's time-and-revision part.
var pseudo = regexp.MustCompile(`[-.]\d{14}-[0-9a-f]{12}(\+dirty)?$`)

var infoOnce = sync.OnceValue(func() Info {
	bi, _ := debug.ReadBuildInfo()
	return resolve(version, commit, date, bi)
})

// resolve prefers the stamped values and fills the gaps from bi (nil when
// the binary carries no build information).
func resolve(stampV, stampC, stampD string, bi *debug.BuildInfo) Info {
	var rev, vcsTime, modVer string
	var dirty bool
	if bi != nil {
		modVer = bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				vcsTime = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	info := Info{Version: stampV, Commit: stampC, Date: stampD}
	if info.Commit == "" {
		info.Commit = rev
	}
	if info.Date == "" {
		info.Date = vcsTime
	}
	switch {
	case info.Version != "":
		// A snapshot stamp ("…-SNAPSHOT-…", "…-next") is still not a release.
		info.Dev = strings.Contains(info.Version, "SNAPSHOT") || strings.Contains(info.Version, "devel")
	case modVer != "" && modVer != "(devel)":
		// Since Go 1.24 a plain `go build` in a checkout records a
		// pseudo-version ("+dirty" when modified): still a development build.
		info.Version = modVer
		info.Dev = pseudo.MatchString(modVer) || strings.HasSuffix(modVer, "+dirty")
	default:
		info.Dev = true
		info.Version = "0.0.0-devel"
		if rev != "" {
			short := rev
			if len(short) > 12 {
				short = short[:12]
			}
			info.Version += "+" + short
			if dirty {
				info.Version += ".dirty"
			}
		}
	}
	return info
}
