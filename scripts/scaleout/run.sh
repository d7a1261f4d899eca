#!/usr/bin/env bash
# run.sh [flags for scripts/scaleout]: three `pdpp-mcp --http` replicas
# behind HAProxy on loopback in front of the RS double, a bounded load run
# and one replica killed part way; exits 1 if any call failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v haproxy >/dev/null && [ ! -x /usr/sbin/haproxy ]; then
	apt-get install -y haproxy >/dev/null || { apt-get update >/dev/null && apt-get install -y haproxy >/dev/null; }
fi
hp=$(command -v haproxy || echo /usr/sbin/haproxy)
mkdir -p bin
# The flags of .ci/run's build, so in CI this reuses its compiled packages.
CGO_ENABLED=0 go build -trimpath -o bin/ ./cmd/pdpp-mcp
go run ./scripts/scaleout -bin bin/pdpp-mcp -haproxy "$hp" "$@"
