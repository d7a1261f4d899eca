#!/usr/bin/env bash
# mcpb.sh GOOS GOARCH BINARY VERSION OUT.mcpb: build a Claude Desktop bundle
# (manifest plus the static binary) for one platform, validated with the
# bundle tool from the npm registry (packaging/mcpb/package.json pins it).
# mcpb.sh --check [BINARY]: build one for this machine (from BINARY, a static
# linux pdpp-mcp, or a fresh build), validate, pack, unpack it
# again and run the server the manifest names through a demo session.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
tools=packaging/mcpb
if [ ! -x "$tools/node_modules/.bin/mcpb" ]; then
	(cd "$tools" && npm install --no-audit --no-fund --loglevel=error)
fi
mcpb() { "$root/$tools/node_modules/.bin/mcpb" "$@"; }

build() {
	local goos=$1 goarch=$2 bin=$3 version=$4 out=$5 stage platform exe
	case $goos in
		linux) platform=linux exe=pdpp-mcp ;;
		darwin) platform=darwin exe=pdpp-mcp ;;
		windows) platform=win32 exe=pdpp-mcp.exe ;;
		*) echo "mcpb.sh: unsupported GOOS $goos"; return 64 ;;
	esac
	stage=$(mktemp -d)
	mkdir "$stage/server"
	cp "$bin" "$stage/server/$exe"
	chmod 755 "$stage/server/$exe"
	cp LICENSE "$stage/LICENSE"
	sed -e "s/@VERSION@/${version#v}/g" -e "s/@PLATFORM@/$platform/g" -e "s/@EXE@/$exe/g" \
		"$tools/manifest.json.tmpl" >"$stage/manifest.json"
	mcpb validate "$stage/manifest.json"
	mcpb pack "$stage" "$out" >/dev/null
	rm -rf "$stage"
	echo "$out"
}

if [ "${1:-}" != "--check" ]; then
	[ $# -eq 5 ] || { echo "usage: mcpb.sh GOOS GOARCH BINARY VERSION OUT.mcpb | --check [BINARY]"; exit 64; }
	build "$@"
	exit
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=${2:-}
if [ -z "$bin" ]; then
	bin=$work/pdpp-mcp
	CGO_ENABLED=0 go build -trimpath -ldflags "-X github.com/pdpp-mcp/pdpp-mcp/internal/version.version=0.0.0-mcpbtest" -o "$bin" ./cmd/pdpp-mcp
fi
build linux "$(go env GOARCH)" "$bin" 0.0.0-mcpbtest "$work/pdpp-mcp.mcpb"
mcpb info "$work/pdpp-mcp.mcpb"
mcpb unpack "$work/pdpp-mcp.mcpb" "$work/unpacked" >/dev/null
mcpb validate "$work/unpacked/manifest.json"
# Run what the manifest says a host runs, with --demo in place of the
# user's provider URL (the demo ignores it and needs no credential cache).
cmd=$(node -e 'const m=require(process.argv[1]); console.log(m.server.mcp_config.command.replace("${__dirname}", process.argv[2]))' "$work/unpacked/manifest.json" "$work/unpacked")
node scripts/release/mcp-smoke.mjs "$cmd" --demo
