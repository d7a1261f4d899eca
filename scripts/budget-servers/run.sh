#!/usr/bin/env bash
# pdpp-mcp-budget on MCP servers this project did not write: the go-sdk's
# examples/server/everything and examples/server/memory at the go-sdk
# version go.mod requires, mark3labs/mcp-go's examples/everything, built
# from the module proxy into a temporary directory (their code is never
# copied here), and the TypeScript @modelcontextprotocol/server-everything
# from npm. TestThirdParty* in cmd/pdpp-mcp-budget then measures each over
# stdio (and the go-sdk's everything over Streamable HTTP with -http): every
# tool named, the tools array equal to the bytes on the wire, a scenario's
# results budgeted, limits and baselines failing as they should.
#
#   scripts/budget-servers/run.sh        # ~20 s once the caches are warm
#
# Needs Go and the module proxy, npm and Node (the machine's when it is 20
# or newer, else Node 22 from the npm `node` package, installed next to the
# server).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tools="$here/.tools"
mcpgo_version=v1.2.1
everything_version=2026.8.31

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The module's own directory in the module cache, downloaded if need be.
moddir() { (cd "$out" && go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'); }

sdk_version=$(cd "$root" && go list -m -f '{{.Version}}' github.com/modelcontextprotocol/go-sdk)
sdk=$(moddir "github.com/modelcontextprotocol/go-sdk@$sdk_version")
mcpgo=$(moddir "github.com/mark3labs/mcp-go@$mcpgo_version")
[ -d "$sdk" ] && [ -d "$mcpgo" ] || { echo "budget-servers: could not download the go-sdk $sdk_version or mcp-go $mcpgo_version" >&2; exit 1; }
(cd "$sdk" && go build -o "$out/everything" ./examples/server/everything && go build -o "$out/memory" ./examples/server/memory)
(cd "$mcpgo" && go build -o "$out/mcpgo-everything" ./examples/everything)

pkg="$tools/node_modules/@modelcontextprotocol/server-everything"
if [ ! -f "$pkg/package.json" ] || ! grep -q "\"version\": \"$everything_version\"" "$pkg/package.json"; then
	mkdir -p "$tools"
	npm install --prefix "$tools" --no-audit --no-fund --silent "@modelcontextprotocol/server-everything@$everything_version" >&2
fi
node=$(command -v node || true)
if [ -z "$node" ] || [ "$("$node" -p 'process.versions.node.split(".")[0]')" -lt 20 ]; then
	[ -x "$tools/node_modules/.bin/node" ] || npm install --prefix "$tools" --no-audit --no-fund --silent node@22 >&2
	node="$tools/node_modules/.bin/node"
fi

echo "budget-servers: go-sdk $sdk_version, mcp-go $mcpgo_version, server-everything $everything_version on Node $("$node" --version)"
cd "$root"
# pipefail: go test's status is the script's; grep keeps the verdicts and
# what each server measured.
PDPP_MCP_BUDGET_SERVERS="$out" PDPP_MCP_BUDGET_NODE_SERVER="$node $pkg/dist/index.js stdio" \
	go test -count=1 -run '^TestThirdParty' -v ./cmd/pdpp-mcp-budget | grep -E '^(--- |ok|FAIL|PASS)|^ +(--- |thirdparty_test.go)'
