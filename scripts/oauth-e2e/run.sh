#!/usr/bin/env bash
# The hosted demo's OAuth journey with real clients: the TypeScript MCP SDK's
# OAuth client and Gemini CLI's MCP OAuth provider (gemini-oauth.mjs, which
# enforces RFC 9207 iss), with headless Chromium on the consent page, from
# the 401 challenge to a served tool call, then again across a restart of
# the demo (e2e.mjs). Installs Chromium from Debian when it is missing, and
# the SDK, Gemini CLI, playwright-core and Node 22 from npm next to this
# script on first run.
#
#   scripts/oauth-e2e/run.sh                              # builds pdpp-mcp
#   PDPP_MCP_BIN=bin/pdpp-mcp scripts/oauth-e2e/run.sh    # uses that binary
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tools="$here/.tools"
if ! command -v chromium >/dev/null; then
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >&2
fi
# Reinstall when package.json changed since the last install.
if ! cmp -s "$here/package.json" "$tools/package.json"; then
	rm -rf "$tools"
	mkdir -p "$tools"
	cp "$here/package.json" "$tools/package.json"
	npm install --prefix "$tools" --no-audit --no-fund --silent >&2
fi
bin=${PDPP_MCP_BIN:-}
if [ -z "$bin" ]; then
	bin="$tools/pdpp-mcp"
	go build -o "$bin" "$root/cmd/pdpp-mcp"
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
# They resolve their imports from $tools/node_modules.
cp "$here/e2e.mjs" "$here/gemini-oauth.mjs" "$tools/"
"$tools/node_modules/.bin/node" "$tools/e2e.mjs" "$bin" "$(command -v chromium)"
