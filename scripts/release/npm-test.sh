#!/usr/bin/env bash
# npm-test.sh [BINARY]: build the npm packages for this machine's platform,
# `npm pack` each one, install the tarballs into an empty folder with the
# registry out of reach (--offline), and check that `npx pdpp-mcp --demo`
# answers initialize and a tool call, that exit codes and signals pass
# through the launcher, and that a missing platform package is explained.
# BINARY defaults to a fresh static build. `npm publish --dry-run` of the
# release's packages is in the release dry run (npm-publish.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

case "$(uname -s)/$(uname -m)" in
	Linux/x86_64) target=linux/amd64 ;;
	Linux/aarch64) target=linux/arm64 ;;
	Darwin/x86_64) target=darwin/amd64 ;;
	Darwin/arm64) target=darwin/arm64 ;;
	*) echo "npm-test: unsupported machine $(uname -sm)"; exit 1 ;;
esac
bin=${1:-}
if [ -z "$bin" ]; then
	bin=$work/pdpp-mcp
	CGO_ENABLED=0 go build -trimpath -ldflags "-X github.com/pdpp-mcp/pdpp-mcp/internal/version.version=0.0.0-npmtest" -o "$bin" ./cmd/pdpp-mcp
fi

node scripts/release/npm.mjs --version 0.0.0-npmtest --out "$work/npm" --bin "$target=$bin" >/dev/null
mkdir "$work/tarballs"
for d in "$work"/npm/*/; do
	(cd "$work/tarballs" && npm pack --silent "$d" >/dev/null)
done
ls "$work/tarballs"

# A fresh folder and a fresh npm cache: nothing can come from the registry.
mkdir "$work/app"
cd "$work/app"
echo '{"name":"npm-test","private":true}' >package.json
npm install --offline --cache "$work/npm-cache" --no-audit --no-fund --loglevel=error "$work"/tarballs/*.tgz
test -x node_modules/.bin/pdpp-mcp
npx --offline --cache "$work/npm-cache" pdpp-mcp --version
node "$OLDPWD/scripts/release/mcp-smoke.mjs" npx --offline --cache "$work/npm-cache" pdpp-mcp --demo

# Exit codes pass through: a usage error is 64 from the binary and the launcher.
set +e
npx --offline --cache "$work/npm-cache" pdpp-mcp --no-such-flag 2>/dev/null
code=$?
set -e
[ "$code" -eq 64 ] || { echo "npm-test: usage error exited $code through the launcher, want 64"; exit 1; }

# Signals pass through: SIGTERM to the launcher reaches the server, which
# stops cleanly (exit 0), and no server process is left behind.
# stdin is a FIFO held open by this script, so the server keeps serving
# until the signal and wait has no other process of a pipeline to wait for.
mkfifo "$work/stdin"
node_modules/.bin/pdpp-mcp --demo <"$work/stdin" >/dev/null 2>"$work/sig.log" &
launcher=$!
exec 7>"$work/stdin"
for _ in $(seq 1 100); do
	grep -q 'demo:' "$work/sig.log" && break
	sleep 0.1
done
grep -q 'demo:' "$work/sig.log" || { echo "npm-test: demo did not start"; cat "$work/sig.log"; exit 1; }
server=$(pgrep -P "$launcher" || true)
[ -n "$server" ] || { echo "npm-test: launcher has no child"; exit 1; }
kill -TERM "$launcher"
set +e
wait "$launcher"
code=$?
set -e
exec 7>&- # the stdin holder opened above
[ "$code" -eq 0 ] || { echo "npm-test: SIGTERM through the launcher exited $code, want 0"; cat "$work/sig.log"; exit 1; }
if kill -0 "$server" 2>/dev/null; then echo "npm-test: the server outlived the launcher"; exit 1; fi
# Without its platform package (installed with --omit=optional) the
# launcher names the package, the platform, node_modules and the causes.
mkdir "$work/no-optional"
cd "$work/no-optional"
echo '{"name":"npm-test-no-optional","private":true}' >package.json
npm install --offline --cache "$work/npm-cache" --no-audit --no-fund --loglevel=error --omit=optional "$work"/tarballs/pdpp-mcp-0.0.0-npmtest.tgz
if [ -d node_modules/@pdpp-mcp ]; then echo "npm-test: --omit=optional installed a platform package"; exit 1; fi
set +e
node_modules/.bin/pdpp-mcp --version 2>"$work/missing.log" >/dev/null
code=$?
set -e
[ "$code" -eq 1 ] || { echo "npm-test: a missing platform package exited $code, want 1"; cat "$work/missing.log"; exit 1; }
node_arch=$(node -p 'process.platform + " " + process.arch')
for want in "@pdpp-mcp/${node_arch/ /-}@0.0.0-npmtest" "for $node_arch" "not in node_modules" "--omit=optional" "--no-optional" "download failed" "os/cpu do not match"; do
	grep -qF -- "$want" "$work/missing.log" || { echo "npm-test: the missing-package message lacks \"$want\":"; cat "$work/missing.log"; exit 1; }
done
echo "npm-test: npx pdpp-mcp answers; exit codes and SIGTERM pass through the launcher; a missing platform package is explained"
