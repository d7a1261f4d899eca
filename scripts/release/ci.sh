#!/usr/bin/env bash
# ci.sh: the shipping checks .ci/run runs once bin/ holds the static
# binaries, the release dry run last; the checks before it reuse
# bin/pdpp-mcp. What each step costs is measured in docs/release.md ("CI
# cost"), not here, where the numbers would rot.
set -euo pipefail
cd "$(dirname "$0")/../.."

# The MCP Registry entry is checked by go test in .ci/run. Then: the
# Kubernetes manifests parse as the API types they claim; the npm packages
# install offline and serve; the Claude Desktop bundle validates and serves
# with the command lines Claude Desktop builds.
(cd deploy/kubernetes && go test ./...)
# The release workflow: actionlint, and the pins it shares with these checks.
bash scripts/release/workflow-check.sh
bash scripts/release/npm-test.sh bin/pdpp-mcp
bash scripts/release/mcpb.sh --check bin/pdpp-mcp

# Three hosted replicas behind HAProxy, one killed mid-run: every call must
# be answered.
bash scripts/scaleout/run.sh -calls 4000

# The release dry run: the release configuration and a two-target snapshot
# (linux/amd64 + darwin/arm64, archives, checksums), its bundles, npm
# publish --dry-run of its packages, the image built without an engine and
# run (unpacked and in podman), server.json stamped and checked. .ci/run
# has just run the tests (-race), so the dry run's test step is left out.
# The snapshot: where goreleaser is built (check.sh caches it, or
# PDPP_MCP_RELEASE_CHECK=1 asks to build it, which takes too much CPU for
# every CI run), goreleaser itself checks and builds; otherwise
# check-fallback.sh loads the configuration with goreleaser's own strict
# loader, checks it and builds the snapshot with go build.
# PDPP_MCP_RELEASE_CHECK=fallback runs the fallback even where goreleaser is
# built, to try the path CI takes.
bash scripts/release/dry-run.sh --no-test
# The fallback's own tests (go test's vet checks included): broken
# configurations it must reject, a snapshot of a tiny module, and
# .goreleaser.yaml against the project's rules, which goreleaser check does
# not know (static, trimmed, stamped, six targets, sha256), on either path.
(cd scripts/release/configcheck && go test ./...)
