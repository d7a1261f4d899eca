#!/usr/bin/env bash
# npm-publish.sh DIST VERSION OUT [--dry-run]: the release's npm step. npm.mjs
# builds the launcher and one package per platform DIST (a goreleaser dist
# folder) holds into OUT; the platform packages are published first and the
# launcher last, so the launcher never names a package that is not there.
# Published with provenance and public access; a version with a - suffix
# goes to the dist-tag next, not latest. The release workflow runs it with
# the npm credential; the dry run with --dry-run, which needs none: npm says
# it is not logged in, and any other warning (a field npm would correct or
# drop) fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ $# -lt 3 ] || [ $# -gt 4 ] || [ "${4:---dry-run}" != --dry-run ]; then
	echo "usage: npm-publish.sh DIST VERSION OUT [--dry-run]"; exit 64
fi
dist=$1 version=${2#v} out=$3 dry=${4:-}

node scripts/release/npm.mjs --version "$version" --out "$out" --dist "$dist" >/dev/null
tag=latest
case $version in *-*) tag=next ;; esac
pkgs=()
for d in "$out"/*/; do
	[ "$(basename "$d")" = pdpp-mcp ] || pkgs+=("${d%/}")
done
[ ${#pkgs[@]} -gt 0 ] || { echo "npm-publish: npm.mjs made no platform package from $dist"; exit 1; }
pkgs+=("$out/pdpp-mcp")

log=$(mktemp)
trap 'rm -f "$log"' EXIT
for d in "${pkgs[@]}"; do
	if [ -z "$dry" ]; then
		npm publish --provenance --access public --tag "$tag" "$d"
		continue
	fi
	npm publish --dry-run --provenance --access public --tag "$tag" "$d" >"$log" 2>&1 ||
		{ echo "npm-publish: npm publish --dry-run $d failed:"; cat "$log"; exit 1; }
	if grep -i 'warn' "$log" | grep -qv 'requires you to be logged in'; then
		echo "npm-publish: npm publish --dry-run $d warns:"; grep -i warn "$log"; exit 1
	fi
	grep -q '^+ ' "$log" || { echo "npm-publish: npm publish --dry-run $d named no package"; cat "$log"; exit 1; }
	echo "npm-publish: $(grep '^+ ' "$log") would publish (dist-tag $tag)"
done
