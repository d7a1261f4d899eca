#!/usr/bin/env bash
# ci.sh: the shipping checks .ci/run runs once bin/ holds the static
# binaries. Costs measured on the 2-core machine are in the comments; the
# whole script took 132 s wall (81 s user + 9 s sys) with warm caches, and
# .ci/run with it 413 s wall (merged with main, conformance included); with
# the release check's fallback path, 111 s wall (47 s user + 12 s sys) warm.
# With the release workflow check, podman and the bundle's Desktop command
# lines added: 61 s user + 8 s sys warm on the fallback path (343 s wall on
# a machine loaded ~9 times over by other jobs).
set -euo pipefail
cd "$(dirname "$0")/../.."

# The MCP Registry entry is checked by go test in .ci/run. Each step below
# reuses bin/pdpp-mcp; measured on the 2-core machine with warm caches:
# manifests ~2 s (cold, first download and compile of k8s.io/api: ~100 s),
# npm ~30 s (+~5 CPU s for npm publish --dry-run of both packages and the
# missing-platform-package case), image ~9 s (+~8 s wall, ~2 CPU s, for the
# podman runs; installing podman and runc with apt-get once: ~60 s), bundle
# ~10 s (+~2 CPU s for the three Claude Desktop command lines; +~20 s to
# install the bundle tool).
(cd deploy/kubernetes && go test ./...)
# The release workflow: actionlint and the pins it shares with these checks
# (<1 s warm; building actionlint once ~50 s wall, ~10 CPU s).
bash scripts/release/workflow-check.sh
bash scripts/release/npm-test.sh bin/pdpp-mcp
bash scripts/release/image-test.sh bin/pdpp-mcp
bash scripts/release/mcpb.sh --check bin/pdpp-mcp

# Three hosted replicas behind HAProxy, one killed mid-run: every call must
# be answered (~8 s; installing HAProxy on a new machine ~30 s more).
bash scripts/scaleout/run.sh -calls 4000

# The release configuration and a two-target snapshot (linux/amd64 +
# darwin/arm64, archives, checksums), always. With check.sh's cached
# goreleaser (or PDPP_MCP_RELEASE_CHECK=1, which builds it: ~575 CPU seconds,
# too much beside the tests in CI's time) goreleaser itself checks and
# builds: ~40 s wall warm, ~150 s with a cold Go build cache. Otherwise
# check-fallback.sh loads the configuration with goreleaser's own strict
# loader, checks it and builds the snapshot with go build: ~18 s wall warm;
# on a fresh machine, after .ci/run's build above, 113 s wall (153 s user +
# 27 s sys, 2 cores shared with another job): ~26 s to fetch and compile
# goreleaser's configuration package, ~70 s to compile for darwin/arm64,
# ~5 s to link linux/amd64 from .ci/run's -trimpath build, ~10 s to pack
# at gzip's default level (best speed, used since, packs in ~3 s).
# The fallback's tests add ~25 s cold, ~4 s warm.
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
