#!/usr/bin/env bash
# verify-dist.sh DIST: the checks both release paths (check.sh with
# goreleaser, check-fallback.sh without) run on a snapshot's dist folder:
# checksums match, both required targets are archived with the four
# commands, the linux/amd64 binary is static, trimmed and stamped, and the
# npm packages and a bundle build from it as in the release workflow.
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

# The release workflow's next steps on this dist, short of publishing: the
# npm packages (npm.mjs finds each target's binary) and a bundle from the
# darwin/arm64 binary (bundles.sh finds it and mcpb validates and packs it;
# mcpb.sh --check runs a linux one).
root=$(cd "$(dirname "$0")/../.." && pwd)
version=$(basename "$(ls "$dist"/pdpp-mcp_*_linux_amd64.tar.gz)" | sed 's/^pdpp-mcp_\(.*\)_linux_amd64\.tar\.gz$/\1/')
node "$root/scripts/release/npm.mjs" --version "$version" --out "$dist/npm" --dist "$dist" >/dev/null
for pkg in pdpp-mcp linux-x64 darwin-arm64; do
	test -f "$dist/npm/$pkg/package.json" || { echo "npm.mjs made no $pkg package from $dist"; exit 1; }
done
bash "$root/scripts/release/bundles.sh" "$dist" "$version" "$dist/mcpb" darwin_arm64 >/dev/null
test -s "$dist/mcpb/pdpp-mcp_${version}_darwin_arm64.mcpb" || { echo "bundles.sh made no darwin_arm64 bundle"; exit 1; }
echo "verify-dist: npm packages and a darwin_arm64 bundle built from $dist"
