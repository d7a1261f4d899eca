#!/usr/bin/env bash
# Builds pdpp-mcp and runs the official TypeScript MCP SDK client against it
# (needs Node 18+ and the npm registry):
#   - startup.mjs: with no credential cached, the client's connect fails with
#     pdpp-mcp's guidance instead of "Connection closed", and the process
#     exits 78;
#   - check.mjs: every kind of tool result, success and error, over stdio and
#     then over hosted HTTP (the go-sdk client tests cover the same results).
# With --startup only the first runs; .ci/run runs that part.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
go build -o "$here/pdpp-mcp" "$root/cmd/pdpp-mcp"
cd "$here"
npm install --no-audit --no-fund --silent
echo "--- start-up failure as a host sees it"
node startup.mjs "$here/pdpp-mcp"
if [ "${1:-}" = "--startup" ]; then
	exit 0
fi
echo "--- tool results over stdio (pdpp-mcp --demo)"
node check.mjs "$here/pdpp-mcp"
echo "--- the same calls over hosted Streamable HTTP (pdpp-mcp --demo --http)"
node check.mjs "$here/pdpp-mcp" --http
