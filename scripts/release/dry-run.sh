#!/usr/bin/env bash
# dry-run.sh [--dist DIR] [--no-test] [--no-image] [--online]: the release
# workflow's steps on a clone of what is committed, publishing nothing:
#   1. the workflow's test step, go vet ./... && go test ./...;
#   2. the snapshot: with --dist, the dist folder goreleaser built (the
#      dry-run workflow's, all six targets); else check.sh (goreleaser, when
#      built) or check-fallback.sh builds linux/amd64 and darwin/arm64;
#   3. the Claude Desktop bundle of every target the snapshot holds
#      (bundles.sh);
#   4. the npm packages, `npm publish --dry-run` each (npm-publish.sh);
#   5. the image built without an engine, run unpacked and in podman, from
#      the snapshot's linux/amd64 binaries (image-test.sh);
#   6. server.json stamped from those bundles (serverjson, which checks it
#      against the registry's schema); with --online also
#      `mcp-publisher validate`, which asks the registry over the network.
# A snapshot of fewer targets than the release stamps a copy of server.json
# that lists only the bundles it built, and says so.
# --no-test: the caller has just run the tests (.ci/run runs the stricter
# -race command); --no-image: the caller builds the Dockerfile with an
# engine instead (the dry-run workflow).
# What only a real release can do (publish, push, upload) and the
# credentials it needs are in docs/release.md.
set -euo pipefail

dist= test=1 image=1 online=
while [ $# -gt 0 ]; do
	case $1 in
		--dist) dist=$(cd "${2:?--dist needs a folder}" && pwd); shift ;;
		--no-test) test= ;;
		--no-image) image= ;;
		--online) online=1 ;;
		*) echo "usage: dry-run.sh [--dist DIR] [--no-test] [--no-image] [--online]"; exit 64 ;;
	esac
	shift
done
cd "$(dirname "$0")/../.."

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
step() { echo "dry-run: $*"; }

if [ -n "$test" ]; then
	step "1. test (go vet ./... && go test ./...) on a clone"
	git clone -q . "$work/src"
	(cd "$work/src" && go vet ./... && go test ./...)
else
	step "1. test: run by the caller"
fi

if [ -z "$dist" ]; then
	dist=$work/dist
	gr_version=$(sed -n 's/^version=\(v[0-9.]*\)$/\1/p' scripts/release/check.sh)
	gr_cache=${PDPP_MCP_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pdpp-mcp/tools}/goreleaser-$gr_version/goreleaser
	release_check=${PDPP_MCP_RELEASE_CHECK:-}
	if [ "$release_check" != fallback ] && { [ -n "${GORELEASER:-}" ] || [ -x "$gr_cache" ] || [ "$release_check" = 1 ]; }; then
		step "2. snapshot with goreleaser $gr_version (check.sh)"
		bash scripts/release/check.sh "$dist"
	else
		if [ "$release_check" = fallback ]; then
			step "2. snapshot without goreleaser (check-fallback.sh), as PDPP_MCP_RELEASE_CHECK=fallback asks"
		else
			step "2. snapshot without goreleaser (check-fallback.sh): goreleaser $gr_version is not built at $gr_cache; PDPP_MCP_RELEASE_CHECK=1 builds it"
		fi
		bash scripts/release/check-fallback.sh "$dist"
	fi
else
	step "2. snapshot: $dist"
	bash scripts/release/verify-dist.sh "$dist"
fi
version=$(basename "$(ls "$dist"/pdpp-mcp_*_linux_amd64.tar.gz)" | sed 's/^pdpp-mcp_\(.*\)_linux_amd64\.tar\.gz$/\1/')
[ -n "$version" ] || { echo "dry-run: no linux_amd64 archive in $dist"; exit 1; }
# goreleaser names a build's folder <id>_<os>_<arch>[_<variant>].
targets=$(for d in "$dist"/pdpp-mcp_*_*/; do basename "$d"; done | sed -n 's/^pdpp-mcp_\([a-z]*_[a-z0-9]*\).*/\1/p' | sort -u)
step "snapshot $version of $(echo $targets)"

step "3. bundles"
# shellcheck disable=SC2086 # one target per word
bash scripts/release/bundles.sh "$dist" "$version" "$dist/mcpb" $targets >/dev/null
ls "$dist"/mcpb

step "4. npm packages, npm publish --dry-run"
bash scripts/release/npm-publish.sh "$dist" "$version" "$work/npm" --dry-run

if [ -n "$image" ]; then
	step "5. image (no engine, then podman)"
	mkdir "$work/linux_amd64"
	cp "$dist"/pdpp-mcp_linux_amd64*/pdpp-mcp "$dist"/pdpptest_linux_amd64*/pdpptest "$work/linux_amd64/"
	bash scripts/release/image-test.sh "$work/linux_amd64/pdpp-mcp"
else
	step "5. image: built by the caller"
fi

step "6. server.json"
entry=packaging/registry/server.json
all=$(sed -n 's/.*"identifier": "https:.*_\([a-z]*_[a-z0-9]*\)\.mcpb".*/\1/p' "$entry" | sort)
if [ "$all" != "$targets" ]; then
	# The registry entry lists every release bundle; a smaller snapshot
	# stamps a copy without the bundles it did not build.
	node -e '
		const fs = require("fs");
		const [entry, out, ...built] = process.argv.slice(1);
		const e = JSON.parse(fs.readFileSync(entry, "utf8"));
		e.packages = e.packages.filter((p) => p.registryType !== "mcpb" ||
			built.some((t) => p.identifier.endsWith("_" + t + ".mcpb")));
		fs.writeFileSync(out, JSON.stringify(e, null, 2) + "\n");
	' "$entry" "$work/server.in.json" $targets
	entry=$work/server.in.json
	step "server.json lists bundles for $(echo $all); this snapshot stamps only $(echo $targets)"
fi
go run ./scripts/release/serverjson -in "$entry" -version "$version" -bundles "$dist/mcpb" >"$work/server.json"
step "server.json stamped for $version and valid against the registry schema"
if [ -n "$online" ]; then
	pub=$(sed -n 's/^  MCP_PUBLISHER_VERSION: \(v[0-9.]*\)$/\1/p' .github/workflows/release.yml)
	GOBIN="$work/bin" go install "github.com/modelcontextprotocol/registry/cmd/publisher@$pub"
	"$work/bin/publisher" validate "$work/server.json"
else
	step "mcp-publisher validate: not run (it asks the registry over the network; --online runs it)"
fi
step "passed: snapshot $version of $(echo $targets), nothing published"
