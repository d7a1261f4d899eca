#!/usr/bin/env bash
# run.sh [flags for scripts/scaleout]: three `pdpp-mcp --http` replicas
# behind HAProxy on loopback in front of the RS double, a bounded load run
# and one replica killed part way; exits 1 if any call failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
# A measuring script installs nothing: .ci/run installs HAProxy in CI.
if ! command -v haproxy >/dev/null && [ ! -x /usr/sbin/haproxy ]; then
	echo "scaleout: HAProxy is not installed; install it first (Debian/Ubuntu: apt-get install haproxy)" >&2
	exit 1
fi
hp=$(command -v haproxy || echo /usr/sbin/haproxy)
mkdir -p bin
# The flags of .ci/run's build, so in CI this reuses its compiled packages.
CGO_ENABLED=0 go build -trimpath -o bin/ ./cmd/pdpp-mcp
go run ./scripts/scaleout -bin bin/pdpp-mcp -haproxy "$hp" "$@"
