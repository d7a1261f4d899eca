#!/usr/bin/env bash
# The hosted demo's OAuth journey with real clients, headless Chromium on the
# consent page, from the 401 challenge to a served tool call, then again
# across a restart of the demo on the same port:
#   sdk    the TypeScript MCP SDK's OAuth client and Gemini CLI's MCP OAuth
#          provider (gemini-oauth.mjs, which enforces RFC 9207 iss) (e2e.mjs);
#   hosts  Claude Code's CLI (mcp add, mcp login under a pty, mcp list, and
#          the -32050 refusal of a stdio entry printed inline), mcp-remote
#          and Codex (mcp login, app-server), each with a throwaway HOME and
#          no account (hosts.mjs).
# Installs Chromium from Debian when it is missing, and the clients,
# playwright-core and Node 22 from npm next to this script on first run.
#
#   scripts/oauth-e2e/run.sh                              # builds pdpp-mcp, runs both
#   PDPP_MCP_BIN=bin/pdpp-mcp scripts/oauth-e2e/run.sh    # uses that binary
#   scripts/oauth-e2e/run.sh hosts                        # one journey
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tools="$here/.tools"
journeys=("$@")
[ ${#journeys[@]} -gt 0 ] || journeys=(sdk hosts)
for j in "${journeys[@]}"; do
	case $j in
	sdk | hosts) ;;
	*)
		echo "usage: $0 [sdk] [hosts]" >&2
		exit 64
		;;
	esac
done
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
cp "$here/lib.mjs" "$here/e2e.mjs" "$here/gemini-oauth.mjs" "$here/hosts.mjs" "$tools/"
for j in "${journeys[@]}"; do
	case $j in
	sdk) script=e2e.mjs ;;
	hosts) script=hosts.mjs ;;
	esac
	start=$SECONDS
	"$tools/node_modules/.bin/node" "$tools/$script" "$bin" "$(command -v chromium)"
	echo "oauth-e2e $j: $((SECONDS - start)) s"
done
