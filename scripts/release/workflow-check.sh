#!/usr/bin/env bash
# workflow-check.sh: the release workflow (.github/workflows/release.yml)
# and its dry run (release-dry-run.yml) without running them. actionlint
# (pinned, built once into the tools cache from the Go module proxy) checks
# every workflow's syntax, expressions, job and step references and the
# inputs of the actions it knows; a broken copy must fail, so the check can
# fail. Then what actionlint cannot know: the workflow pins the goreleaser
# that check.sh checks with, the mcp-publisher of the vendored registry
# schema, and builds exactly the bundles server.json lists (the stamp step
# refuses a missing one, at release time; this says so before a tag); and
# the dry run takes the release's steps: the same test command, goreleaser,
# image platforms and scripts.
set -euo pipefail
cd "$(dirname "$0")/../.."
wf=.github/workflows/release.yml

version=v1.7.12
cache=${PDPP_MCP_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pdpp-mcp/tools}
al=$cache/actionlint-$version/actionlint
if [ ! -x "$al" ]; then
	echo "workflow-check: building actionlint $version into $(dirname "$al") (once per version)"
	GOBIN=$(dirname "$al") CGO_ENABLED=0 go install "github.com/rhysd/actionlint/cmd/actionlint@$version"
fi
"$al" -version | grep -qx "$version" || { echo "workflow-check: $al is not actionlint $version"; exit 1; }
"$al" .github/workflows/*.yml

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/.github/workflows"
sed 's/steps\.version\.outputs\.version/steps.no_such_step.outputs.version/' "$wf" >"$work/.github/workflows/release.yml"
cmp -s "$wf" "$work/.github/workflows/release.yml" && { echo "workflow-check: could not break the copy"; exit 1; }
if (cd "$work" && "$al" .github/workflows/release.yml >/dev/null 2>&1); then
	echo "workflow-check: actionlint accepted a step reference that does not exist"; exit 1
fi

pin() { sed -n "s/^  $1: \(v[0-9.]*\)\$/\1/p" "$wf"; }
gr=$(sed -n 's/^version=\(v[0-9.]*\)$/\1/p' scripts/release/check.sh)
[ -n "$gr" ] && [ "$(pin GORELEASER_VERSION)" = "$gr" ] ||
	{ echo "workflow-check: $wf pins goreleaser '$(pin GORELEASER_VERSION)', check.sh checks with '$gr'"; exit 1; }
pub=$(sed -n 's/.*`github.com\/modelcontextprotocol\/registry` \(v[0-9.]*\).*/\1/p' packaging/registry/README.md)
[ -n "$pub" ] && [ "$(pin MCP_PUBLISHER_VERSION)" = "$pub" ] ||
	{ echo "workflow-check: $wf pins mcp-publisher '$(pin MCP_PUBLISHER_VERSION)', the vendored schema is from '$pub'"; exit 1; }
grep -q 'scripts/release/bundles.sh dist "$VERSION" dist/mcpb$' "$wf" ||
	{ echo "workflow-check: $wf does not build the default bundles with bundles.sh"; exit 1; }
built=$(sed -n 's/^\[ .* \] || targets=(\(.*\))$/\1/p' scripts/release/bundles.sh | tr ' ' '\n' | sort)
listed=$(sed -n 's/.*"identifier": "https:.*_\([a-z]*_[a-z0-9]*\)\.mcpb".*/\1/p' packaging/registry/server.json | sort)
[ -n "$built" ] && [ "$built" = "$listed" ] ||
	{ echo "workflow-check: bundles.sh builds [$(echo $built)], server.json lists [$(echo $listed)]"; exit 1; }
dry=.github/workflows/release-dry-run.yml
drypin() { sed -n "s/^  $1: \(v[0-9.]*\)\$/\1/p" "$dry"; }
[ "$(drypin GORELEASER_VERSION)" = "$gr" ] ||
	{ echo "workflow-check: $dry pins goreleaser '$(drypin GORELEASER_VERSION)', release.yml '$gr'"; exit 1; }
for f in "$wf" "$dry"; do
	grep -q '^        run: go vet ./... && go test ./...$' "$f" ||
		{ echo "workflow-check: $f lacks the release's test step (go vet ./... && go test ./...)"; exit 1; }
	grep -q '^          platforms: linux/amd64,linux/arm64$' "$f" ||
		{ echo "workflow-check: $f does not build the image for linux/amd64 and linux/arm64"; exit 1; }
done
grep -q 'bash scripts/release/npm-publish.sh dist "$VERSION" build/npm$' "$wf" ||
	{ echo "workflow-check: $wf does not publish npm with npm-publish.sh"; exit 1; }
grep -q 'args: release --clean$' "$wf" && grep -q 'args: release --snapshot --clean$' "$dry" ||
	{ echo "workflow-check: $wf must run goreleaser release --clean and $dry release --snapshot --clean"; exit 1; }
grep -q 'bash scripts/release/dry-run.sh --dist dist --no-test --no-image --online$' "$dry" ||
	{ echo "workflow-check: $dry does not run dry-run.sh on goreleaser's dist"; exit 1; }
echo "workflow-check: actionlint $version passes; goreleaser $gr, mcp-publisher $pub and $(echo "$built" | wc -l) bundles agree; the dry run takes the release's steps"
