#!/usr/bin/env bash
# bundles.sh DIST VERSION OUTDIR [TARGET...]: build the Claude Desktop bundle
# pdpp-mcp_<VERSION>_<os>_<arch>.mcpb of each TARGET (os_arch; default: the
# six the release attaches and server.json lists) into OUTDIR, from the
# binaries of a goreleaser dist folder. The release workflow runs it on the
# release's dist; verify-dist.sh on the snapshot's.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 3 ] || { echo "usage: bundles.sh DIST VERSION OUTDIR [TARGET...]"; exit 64; }
dist=$1 version=${2#v} out=$3
shift 3
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(darwin_arm64 darwin_amd64 windows_amd64 windows_arm64 linux_amd64 linux_arm64)
mkdir -p "$out"
for target in "${targets[@]}"; do
	goos=${target%_*} goarch=${target#*_}
	exe=pdpp-mcp
	[ "$goos" = windows ] && exe=pdpp-mcp.exe
	# goreleaser names a build's folder <id>_<os>_<arch>[_<variant>].
	bins=("$dist"/pdpp-mcp_"$target"*/"$exe")
	[ ${#bins[@]} -eq 1 ] && [ -f "${bins[0]}" ] || { echo "bundles.sh: no single $exe for $target in $dist"; exit 1; }
	bash scripts/release/mcpb.sh "$goos" "$goarch" "${bins[0]}" "$version" "$out/pdpp-mcp_${version}_${target}.mcpb"
done
