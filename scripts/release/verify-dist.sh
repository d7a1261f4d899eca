#!/usr/bin/env bash
# verify-dist.sh DIST: the checks both release paths (check.sh with
# goreleaser, check-fallback.sh without) run on a snapshot's dist folder:
# checksums match, both required targets are archived with the four
# commands, and the linux/amd64 binary is static, trimmed and stamped.
# dry-run.sh takes the release's next steps (bundles, npm) on the same dist.
set -euo pipefail
dist=${1:?usage: verify-dist.sh DIST}

ls "$dist"/*.tar.gz "$dist"/checksums.txt
(cd "$dist" && sha256sum -c checksums.txt)
for want in linux_amd64 darwin_arm64; do
	archive=$(ls "$dist"/pdpp-mcp_*_"$want".tar.gz)
	listing=$(tar tzf "$archive")
	for cmd in pdpp-mcp pdpp-mcp-probe pdpp-mcp-budget pdpptest LICENSE; do
		grep -qx "$cmd" <<<"$listing" || { echo "$archive: no $cmd"; exit 1; }
	done
done
bin=$(ls -d "$dist"/pdpp-mcp_linux_amd64*/pdpp-mcp)
go version -m "$bin" | grep -q 'CGO_ENABLED=0' || { echo "$bin: not CGO_ENABLED=0"; exit 1; }
go version -m "$bin" | grep -q -- '-trimpath=true' || { echo "$bin: not -trimpath"; exit 1; }
if command -v readelf >/dev/null && readelf -l "$bin" | grep -q INTERP; then
	echo "$bin is dynamically linked"; exit 1
fi
"$bin" --version
"$bin" --version | grep -Eq 'SNAPSHOT.*\(development build, commit [0-9a-f]{12}, built 20' || { echo "$bin: version not stamped"; exit 1; }
