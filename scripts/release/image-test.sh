#!/usr/bin/env bash
# image-test.sh [BINARY]: build the container image as an OCI layout tar with
# no container engine (scripts/release/ociimage), unpack it, check its config
# (entrypoint, nonroot user, MCP server label) and run the entrypoint from the
# unpacked root: a stdio demo session, then --http with /healthz and /readyz.
# Then the same tarball in a container engine (podman-test.sh): loaded, run
# over stdio, published on a port, and with the credential mount and user
# the README documents.
# BINARY must be a static linux/amd64 pdpp-mcp; default: a fresh build.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
pid=
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

bin=${1:-}
if [ -z "$bin" ]; then
	bin=$work/pdpp-mcp
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -ldflags "-X github.com/pdpp-mcp/pdpp-mcp/internal/version.version=0.0.0-imagetest" -o "$bin" ./cmd/pdpp-mcp
fi
go run ./scripts/release/ociimage build -bin "$bin" -arch amd64 -version 0.0.0-imagetest -o "$work/image.tar"
ls -l "$work/image.tar"
go run ./scripts/release/ociimage extract -i "$work/image.tar" -dir "$work/rootfs" >"$work/config.json"

check() { grep -q "$1" "$work/config.json" || { echo "image config lacks $1"; cat "$work/config.json"; exit 1; }; }
check '"User": "65532:65532"'
check '"/usr/local/bin/pdpp-mcp"'
check '"io.modelcontextprotocol.server.name": "io.github.pdpp-mcp/pdpp-mcp"'
entry=$work/rootfs/usr/local/bin/pdpp-mcp
test -x "$entry"

node scripts/release/mcp-smoke.mjs "$entry" --demo

# Hosted mode on a free loopback port; the address comes from its stderr.
# The log exists before the loop reads it: the background shell may open it
# only after the first read.
: >"$work/http.log"
"$entry" --demo --http 127.0.0.1:0 2>"$work/http.log" &
pid=$!
addr=
for _ in $(seq 1 100); do
	addr=$(sed -n 's|.*serving hosted MCP at http://\([0-9.:]*\)/mcp.*|\1|p' "$work/http.log" | head -1)
	[ -n "$addr" ] && break
	sleep 0.1
done
[ -n "$addr" ] || { echo "hosted mode did not start"; cat "$work/http.log"; exit 1; }
curl -fsS "http://$addr/healthz"; echo
curl -fsS "http://$addr/readyz"; echo
kill -TERM "$pid"
wait "$pid"
pid=
echo "image-test: image runs unpacked (stdio demo, /healthz, /readyz)"

bash scripts/release/podman-test.sh "$work/image.tar" "$bin"
