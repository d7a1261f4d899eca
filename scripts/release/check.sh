#!/usr/bin/env bash
# check.sh [DIST]: validate .goreleaser.yaml and build a snapshot release of
# linux/amd64 and darwin/arm64 (all four commands, archives and checksums)
# of what is committed, without publishing; then check the linux binary is
# static and stamped (verify-dist.sh, shared with check-fallback.sh). The
# snapshot is kept in DIST when given (dry-run.sh goes on from it).
#
# goreleaser is built once per version into a cache folder and reused:
# building it cold costs minutes of CPU (see the README's release section).
# GORELEASER=/path/to/goreleaser skips that and uses the one given.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)

version=v2.15.1
cache=${PDPP_MCP_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pdpp-mcp/tools}
gr=${GORELEASER:-$cache/goreleaser-$version/goreleaser}
if [ ! -x "$gr" ]; then
	echo "check.sh: building goreleaser $version into $(dirname "$gr") (once per version)"
	GOBIN=$(dirname "$gr") CGO_ENABLED=0 go install "github.com/goreleaser/goreleaser/v2@$version"
fi
"$gr" --version | grep -q "${version#v}" || { echo "check.sh: $gr is not goreleaser $version"; exit 1; }

"$gr" check

# Build from a clone of what is committed: goreleaser reads the commit from
# git, and a clone has the remote it insists on asking about.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q . "$work/src"
# The same configuration narrowed to the two required targets: goreleaser
# has no target filter for a whole snapshot, so a copy sets targets on the
# shared build settings (the anchor every build merges).
sed 's/^    goos: &goos \[linux, darwin, windows\]$/    targets: \&targets [linux_amd64_v1, darwin_arm64_v8.0]/; s/^    goos: \*goos$/    targets: *targets/; /^    goarch: /d' \
	.goreleaser.yaml >"$work/goreleaser.yaml"
grep -q 'targets: &targets' "$work/goreleaser.yaml" || { echo "check.sh: could not narrow the targets"; exit 1; }
(cd "$work/src" && "$gr" release --snapshot --clean --skip=publish,announce,sign,sbom,docker,ko --config "$work/goreleaser.yaml")
bash "$root/scripts/release/verify-dist.sh" "$work/src/dist"
if [ -n "${1:-}" ]; then rm -rf "$1" && mv "$work/src/dist" "$1"; fi
echo "check.sh: configuration valid; snapshot of linux/amd64 and darwin/arm64 built"
