#!/usr/bin/env bash
# ci.sh: the shipping checks .ci/run runs once bin/ holds the static
# binaries; each step reuses bin/pdpp-mcp. What each step costs is measured
# in docs/release.md ("CI cost"), not here, where the numbers would rot.
set -euo pipefail
cd "$(dirname "$0")/../.."

# The MCP Registry entry is checked by go test in .ci/run. Then: the
# Kubernetes manifests parse as the API types they claim; the npm packages
# install offline, serve and pass npm publish --dry-run; the container
# image's config and entrypoint, and the image run in podman; the Claude
# Desktop bundle validates and serves with the command lines Claude Desktop
# builds.
(cd deploy/kubernetes && go test ./...)
# The release workflow: actionlint, and the pins it shares with these checks.
bash scripts/release/workflow-check.sh
bash scripts/release/npm-test.sh bin/pdpp-mcp
bash scripts/release/image-test.sh bin/pdpp-mcp
bash scripts/release/mcpb.sh --check bin/pdpp-mcp

# Three hosted replicas behind HAProxy, one killed mid-run: every call must
# be answered.
bash scripts/scaleout/run.sh -calls 4000

# The release configuration and a two-target snapshot (linux/amd64 +
# darwin/arm64, archives, checksums), always. Where goreleaser is cached by
# check.sh (or PDPP_MCP_RELEASE_CHECK=1 asks to build it, which takes too
# much CPU for every CI run), goreleaser itself checks and builds.
# Otherwise check-fallback.sh loads the configuration with goreleaser's own
# strict loader, checks it and builds the snapshot with go build.
# PDPP_MCP_RELEASE_CHECK=fallback runs the fallback even where goreleaser is
# cached, to try the path CI takes.
gr_cache=${PDPP_MCP_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pdpp-mcp/tools}/goreleaser-v2.15.1/goreleaser
release_check=${PDPP_MCP_RELEASE_CHECK:-}
if [ "$release_check" != fallback ] && { [ -x "$gr_cache" ] || [ "$release_check" = 1 ]; }; then
	echo "release check: with goreleaser v2.15.1 (check.sh)"
	bash scripts/release/check.sh
else
	if [ "$release_check" = fallback ]; then
		echo "release check: without goreleaser (check-fallback.sh), as PDPP_MCP_RELEASE_CHECK=fallback asks"
	else
		echo "release check: without goreleaser (check-fallback.sh): goreleaser v2.15.1 is not cached at $gr_cache; PDPP_MCP_RELEASE_CHECK=1 builds it and runs check.sh"
	fi
	bash scripts/release/check-fallback.sh
fi
# The fallback's own tests (go test's vet checks included): broken
# configurations it must reject, a snapshot of a tiny module, and
# .goreleaser.yaml against the project's rules, which goreleaser check does
# not know (static, trimmed, stamped, six targets, sha256), on either path.
(cd scripts/release/configcheck && go test ./...)
