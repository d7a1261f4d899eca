#!/usr/bin/env bash
# Runs pdpp-mcp-budget for the GitHub Action (action.yml): the INPUT_*
# variables become flags, the Markdown report goes to the job summary and
# the log, and the job fails on any exit but 0, with exit 3 (over budget or
# grown past the baseline) said as such. Inputs arrive through the
# environment, never pasted into the script, so no input can run as shell.
set -euo pipefail

# trim drops the blanks around a line of a multi-line input.
trim() {
	local s="$1"
	s="${s#"${s%%[![:space:]]*}"}"
	printf '%s' "${s%"${s##*[![:space:]]}"}"
}

args=()
[ -n "${INPUT_SERVER:-}" ] && args+=(--server "$INPUT_SERVER")
[ -n "${INPUT_URL:-}" ] && args+=(--url "$INPUT_URL")
[ -n "${INPUT_BEARER_ENV:-}" ] && args+=(--bearer-env "$INPUT_BEARER_ENV")
while IFS= read -r line; do
	line=$(trim "$line")
	[ -n "$line" ] && args+=(--header "$line")
done <<<"${INPUT_HEADERS:-}"
while IFS= read -r line; do
	line=$(trim "$line")
	[ -n "$line" ] && args+=(--limit "$line")
done <<<"${INPUT_LIMITS:-}"
[ -n "${INPUT_BUDGET:-}" ] && args+=(--budget "$INPUT_BUDGET")
[ -n "${INPUT_SCENARIO:-}" ] && args+=(--scenario "$INPUT_SCENARIO")
if [ -n "${INPUT_BASELINE:-}" ]; then
	args+=(--baseline "$INPUT_BASELINE" --max-growth "${INPUT_MAX_GROWTH:-0}")
fi
[ -n "${INPUT_WRITE_BASELINE:-}" ] && args+=(--write-baseline "$INPUT_WRITE_BASELINE")
[ -n "${INPUT_TIMEOUT:-}" ] && args+=(--timeout "$INPUT_TIMEOUT")

target="pdpp-mcp"
[ -n "${INPUT_SERVER:-}" ] && target="$INPUT_SERVER"
[ -n "${INPUT_URL:-}" ] && target="$INPUT_URL"

out="${RUNNER_TEMP:?}/pdpp-mcp-budget"
mkdir -p "$out"
report="$out/report.md"
errors="$out/stderr.txt"
set +e
pdpp-mcp-budget "${args[@]}" --format markdown >"$report" 2>"$errors"
code=$?
set -e

{
	printf '## MCP budget: `%s`\n\n' "${target//\`/\'}"
	if [ -s "$report" ]; then
		cat "$report"
	else
		printf 'The server could not be measured (exit %d):\n\n~~~~\n%s\n~~~~\n' "$code" "$(cat "$errors")"
	fi
} >>"${GITHUB_STEP_SUMMARY:?}"
cat "$report"
cat "$errors" >&2
{
	echo "exit-code=$code"
	echo "report=$report"
} >>"${GITHUB_OUTPUT:?}"

case "$code" in
0) ;;
3)
	echo "::error title=MCP budget::over budget, a check failed, or grown past the baseline; the job summary has the report"
	exit 3
	;;
*)
	echo "::error title=MCP budget::pdpp-mcp-budget exited $code: $(head -n 1 "$errors")"
	exit "$code"
	;;
esac
