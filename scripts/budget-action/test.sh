#!/usr/bin/env bash
# The GitHub Action's steps (action.yml, scripts/budget-action) run outside
# GitHub with the variables the runner would set: the release download
# against a local fake of the release (a curl on PATH that serves files
# from a directory), refusing an archive whose checksum is wrong and
# falling back to a build when there is no release; the build from source;
# then the budget within budget (exit 0), over a limit (exit 3) and on a
# server that cannot start (exit 1), each with its job summary and
# outputs. actionlint checks action.yml through .github/workflows/budget.yml
# (scripts/release/workflow-check.sh).
#
#   scripts/budget-action/test.sh        # ~15 s warm
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "budget-action test: $*" >&2; exit 1; }

export GITHUB_ACTION_PATH="$root"
fresh() { # a new runner: temp dir, outputs, PATH file, summary
	rm -rf "$tmp/runner"
	mkdir -p "$tmp/runner/temp"
	export RUNNER_TEMP="$tmp/runner/temp" GITHUB_OUTPUT="$tmp/runner/output" GITHUB_PATH="$tmp/runner/path" GITHUB_STEP_SUMMARY="$tmp/runner/summary"
	: >"$GITHUB_OUTPUT"
	: >"$GITHUB_PATH"
	: >"$GITHUB_STEP_SUMMARY"
}

# A release of v9.9.9 in a directory, and a curl that serves it.
case "$(uname -m)" in x86_64 | amd64) arch=amd64 ;; *) arch=arm64 ;; esac
rel="$tmp/release/v9.9.9"
mkdir -p "$rel" "$tmp/pkg" "$tmp/fakebin"
printf '#!/bin/sh\necho "pdpp-mcp-budget version 9.9.9"\n' >"$tmp/pkg/pdpp-mcp-budget"
chmod +x "$tmp/pkg/pdpp-mcp-budget"
archive="pdpp-mcp_9.9.9_linux_${arch}.tar.gz"
tar -czf "$rel/$archive" -C "$tmp/pkg" pdpp-mcp-budget
(cd "$rel" && sha256sum "$archive" >checksums.txt)
cat >"$tmp/fakebin/curl" <<FAKE
#!/usr/bin/env bash
# curl -fsSL --retry 3 -o FILE URL: URL's last two parts, from $tmp/release.
out=; for a in "\$@"; do case "\$prev" in -o) out=\$a ;; esac; prev=\$a; url=\$a; done
f="$tmp/release/\$(basename "\$(dirname "\$url")")/\$(basename "\$url")"
[ -f "\$f" ] || exit 22
cp "\$f" "\$out"
FAKE
chmod +x "$tmp/fakebin/curl"

if [ "$(uname -s)" = Linux ]; then
	fresh
	PATH="$tmp/fakebin:$PATH" INPUT_VERSION=v9.9.9 ACTION_REPOSITORY=pdpp-mcp/pdpp-mcp bash "$here/install.sh" download >/dev/null
	grep -qx build=false "$GITHUB_OUTPUT" || fail "the release was not installed"
	[ "$("$(cat "$GITHUB_PATH")/pdpp-mcp-budget" --version)" = "pdpp-mcp-budget version 9.9.9" ] || fail "the installed binary is not the release's"

	fresh
	printf 'x' >>"$rel/$archive" # the archive no longer matches checksums.txt
	if PATH="$tmp/fakebin:$PATH" INPUT_VERSION=v9.9.9 ACTION_REPOSITORY=pdpp-mcp/pdpp-mcp bash "$here/install.sh" download >"$tmp/log" 2>&1; then
		fail "an archive with the wrong checksum was installed"
	fi
	grep -q '^::error title=MCP budget::pdpp-mcp_9.9.9_linux_.*does not match the checksum' "$tmp/log" || fail "no checksum error: $(cat "$tmp/log")"
	[ ! -e "$RUNNER_TEMP/pdpp-mcp-budget/bin/pdpp-mcp-budget" ] || fail "the refused binary was copied"
fi

# No release for the ref (a branch, or the missing v1.0.0): build instead.
for ref in main v1.0.0; do
	fresh
	PATH="$tmp/fakebin:$PATH" ACTION_REF=$ref ACTION_REPOSITORY=pdpp-mcp/pdpp-mcp bash "$here/install.sh" download >/dev/null
	grep -qx build=true "$GITHUB_OUTPUT" || fail "ref $ref: no fallback to a build"
done
bash "$here/install.sh" build >/dev/null
# Kept outside the runner's temp directory, which each run below starts anew.
mkdir -p "$tmp/bin"
cp "$(cat "$GITHUB_PATH")/pdpp-mcp-budget" "$tmp/bin/"
export PATH="$tmp/bin:$PATH"

cd "$root"
printf 'schema {}\n' >"$tmp/calls.probe"
fresh
INPUT_BUDGET=budget.json INPUT_SCENARIO="$tmp/calls.probe" bash "$here/run.sh" >"$tmp/log" 2>&1 || fail "within budget: $(cat "$tmp/log")"
grep -qx 'exit-code=0' "$GITHUB_OUTPUT" || fail "within budget: outputs $(cat "$GITHUB_OUTPUT")"
grep -q '^## MCP budget: `pdpp-mcp`$' "$GITHUB_STEP_SUMMARY" || fail "no summary heading"
grep -q '^| \*\*tools array\*\* (6) |' "$GITHUB_STEP_SUMMARY" || fail "no tools table in the summary"
grep -q '^All [0-9]* checks passed.$' "$GITHUB_STEP_SUMMARY" || fail "no verdict in the summary"

fresh
set +e
INPUT_BUDGET=budget.json INPUT_SCENARIO="$tmp/calls.probe" INPUT_LIMITS=$'  tools_list.max_bytes=1000  \n\n' bash "$here/run.sh" >"$tmp/log" 2>&1
code=$?
set -e
[ "$code" = 3 ] || fail "over a limit: exit $code: $(cat "$tmp/log")"
grep -q '^::error title=MCP budget::over budget' "$tmp/log" || fail "over a limit: no error annotation"
grep -q '^- `tools_list.max_bytes`: tools/list tools array: .* shrink the largest tools: ' "$GITHUB_STEP_SUMMARY" || fail "over a limit: the summary does not say what to shrink"
grep -qx 'exit-code=3' "$GITHUB_OUTPUT" || fail "over a limit: outputs $(cat "$GITHUB_OUTPUT")"

fresh
set +e
INPUT_SERVER='no-such-mcp-server --stdio' bash "$here/run.sh" >"$tmp/log" 2>&1
code=$?
set -e
[ "$code" = 1 ] || fail "unstartable server: exit $code"
grep -q '^The server could not be measured (exit 1):$' "$GITHUB_STEP_SUMMARY" || fail "unstartable server: summary $(cat "$GITHUB_STEP_SUMMARY")"
grep -q 'start --server no-such-mcp-server' "$GITHUB_STEP_SUMMARY" || fail "unstartable server: no reason in the summary"
echo "budget-action: download, checksum refusal, build fallback, and exits 0, 3 and 1 with their summaries"
