#!/usr/bin/env bash
# Builds pdpp-mcp and runs check.mjs with the official TypeScript MCP SDK
# client, over stdio and then over hosted HTTP (needs Node 18+ and the npm
# registry). Not part of .ci/run: it needs npm, and the go-sdk client tests
# cover the same results in CI.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
go build -o "$here/pdpp-mcp" "$root/cmd/pdpp-mcp"
cd "$here"
npm install --no-audit --no-fund --silent
node check.mjs "$here/pdpp-mcp"
echo "--- the same calls over hosted Streamable HTTP (pdpp-mcp --demo --http)"
node check.mjs "$here/pdpp-mcp" --http
