#!/usr/bin/env bash
# check-fallback.sh [DIST]: check.sh's checks without goreleaser, for machines
# where building goreleaser (minutes of CPU) does not fit, such as CI on a
# fresh machine. configcheck loads .goreleaser.yaml with goreleaser's own
# strict loader, refuses fields goreleaser marks deprecated (goreleaser
# check fails on them too), checks what this project relies on (static, trimmed,
# stamped builds for linux, darwin and windows on amd64 and arm64; archives;
# sha256 checksums), then builds a snapshot of linux/amd64 and darwin/arm64
# from that configuration with go build, as goreleaser would lay it out.
# What only goreleaser checks (its defaults, the other sections) and its
# own build and packing stay with check.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd scripts/release/configcheck && go build -o "$work/configcheck" .)

# The working tree's configuration, as goreleaser check reads it.
"$work/configcheck" check -config .goreleaser.yaml

# The snapshot is built from a clone of what is committed, as in check.sh.
git clone -q . "$work/src"
"$work/configcheck" snapshot -src "$work/src" -targets linux/amd64,darwin/arm64
bash "$root/scripts/release/verify-dist.sh" "$work/src/dist"
if [ -n "${1:-}" ]; then rm -rf "$1" && mv "$work/src/dist" "$1"; fi
echo "check-fallback.sh: configuration valid; snapshot of linux/amd64 and darwin/arm64 built without goreleaser"
