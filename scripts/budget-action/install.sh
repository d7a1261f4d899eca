#!/usr/bin/env bash
# Installs pdpp-mcp-budget for the GitHub Action (action.yml) into
# $RUNNER_TEMP/pdpp-mcp-budget and puts it on the job's PATH.
#
#   install.sh download   the release archive named by INPUT_VERSION, or by
#                         the action's ref (ACTION_REF) when that is a tag,
#                         from ACTION_REPOSITORY's releases, checked against
#                         the release's checksums.txt; when there is none,
#                         sets the step output build=true
#   install.sh build      go build from the action's own source
#                         ($GITHUB_ACTION_PATH, the ref the workflow named)
set -euo pipefail
bindir="${RUNNER_TEMP:?}/pdpp-mcp-budget/bin"
mkdir -p "$bindir"
src="${GITHUB_ACTION_PATH:?}"

case "${1:-}" in
download)
	version="${INPUT_VERSION:-}"
	if [ -z "$version" ] && [[ "${ACTION_REF:-}" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
		version="$ACTION_REF"
	fi
	if [ -z "$version" ] || [ -z "${ACTION_REPOSITORY:-}" ]; then
		echo "pdpp-mcp-budget: no release named (ref '${ACTION_REF:-}'); building from the action's source"
		echo "build=true" >>"$GITHUB_OUTPUT"
		exit 0
	fi
	case "$(uname -s)" in Linux) os=linux ;; Darwin) os=darwin ;; *) os=windows ;; esac
	case "$(uname -m)" in x86_64 | amd64) arch=amd64 ;; arm64 | aarch64) arch=arm64 ;; *) arch=unknown ;; esac
	ext=tar.gz
	[ "$os" = windows ] && ext=zip
	archive="pdpp-mcp_${version#v}_${os}_${arch}.$ext"
	base="https://github.com/$ACTION_REPOSITORY/releases/download/$version"
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	if ! curl -fsSL --retry 3 -o "$work/$archive" "$base/$archive" || ! curl -fsSL --retry 3 -o "$work/checksums.txt" "$base/checksums.txt"; then
		echo "pdpp-mcp-budget: no release archive $archive at $base; building from the action's source"
		echo "build=true" >>"$GITHUB_OUTPUT"
		exit 0
	fi
	# A download that does not match the release's checksum is refused,
	# never run.
	want=$(awk -v f="$archive" '$2 == f {print $1}' "$work/checksums.txt")
	got=$(sha256sum "$work/$archive" 2>/dev/null | cut -d' ' -f1 || shasum -a 256 "$work/$archive" | cut -d' ' -f1)
	if [ -z "$want" ] || [ "$want" != "$got" ]; then
		echo "::error title=MCP budget::$archive does not match the checksum in the release's checksums.txt"
		exit 1
	fi
	if [ "$ext" = zip ]; then
		unzip -q -o "$work/$archive" -d "$work/x"
	else
		mkdir -p "$work/x" && tar -xzf "$work/$archive" -C "$work/x"
	fi
	cp "$work/x/pdpp-mcp-budget"* "$bindir/"
	echo "build=false" >>"$GITHUB_OUTPUT"
	;;
build)
	(cd "$src" && CGO_ENABLED=0 go build -trimpath -o "$bindir/" ./cmd/pdpp-mcp-budget)
	;;
*)
	echo "usage: install.sh download|build" >&2
	exit 64
	;;
esac
echo "$bindir" >>"$GITHUB_PATH"
"$bindir/pdpp-mcp-budget" --version
