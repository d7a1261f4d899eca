#!/usr/bin/env bash
# mcpb.sh GOOS GOARCH BINARY VERSION OUT.mcpb: build a Claude Desktop bundle
# (manifest plus the static binary) for one platform, validated with the
# bundle tool from the npm registry (packaging/mcpb/package.json pins it).
# mcpb.sh --check [BINARY]: build one for this machine (from BINARY, a static
# linux pdpp-mcp, or a fresh build), validate, pack, unpack it
# again and run the server the manifest names, as Claude Desktop starts it,
# against the resource server double (BINARY's folder holds pdpptest, or it
# is built).
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
	cp packaging/icons/pdpp-mcp.png "$stage/icon.png"
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
# Run the manifest's own command line as Claude Desktop fills it in
# (mcpb-desktop.mjs), against the resource server double with a credential
# cached as `pdpp connect` would: every field set, the optional ones left
# unset (they arrive as literal ${user_config.*} text) and left blank. The
# server starts in an empty folder that must stay empty.
pdpptest=$(dirname "$bin")/pdpptest
if [ ! -x "$pdpptest" ]; then
	pdpptest=$work/pdpptest
	CGO_ENABLED=0 go build -trimpath -o "$pdpptest" ./cmd/pdpptest
fi
"$pdpptest" --dataset demo --addr 127.0.0.1:0 >"$work/rs.out" 2>"$work/rs.log" &
rs_pid=$!
trap 'kill "$rs_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do
	grep -q '^client ' "$work/rs.out" && break
	sleep 0.1
done
rs_url=$(sed -n 's/^url  *//p' "$work/rs.out")
token=$(sed -n 's/^client  *//p' "$work/rs.out")
[ -n "$rs_url" ] && [ -n "$token" ] || { echo "mcpb.sh: the resource server double did not start"; cat "$work/rs.out" "$work/rs.log"; exit 1; }
cache() { # cache ROOT: the credential file `pdpp connect` writes for rs_url
	mkdir -p "$1/clients"
	printf '{"provider_url":"%s","scope":"pdpp:read","credential":{"access_token":"%s","token_type":"Bearer","expires_at":"2099-01-01T00:00:00.000Z"}}\n' \
		"$rs_url" "$token" >"$1/clients/$(sed 's|^http://||; s|[^A-Za-z0-9.-]|_|g' <<<"$rs_url").json"
}
export HOME=$work/home
cache "$HOME/.pdpp"
cache "$work/picked"
desktop() { # desktop NAME CONFIG_JSON
	rm -rf "$work/cwd" && mkdir "$work/cwd"
	echo "mcpb.sh: $1"
	MCPB_CWD=$work/cwd node scripts/release/mcpb-desktop.mjs "$work/unpacked" "$2"
	if [ -n "$(ls -A "$work/cwd")" ]; then
		echo "mcpb.sh: $1: the server wrote into its working directory:"; ls -A "$work/cwd"; exit 1
	fi
}
desktop "every field set" "{\"provider_url\":\"$rs_url\",\"cache_root\":\"$work/picked\",\"log_file\":\"$work/set.log\"}"
grep -q 'pdpp-mcp' "$work/set.log" || { echo "mcpb.sh: the log file that was set stayed empty"; exit 1; }
desktop "optional fields unset" "{\"provider_url\":\"$rs_url\"}"
desktop "optional fields blank" "{\"provider_url\":\"$rs_url\",\"cache_root\":\"\",\"log_file\":\"\"}"
echo "mcpb.sh: the bundle's command line serves with its fields set, unset and blank"
